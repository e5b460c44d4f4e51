package store

import (
	"strings"

	"github.com/brokerlab/brokerlab/engine/record"
)

// TagFilter is RocketMQ's tag subscription (ExpressionMessageFilter with
// ExpressionType TAG): "*" or "" matches everything, otherwise
// "TagA || TagB" matches units whose tags code is the Java hash code of one
// of the tags. Like RocketMQ it compares hashes only; the client re-checks the
// tag strings. A TagFilter is immutable and safe for concurrent use.
type TagFilter struct {
	all   bool
	codes map[int32]struct{}
	tags  []string
}

// NewTagFilter parses a subscription expression.
func NewTagFilter(expression string) *TagFilter {
	f := &TagFilter{codes: map[int32]struct{}{}}
	expression = strings.TrimSpace(expression)
	if expression == "" || expression == "*" {
		f.all = true
		return f
	}
	for _, t := range strings.Split(expression, "||") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		f.tags = append(f.tags, t)
		f.codes[record.JavaStringHash(t)] = struct{}{}
	}
	if len(f.tags) == 0 {
		f.all = true
	}
	return f
}

// Tags returns the tags of the expression (nil for "*").
func (f *TagFilter) Tags() []string { return f.tags }

// MatchesConsumeQueue compares the unit's tags code (as an int, the way the
// subscription's code set holds it) with the expression's hash codes.
func (f *TagFilter) MatchesConsumeQueue(tagsCode int64) bool {
	if f == nil || f.all {
		return true
	}
	_, ok := f.codes[int32(tagsCode)]
	return ok
}

// MatchesCommitLog is true: tags are decided on the consume queue.
func (f *TagFilter) MatchesCommitLog([]byte) bool { return true }

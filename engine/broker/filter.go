package broker

import (
	"strings"

	"github.com/brokerlab/brokerlab/engine/record"
)

// Expression types of a subscription.
const (
	ExpressionTag   = "TAG"
	ExpressionSQL92 = "SQL92"
)

// TagFilter matches consume-queue units by the hash codes of a TAG
// subscription's tags (RocketMQ's DefaultMessageFilter). Like RocketMQ it
// compares hash codes only; clients re-check the tag strings. Immutable.
type TagFilter struct {
	codes map[int32]struct{}
}

// ParseTagExpression builds the filter of a TAG expression: "tagA || tagB".
// "" and "*" subscribe to everything and give a nil filter.
func ParseTagExpression(expr string) *TagFilter {
	expr = strings.TrimSpace(expr)
	if expr == "" || expr == "*" {
		return nil
	}
	f := &TagFilter{codes: make(map[int32]struct{})}
	for _, tag := range strings.Split(expr, "||") {
		if tag = strings.TrimSpace(tag); tag != "" {
			f.codes[record.JavaStringHash(tag)] = struct{}{}
		}
	}
	if len(f.codes) == 0 {
		return nil
	}
	return f
}

// MatchTagsCode implements MessageFilter: the unit's tags code (the sign
// extended String.hashCode of its TAGS) is one of the subscribed tags'.
func (f *TagFilter) MatchTagsCode(tagsCode int64) bool {
	if f == nil {
		return true
	}
	_, ok := f.codes[int32(tagsCode)]
	return ok
}

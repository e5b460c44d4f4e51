// Package msgfilter is the broker's message filters, in the shape of
// RocketMQ's DefaultMessageFilter and ExpressionMessageFilter: a TAG
// subscription matches consume-queue units by the hash codes of its tags
// (TagFilter); a SQL92 subscription passes every unit and decides on the
// record's properties (SQLFilter, evaluated by engine/filter). Compile
// builds either from a subscription's expression. Filters are immutable and
// safe for concurrent use; compiled SQL92 expressions are cached by text
// (under a mutex). It is not the choice of a pull's filter (the broker's
// pull path) nor the store's use of it (engine/store).
package msgfilter

import (
	"fmt"
	"strings"
	"sync"

	"github.com/brokerlab/brokerlab/engine/filter"
	"github.com/brokerlab/brokerlab/engine/record"
)

// Expression types of a subscription.
const (
	ExpressionTag   = "TAG"
	ExpressionSQL92 = "SQL92"
)

// Filter decides from a consume-queue unit's tags code whether a message
// may match (the broker's MessageFilter).
type Filter interface {
	MatchTagsCode(tagsCode int64) bool
}

// SQLFilter is a SQL92 subscription's filter (ExpressionMessageFilter
// without the consume-queue bloom filter): every unit passes the tags-code
// test and the record's properties decide. Immutable.
type SQLFilter struct{ expr *filter.Expr }

// sqlCacheSize bounds the compiled expressions kept (Java's
// SelectorParser caches 100); heartbeats and pulls repeat a handful.
const sqlCacheSize = 256

// sqlCache maps expression text to its compiled filter (immutable, so
// shared). When full it is emptied.
var sqlCache = struct {
	sync.Mutex
	m map[string]*SQLFilter
}{m: make(map[string]*SQLFilter)}

// CompileSQLFilter compiles a SQL92 expression; errors wrap
// filter.ErrSyntax. Compiled filters are cached by text.
func CompileSQLFilter(expr string) (*SQLFilter, error) {
	sqlCache.Lock()
	f := sqlCache.m[expr]
	sqlCache.Unlock()
	if f != nil {
		return f, nil
	}
	e, err := filter.Compile(expr)
	if err != nil {
		return nil, err
	}
	f = &SQLFilter{expr: e}
	sqlCache.Lock()
	if len(sqlCache.m) >= sqlCacheSize {
		clear(sqlCache.m)
	}
	sqlCache.m[expr] = f
	sqlCache.Unlock()
	return f, nil
}

// MatchTagsCode implements Filter: the consume queue cannot decide.
func (*SQLFilter) MatchTagsCode(int64) bool { return true }

// MatchRecord implements the broker's RecordFilter: the expression over the record's
// properties is TRUE. A record that does not decode does not match.
func (f *SQLFilter) MatchRecord(rec []byte) bool {
	r, err := record.Decode(rec, false)
	if err != nil {
		return false
	}
	return f.expr.Match(recordProperties(r.Properties))
}

// String returns the expression.
func (f *SQLFilter) String() string { return f.expr.String() }

// recordProperties looks properties up in an encoded properties string.
type recordProperties []byte

func (p recordProperties) Property(name string) (string, bool) {
	v, ok := record.PropertyBytes(p, name)
	return string(v), ok
}

// Compile builds the consume-queue filter of a subscription: nil for
// everything, a *TagFilter or a *SQLFilter. An unknown expression type or
// a SQL92 expression that does not compile is an error.
func Compile(expr, typ string) (Filter, error) {
	switch typ {
	case "", ExpressionTag:
		if f := ParseTagExpression(expr); f != nil {
			return f, nil
		}
		return nil, nil
	case ExpressionSQL92:
		f, err := CompileSQLFilter(expr)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	return nil, fmt.Errorf("msgfilter: expression type %s is not supported", typ)
}

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

// MatchTagsCode implements Filter: the unit's tags code (the sign
// extended String.hashCode of its TAGS) is one of the subscribed tags'.
func (f *TagFilter) MatchTagsCode(tagsCode int64) bool {
	if f == nil {
		return true
	}
	_, ok := f.codes[int32(tagsCode)]
	return ok
}

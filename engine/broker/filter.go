package broker

import (
	"fmt"
	"strings"
	"sync"

	"github.com/brokerlab/brokerlab/engine/broker/clients"

	"github.com/brokerlab/brokerlab/engine/filter"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// Expression types of a subscription.
const (
	ExpressionTag   = clients.ExpressionTag
	ExpressionSQL92 = "SQL92"
)

// RecordFilter is a MessageFilter that also decides on the stored record
// (RocketMQ's isMatchedByCommitLog): stores read each unit's record and
// call MatchRecord on those MatchTagsCode accepted. rec is one whole
// commit-log record, valid only during the call.
type RecordFilter interface {
	MessageFilter
	MatchRecord(rec []byte) bool
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

// MatchTagsCode implements MessageFilter: the consume queue cannot decide.
func (*SQLFilter) MatchTagsCode(int64) bool { return true }

// MatchRecord implements RecordFilter: the expression over the record's
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

// compileFilter builds the consume-queue filter of a subscription: nil
// for everything, a *TagFilter or a *SQLFilter. An unknown expression type
// or a SQL92 expression that does not compile is an error.
// compileClientFilter is compileFilter for the client service
// (clients.Deps.CompileFilter).
func compileClientFilter(expr, typ string) (clients.Filter, error) {
	f, err := compileFilter(expr, typ)
	return f, err
}

func compileFilter(expr, typ string) (MessageFilter, error) {
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
	return nil, fmt.Errorf("broker: expression type %s is not supported", typ)
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

// MatchTagsCode implements MessageFilter: the unit's tags code (the sign
// extended String.hashCode of its TAGS) is one of the subscribed tags'.
func (f *TagFilter) MatchTagsCode(tagsCode int64) bool {
	if f == nil {
		return true
	}
	_, ok := f.codes[int32(tagsCode)]
	return ok
}

// Remarks of the filter refusals (PullMessageProcessor, ClientManageProcessor).
const (
	remarkSubscriptionParseFailed = "parse the consumer's subscription failed"
	remarkFilterDataNotExist      = "The broker's consumer filter data is not exist!Your expression may be wrong!"
	remarkPropertyFilterDisabled  = clients.RemarkPropertyFilterDisabled
)

// pullFilter is the filter of a pull, as PullMessageProcessor picks it:
// the subscription in the request when its flag says so (a bad expression
// is SUBSCRIPTION_PARSE_FAILED), else the one the group's heartbeat
// registered (a SQL92 expression that did not compile is
// FILTER_DATA_NOT_EXIST), else none (this broker serves pulls of groups it
// has no heartbeat from; the Go client filters by tag again anyway).
// SQL92 needs EnablePropertyFilter (else SYSTEM_ERROR). A request that
// repeats the registered SQL92 expression reuses its compiled filter.
func (b *Broker) pullFilter(p pullHeader) (MessageFilter, int32, string) {
	var (
		f   MessageFilter
		typ = ExpressionTag
	)
	if p.sysFlag&protocol.PullFlagSubscription != 0 {
		typ = p.expressionType
		if typ == "" {
			typ = ExpressionTag
		}
		sub := b.clients.Subscription(p.group, p.topic)
		if sub != nil && sub.FilterErr == nil && !sub.ClassFilter && sub.ExpressionType == typ && sub.SubString == p.subscription {
			f = sub.Filter
		} else {
			var err error
			if f, err = compileFilter(p.subscription, typ); err != nil {
				return nil, protocol.RespSubscriptionParseFailed, remarkSubscriptionParseFailed
			}
		}
	} else if sub := b.clients.Subscription(p.group, p.topic); sub != nil {
		if sub.ClassFilter {
			return nil, protocol.RespSuccess, ""
		}
		if sub.FilterErr != nil {
			return nil, protocol.RespFilterDataNotExist, remarkFilterDataNotExist
		}
		f, typ = sub.Filter, sub.ExpressionType
	}
	if typ != ExpressionTag && !b.cfg.EnablePropertyFilter {
		return nil, protocol.RespSystemError, remarkPropertyFilterDisabled + typ
	}
	return f, protocol.RespSuccess, ""
}

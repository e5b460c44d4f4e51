package broker

import (
	"github.com/brokerlab/brokerlab/engine/broker/clients"
	"github.com/brokerlab/brokerlab/engine/broker/msgfilter"
	"github.com/brokerlab/brokerlab/engine/protocol"
)

// Expression types of a subscription.
const (
	ExpressionTag   = clients.ExpressionTag
	ExpressionSQL92 = msgfilter.ExpressionSQL92
)

// The message filters, defined by engine/broker/msgfilter.
type (
	TagFilter = msgfilter.TagFilter
	SQLFilter = msgfilter.SQLFilter
)

// ParseTagExpression and CompileSQLFilter build the filter of a TAG and
// of a SQL92 expression (msgfilter).
var (
	ParseTagExpression = msgfilter.ParseTagExpression
	CompileSQLFilter   = msgfilter.CompileSQLFilter
)

// RecordFilter is a MessageFilter that also decides on the stored record
// (RocketMQ's isMatchedByCommitLog): stores read each unit's record and
// call MatchRecord on those MatchTagsCode accepted. rec is one whole
// commit-log record, valid only during the call.
type RecordFilter interface {
	MessageFilter
	MatchRecord(rec []byte) bool
}

// compileFilter builds the consume-queue filter of a subscription
// (msgfilter.Compile): nil for everything, a *TagFilter or a *SQLFilter.
func compileFilter(expr, typ string) (MessageFilter, error) { return msgfilter.Compile(expr, typ) }

// compileClientFilter is compileFilter for the client service
// (clients.Deps.CompileFilter).
func compileClientFilter(expr, typ string) (clients.Filter, error) {
	return msgfilter.Compile(expr, typ)
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
func (b *Broker) pullFilter(p protocol.PullMessageHeader) (MessageFilter, int32, string) {
	var (
		f   MessageFilter
		typ = ExpressionTag
	)
	if p.SysFlag&protocol.PullFlagSubscription != 0 {
		typ = p.ExpressionType
		if typ == "" {
			typ = ExpressionTag
		}
		sub := b.clients.Subscription(p.ConsumerGroup, p.Topic)
		if sub != nil && sub.FilterErr == nil && !sub.ClassFilter && sub.ExpressionType == typ && sub.SubString == p.Subscription {
			f = sub.Filter
		} else {
			var err error
			if f, err = compileFilter(p.Subscription, typ); err != nil {
				return nil, protocol.RespSubscriptionParseFailed, remarkSubscriptionParseFailed
			}
		}
	} else if sub := b.clients.Subscription(p.ConsumerGroup, p.Topic); sub != nil {
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

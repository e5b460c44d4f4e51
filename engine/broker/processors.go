package broker

import (
	"context"
	"fmt"

	"github.com/brokerlab/brokerlab/engine/broker/clients"
	"github.com/brokerlab/brokerlab/engine/broker/meta"
	"github.com/brokerlab/brokerlab/engine/broker/pop"
	"github.com/brokerlab/brokerlab/engine/broker/reply"
	"github.com/brokerlab/brokerlab/engine/broker/txn"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

type handlerFunc func(ctx context.Context, conn *remoting.Conn, req *remoting.Command) (*remoting.Command, error)

// registerProcessors routes every request code to its handler on the
// executor of its class, as BrokerController.registerProcessor does.
func (b *Broker) registerProcessors() {
	s := b.server
	send := s.NewExecutor("send", b.cfg.SendExecutor)
	pull := s.NewExecutor("pull", b.cfg.PullExecutor)
	heartbeat := s.NewExecutor("heartbeat", b.cfg.HeartbeatExecutor)
	clientManage := s.NewExecutor("client-manage", b.cfg.ClientManageExecutor)
	query := s.NewExecutor("query", b.cfg.QueryExecutor)

	for _, code := range []int32{protocol.ReqSendMessage, protocol.ReqSendMessageV2, protocol.ReqSendBatchMessage, protocol.ReqConsumerSendMsgBack} {
		b.handle(code, b.enqueueSend, send)
	}
	b.handle(protocol.ReqRecallMessage, b.recallMessage, send) // delay.go
	b.handle(protocol.ReqPullMessage, b.pullMessage, pull)

	b.handle(protocol.ReqQueryMessage, b.queryMessage, query)
	b.handle(protocol.ReqViewMessageByID, b.viewMessageByID, query)

	// The services register their codes on the same table, behind the
	// same gate.
	table := processorTable{b: b, executors: map[string]*remoting.Executor{
		meta.ClientManageExecutor:  clientManage,
		clients.HeartbeatExecutor:  heartbeat,
		txn.EndTransactionExecutor: b.endTransactionExecutor(),
		pop.PopExecutor:            s.NewExecutor(pop.PopExecutor, b.cfg.PullExecutor),
		pop.AckExecutor:            s.NewExecutor(pop.AckExecutor, b.cfg.ClientManageExecutor),
		reply.Executor:             b.replyExecutor(),
	}}
	b.clients.Register(table) // heartbeats, client list
	b.meta.Register(table)    // offsets and queue locks
	b.txn.Register(table)     // END_TRANSACTION
	b.pop.Register(table)     // POP, ACK, BATCH_ACK, CHANGE_INVISIBLETIME, PEEK, NOTIFICATION, POLLING_INFO
	b.admin.Register(table)   // runtime info, stats, connections, subscription groups, broker config
	b.replies.Register(table) // request-reply

	// Feature processors, each registered from its own file.
	b.registerLitePull() // delay.go: lite pull
}

// RequestCodes lists the request codes the broker serves (every code
// registerProcessors routes to a handler), in increasing order. Safe for
// concurrent use.
func (b *Broker) RequestCodes() []int32 { return b.server.ProcessorCodes() }

// handle registers fn for code behind the readiness gate: before the store
// is open and after shutdown began, requests get SERVICE_NOT_AVAILABLE (a
// code the Go producer retries on another broker).
func (b *Broker) handle(code int32, fn handlerFunc, ex *remoting.Executor) {
	b.server.RegisterProcessor(code, remoting.ProcessorFunc(func(ctx context.Context, conn *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
		if !b.ready.Load() {
			resp := remoting.NewResponse(protocol.RespServiceNotAvailable, "broker is not serving (starting or stopping)")
			if code == protocol.ReqPullMessage || code == protocol.ReqLitePullMessage {
				echoPullOffset(resp, req)
			}
			return resp, nil
		}
		if resp := b.authorize(code, conn, req); resp != nil {
			return resp, nil
		}
		return fn(ctx, conn, req)
	}), ex)
}

// processorTable is the table the services register on (their Table
// interfaces): each code goes through handle, on the executor the service
// names ("" or an unknown name: the default executor).
type processorTable struct {
	b         *Broker
	executors map[string]*remoting.Executor
}

// Handle implements meta.Table and clients.ProcessorTable.
func (t processorTable) Handle(code int32, executor string, fn remoting.ProcessorFunc) {
	t.b.handle(code, handlerFunc(fn), t.executors[executor])
}

// Handlers return (nil, err) for a missing or malformed custom field (a
// *remoting.FieldError) or an undecodable body (remoting.NewBadRequest):
// the remoting layer answers SYSTEM_ERROR with Java's remark ("the custom
// field <topic> is null"), counts it and logs it rate-limited. Handlers
// that reply later use conn.BadRequest for the same answer.

func success() *remoting.Command { return remoting.NewResponse(protocol.RespSuccess, "") }

func responsef(code int32, format string, args ...any) *remoting.Command {
	return remoting.NewResponse(code, fmt.Sprintf(format, args...))
}

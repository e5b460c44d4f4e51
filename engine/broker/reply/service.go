package reply

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Properties of request-reply (MessageConst).
const (
	PropertyCorrelationID = "CORRELATION_ID"
	PropertyReplyToClient = "REPLY_TO_CLIENT"
	PropertyMessageTTL    = "TTL"
	PropertyMessageType   = "MSG_TYPE"
	PropertyPushReplyTime = "PUSH_REPLY_TIME"
	// MessageType is MSG_TYPE of a reply.
	MessageType = "reply"
)

// Executor names the executor the reply codes run on (Java's
// replyMessageExecutor).
const Executor = "reply"

// pushTimeout bounds one PUSH_REPLY_MESSAGE_TO_CLIENT call
// (Broker2Client.callClient: 10 s).
const pushTimeout = 10 * time.Second

// Table is the broker's processor table: Handle routes code to fn on the
// named executor, behind the broker's one ACL and readiness gate.
type Table interface {
	Handle(code int32, executor string, fn remoting.ProcessorFunc)
}

// Deps is what the service needs from the broker.
type Deps struct {
	// StoreReplies stores every reply in its topic after the push
	// (storeReplyMessageEnable).
	StoreReplies bool
	// Refuse answers a send the broker does not take at all (a slave's
	// refusal), nil otherwise.
	Refuse func() *remoting.Command
	// Prepare checks a reply as the send path checks a message, builds it
	// and picks its queue; a non-nil response refuses it.
	Prepare func(conn *remoting.Conn, h protocol.SendMessageHeader, body []byte) (*record.Message, *remoting.Command)
	// Put stores a reply: its offset message id and queue offset, or ""
	// and the store's status when it was not stored.
	Put func(ctx context.Context, m *record.Message) (msgID string, queueOffset int64, status string, err error)
	// ProducerConn is the producer connection of a client id (nil: none).
	ProducerConn func(clientID string) *remoting.Conn
	// BornHost is a connection's peer address; StoreHost the broker's.
	BornHost  func(conn *remoting.Conn) netip.AddrPort
	StoreHost func() netip.AddrPort
	Logger    *slog.Logger
}

// Service serves request-reply. Safe for concurrent use.
type Service struct {
	deps       Deps
	log        *slog.Logger
	requesters requesters
}

// New builds the service.
func New(d Deps) *Service {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Service{deps: d, log: log}
}

// Register routes SEND_REPLY_MESSAGE (324) and SEND_REPLY_MESSAGE_V2 (325)
// to the reply executor.
func (s *Service) Register(t Table) {
	t.Handle(protocol.ReqSendReplyMessage, Executor, s.sendReplyMessage)
	t.Handle(protocol.ReqSendReplyMessageV2, Executor, s.sendReplyMessage)
}

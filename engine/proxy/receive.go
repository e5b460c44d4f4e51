package proxy

import (
	"context"
	"errors"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// ErrInvalidHandle is what a Consumer returns (wrapped or not) for a receipt
// handle that is malformed, expired or already acknowledged.
var ErrInvalidHandle = errors.New("proxy: invalid receipt handle")

// PopRequest asks a Consumer for messages (the POP service's Request).
type PopRequest struct {
	Group, Topic   string
	QueueID        int32 // -1: any readable queue
	MaxMessages    int
	Invisible      time.Duration
	Poll           time.Duration // long-poll budget; 0 answers at once
	FIFO           bool
	ExpressionType string // "TAG" or "SQL92"; "" = all
	Expression     string
	ClientID       string
	// InitMode is where a group new to a queue starts
	// (protocol.ConsumeInitMin/Max); ReceiveMessage asks for MAX, as
	// Java's ReceiveMessageActivity does.
	InitMode int32
}

// PoppedMessage is one message a Consumer leased.
type PoppedMessage struct {
	Record          record.Record
	Handle          string
	DeliveryAttempt int32
}

// Consumer is the broker's POP service as the proxy uses it. Pop returns an
// empty slice and nil after Poll without messages. Implementations are
// safe for concurrent use.
type Consumer interface {
	Pop(ctx context.Context, req PopRequest) ([]PoppedMessage, error)
	Ack(group, topic, handle string) error
	ChangeInvisible(group, topic, handle string, d time.Duration) (newHandle string, err error)
	ToDLQ(group, topic, handle string) error
}

// Receive limits (ProxyConfig defaults).
const (
	maxReceiveBatch    = 32
	minInvisible       = 10 * time.Second
	maxInvisible       = 12 * time.Hour
	maxLongPolling     = 20 * time.Second
	longPollingReserve = time.Second
)

// pollTime is how long a receive or pull may hold, as Java's proxy reckons
// it: the request's long_polling_timeout, or, when the client leaves it
// unset (the Go client v5.1.4 does: its wait is the call's deadline), the
// deadline's remaining time less longPollingReserve; never more than
// maxLongPolling nor past the deadline less the reserve. No field and no
// deadline: no hold.
func pollTime(ctx context.Context, lp *durationpb.Duration) time.Duration {
	dl, hasDeadline := ctx.Deadline()
	var poll time.Duration
	switch {
	case lp != nil:
		poll = lp.AsDuration()
	case hasDeadline:
		poll = time.Until(dl) - longPollingReserve
	}
	poll = min(poll, maxLongPolling)
	if hasDeadline {
		poll = min(poll, time.Until(dl)-longPollingReserve)
	}
	return max(poll, 0)
}

func (s *Server) minInvisible() time.Duration {
	if s.cfg.MinInvisible > 0 {
		return s.cfg.MinInvisible
	}
	return minInvisible
}

func consumerStatus(err error) *v2.Status {
	if errors.Is(err, ErrInvalidHandle) {
		return newStatus(v2.Code_INVALID_RECEIPT_HANDLE, err.Error())
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return newStatus(v2.Code_PROXY_TIMEOUT, err.Error())
	}
	return newStatus(v2.Code_INTERNAL_SERVER_ERROR, err.Error())
}

func (s *Server) consumerAuth(ctx context.Context, group, topic string) error {
	return s.authorize(ctx, protocol.ReqPullMessage, remoting.ExtFields{"consumerGroup": group, "topic": topic}, nil)
}

// ReceiveMessage pops up to batch_size messages, long polling, and streams
// the status (OK or MESSAGE_NOT_FOUND), then the messages.
func (s *Server) ReceiveMessage(req *v2.ReceiveMessageRequest, stream grpc.ServerStreamingServer[v2.ReceiveMessageResponse]) error {
	ctx, cancel := s.callContext(stream.Context())
	defer cancel()
	reply := func(st *v2.Status) error {
		return stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}})
	}
	if s.cfg.Consumer == nil {
		return reply(newStatus(v2.Code_NOT_IMPLEMENTED, "POP consumption is not available"))
	}
	group, topic := req.GetGroup().GetName(), req.GetMessageQueue().GetTopic().GetName()
	if group == "" {
		return reply(newStatus(v2.Code_ILLEGAL_CONSUMER_GROUP, "consumer group is empty"))
	}
	if _, ok := s.topicConfig(topic); !ok {
		return reply(newStatus(v2.Code_TOPIC_NOT_FOUND, "topic "+topic+" not found"))
	}
	batch := req.GetBatchSize()
	if batch <= 0 || batch > maxReceiveBatch {
		return reply(newStatus(v2.Code_BAD_REQUEST, "batch size must be within [1, 32]"))
	}
	invisible := DefaultInvisible
	if !req.GetAutoRenew() || req.InvisibleDuration != nil {
		invisible = req.GetInvisibleDuration().AsDuration()
		if invisible < s.minInvisible() || invisible > maxInvisible {
			return reply(newStatus(v2.Code_ILLEGAL_INVISIBLE_TIME, "the invisible time is out of range"))
		}
	}
	poll := pollTime(ctx, req.LongPollingTimeout)
	if err := s.consumerAuth(ctx, group, topic); err != nil {
		return reply(errStatus(err))
	}
	pr := PopRequest{Group: group, Topic: topic, QueueID: req.GetMessageQueue().GetId(), MaxMessages: int(batch),
		Invisible: invisible, Poll: poll, ClientID: callOf(ctx).clientID, InitMode: protocol.ConsumeInitMax}
	if fe := req.GetFilterExpression(); fe != nil && fe.GetExpression() != "" && fe.GetExpression() != "*" {
		pr.ExpressionType, pr.Expression = "TAG", fe.GetExpression()
		if fe.GetType() == v2.FilterType_SQL {
			pr.ExpressionType = "SQL92"
		}
	}
	var settings *v2.Settings
	if ss := s.sessions.get(pr.ClientID); ss != nil {
		settings = ss.settings.Load()
	}
	pr.FIFO = s.consumeOrderly(group, settings)
	msgs, err := s.cfg.Consumer.Pop(ctx, pr)
	if err != nil {
		return reply(consumerStatus(err))
	}
	if len(msgs) == 0 {
		return reply(newStatus(v2.Code_MESSAGE_NOT_FOUND, "no new message"))
	}
	if req.GetAutoRenew() {
		for _, m := range msgs {
			s.leaseOf(pr.ClientID, group, topic, m, invisible)
		}
	}
	if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_DeliveryTimestamp{DeliveryTimestamp: timestamppb.Now()}}); err != nil {
		return err
	}
	if err := reply(okStatus()); err != nil {
		return err
	}
	for i := range msgs {
		m := toProto(&msgs[i].Record, msgs[i].Handle, msgs[i].DeliveryAttempt)
		m.SystemProperties.InvisibleDuration = req.InvisibleDuration
		if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}); err != nil {
			return err
		}
	}
	return nil
}

// AckMessage acknowledges each entry; the status is the entries' common one
// or MULTIPLE_RESULTS.
func (s *Server) AckMessage(ctx context.Context, req *v2.AckMessageRequest) (*v2.AckMessageResponse, error) {
	if s.cfg.Consumer == nil {
		return &v2.AckMessageResponse{Status: newStatus(v2.Code_NOT_IMPLEMENTED, "POP consumption is not available")}, nil
	}
	group, topic := req.GetGroup().GetName(), req.GetTopic().GetName()
	if err := s.consumerAuth(ctx, group, topic); err != nil {
		return &v2.AckMessageResponse{Status: errStatus(err)}, nil
	}
	var entries []*v2.AckMessageResultEntry
	var st *v2.Status
	for _, e := range req.GetEntries() {
		es := okStatus()
		h := s.leases.take(callOf(ctx).clientID, group, e.GetReceiptHandle())
		if err := s.cfg.Consumer.Ack(group, topic, h); err != nil {
			es = consumerStatus(err)
		}
		entries = append(entries, &v2.AckMessageResultEntry{MessageId: e.GetMessageId(), ReceiptHandle: e.GetReceiptHandle(), Status: es})
		if st == nil {
			st = es
		} else if st.Code != es.Code {
			st = newStatus(v2.Code_MULTIPLE_RESULTS, "")
		}
	}
	if st == nil {
		st = okStatus()
	}
	return &v2.AckMessageResponse{Status: st, Entries: entries}, nil
}

// ChangeInvisibleDuration renews a lease; the answer carries the new handle.
func (s *Server) ChangeInvisibleDuration(ctx context.Context, req *v2.ChangeInvisibleDurationRequest) (*v2.ChangeInvisibleDurationResponse, error) {
	if s.cfg.Consumer == nil {
		return &v2.ChangeInvisibleDurationResponse{Status: newStatus(v2.Code_NOT_IMPLEMENTED, "POP consumption is not available")}, nil
	}
	d := req.GetInvisibleDuration().AsDuration()
	if d < 0 || d > maxInvisible {
		return &v2.ChangeInvisibleDurationResponse{Status: newStatus(v2.Code_ILLEGAL_INVISIBLE_TIME, "the invisible time is out of range")}, nil
	}
	group, topic := req.GetGroup().GetName(), req.GetTopic().GetName()
	if err := s.consumerAuth(ctx, group, topic); err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: errStatus(err)}, nil
	}
	h := s.leases.take(callOf(ctx).clientID, group, req.GetReceiptHandle())
	h, err := s.cfg.Consumer.ChangeInvisible(group, topic, h, d)
	if err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: consumerStatus(err)}, nil
	}
	return &v2.ChangeInvisibleDurationResponse{Status: okStatus(), ReceiptHandle: h}, nil
}

// ForwardMessageToDeadLetterQueue moves a leased message to the group's DLQ.
func (s *Server) ForwardMessageToDeadLetterQueue(ctx context.Context, req *v2.ForwardMessageToDeadLetterQueueRequest) (*v2.ForwardMessageToDeadLetterQueueResponse, error) {
	if s.cfg.Consumer == nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: newStatus(v2.Code_NOT_IMPLEMENTED, "POP consumption is not available")}, nil
	}
	group, topic := req.GetGroup().GetName(), req.GetTopic().GetName()
	if err := s.consumerAuth(ctx, group, topic); err != nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: errStatus(err)}, nil
	}
	h := s.leases.take(callOf(ctx).clientID, group, req.GetReceiptHandle())
	if err := s.cfg.Consumer.ToDLQ(group, topic, h); err != nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: consumerStatus(err)}, nil
	}
	return &v2.ForwardMessageToDeadLetterQueueResponse{Status: okStatus()}, nil
}

package proxy

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// Server-side consumer settings (GrpcClientSettingsManager's defaults).
const (
	receiveBatchSize   = 32
	longPollingTimeout = 30 * time.Second
)

// retryDelays is CustomizedRetryPolicy's default backoff (the delay levels
// from 1 s on).
var retryDelays = []time.Duration{time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute, 5 * time.Minute, 6 * time.Minute,
	7 * time.Minute, 8 * time.Minute, 9 * time.Minute, 10 * time.Minute, 20 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour}

// session is one client's Telemetry stream. send is serialised by mu.
type session struct {
	clientID string
	call     *call
	mu       sync.Mutex
	stream   grpc.BidiStreamingServer[v2.TelemetryCommand, v2.TelemetryCommand]
	settings atomic.Pointer[v2.Settings] // the settings the client last sent
	done     chan struct{}
}

func (ss *session) send(cmd *v2.TelemetryCommand) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.stream.Send(cmd)
}

// producerTopics are the topics a producer publishes to: RocketMQ's proxy
// uses each as the producer group of its transactional messages.
func (ss *session) producerTopics() []string {
	st := ss.settings.Load()
	if st == nil || st.GetClientType() != v2.ClientType_PRODUCER {
		return nil
	}
	var out []string
	for _, t := range st.GetPublishing().GetTopics() {
		out = append(out, t.GetName())
	}
	return out
}

// sessionTable holds the live sessions by client id. Safe for concurrent use.
type sessionTable struct {
	mu   sync.Mutex
	byID map[string]*session
	rr   atomic.Uint32
}

func (t *sessionTable) init() { t.byID = make(map[string]*session) }

func (t *sessionTable) put(ss *session) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.byID[ss.clientID]; old != nil && old != ss {
		close(old.done)
	}
	t.byID[ss.clientID] = ss
}

// remove drops ss unless a newer stream of its client replaced it; it
// reports whether it did.
func (t *sessionTable) remove(ss *session) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID[ss.clientID] != ss {
		return false
	}
	delete(t.byID, ss.clientID)
	close(ss.done)
	return true
}

func (t *sessionTable) get(clientID string) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[clientID]
}

// producerOf picks, round robin, a live producer publishing to topic.
func (t *sessionTable) producerOf(topic string) *session {
	t.mu.Lock()
	var cands []*session
	for _, ss := range t.byID {
		for _, tp := range ss.producerTopics() {
			if tp == topic {
				cands = append(cands, ss)
				break
			}
		}
	}
	t.mu.Unlock()
	if len(cands) == 0 {
		return nil
	}
	return cands[int(t.rr.Add(1))%len(cands)]
}

func (t *sessionTable) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, ss := range t.byID {
		close(ss.done)
		delete(t.byID, id)
	}
}

// Telemetry is a client's session: each Settings it sends is answered with
// the server's Settings; results of commands the server pushed are logged.
func (s *Server) Telemetry(stream grpc.BidiStreamingServer[v2.TelemetryCommand, v2.TelemetryCommand]) error {
	ctx := stream.Context()
	c := callOf(ctx)
	ss := &session{clientID: c.clientID, call: c, stream: stream, done: make(chan struct{})}
	registered := false
	defer func() {
		if registered && s.sessions.remove(ss) {
			s.unregister(context.WithoutCancel(ctx), ss)
		}
	}()
	type recv struct {
		cmd *v2.TelemetryCommand
		err error
	}
	in := make(chan recv)
	go func() { // ends with the stream, at the latest when this handler returns
		for {
			cmd, err := stream.Recv()
			select {
			case in <- recv{cmd, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		var r recv
		select {
		case r = <-in:
		case <-ss.done: // replaced by a newer stream, or the server shuts down
			return nil
		case <-ctx.Done(): // the client went (the reader may have seen it first and left)
			return ctx.Err()
		}
		cmd, err := r.cmd, r.err
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch body := cmd.GetCommand().(type) {
		case *v2.TelemetryCommand_Settings:
			ss.settings.Store(body.Settings)
			if !registered {
				s.sessions.put(ss)
				registered = true
			}
			if body.Settings.GetClientType() == v2.ClientType_PRODUCER {
				s.heartbeatProducer(ctx, ss)
			}
			reply := &v2.TelemetryCommand{Status: okStatus(),
				Command: &v2.TelemetryCommand_Settings{Settings: s.serverSettings(body.Settings)}}
			if err := ss.send(reply); err != nil {
				return err
			}
		case *v2.TelemetryCommand_ThreadStackTrace:
			s.log.Info("client thread stack trace", "client", c.clientID, "nonce", body.ThreadStackTrace.GetNonce(),
				"trace", body.ThreadStackTrace.GetThreadStackTrace())
		case *v2.TelemetryCommand_VerifyMessageResult:
			s.log.Info("client verify message result", "client", c.clientID, "nonce", body.VerifyMessageResult.GetNonce(),
				"status", cmd.GetStatus().GetCode())
		default:
			s.log.Debug("telemetry command ignored", "client", c.clientID)
		}
	}
}

// groupRetryPolicy is the retry policy of group's subscription group config
// (created with the defaults when the broker auto-creates groups), or nil
// for a group the broker does not know or cannot read: then, as Java, the
// client's own policy stays (the defaults' when it sent none).
func (s *Server) groupRetryPolicy(group string) *v2.RetryPolicy {
	c, ok, err := s.b.FindSubscriptionGroup(group)
	if err != nil {
		s.log.Warn("subscription group not readable", "group", group, "err", err)
	}
	if err != nil || !ok {
		return nil
	}
	return retryPolicy(c)
}

// serverSettings answers a client's Settings: the client's own, with the
// server's publishing limits or subscription parameters and the group's
// retry policy.
func (s *Server) serverSettings(in *v2.Settings) *v2.Settings {
	out := &v2.Settings{ClientType: in.ClientType, AccessPoint: in.AccessPoint, BackoffPolicy: in.BackoffPolicy,
		RequestTimeout: in.RequestTimeout, UserAgent: in.UserAgent, Metric: &v2.Metric{On: false}}
	switch ps := in.GetPubSub().(type) {
	case *v2.Settings_Publishing:
		out.PubSub = &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: ps.Publishing.GetTopics(),
			MaxBodySize: int32(s.cfg.MaxBodySize), ValidateMessageType: !s.cfg.SkipMessageTypeCheck}}
	case *v2.Settings_Subscription:
		fifo := s.consumeOrderly(ps.Subscription.GetGroup().GetName(), in)
		batch := int32(receiveBatchSize)
		lp := longPollingTimeout
		if s.cfg.LongPolling > 0 {
			lp = s.cfg.LongPolling
		}
		sub := &v2.Subscription{Group: ps.Subscription.Group, Subscriptions: ps.Subscription.GetSubscriptions(),
			Fifo: &fifo, ReceiveBatchSize: &batch, LongPollingTimeout: durationpb.New(lp)}
		out.PubSub = &v2.Settings_Subscription{Subscription: sub}
		if p := s.groupRetryPolicy(ps.Subscription.GetGroup().GetName()); p != nil {
			out.BackoffPolicy = p
		} else if out.BackoffPolicy == nil {
			out.BackoffPolicy = retryPolicy(protocol.DefaultSubscriptionGroupConfig(""))
		}
	}
	return out
}

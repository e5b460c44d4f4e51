package clients

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Filter decides from a consume-queue unit's tags code whether a message
// matches a subscription (the broker's MessageFilter).
type Filter interface {
	MatchTagsCode(tagsCode int64) bool
}

// CompileFilter compiles a subscription's expression of expressionType
// (nil Filter: everything matches).
type CompileFilter func(expr, expressionType string) (Filter, error)

// ExpressionTag is the expression type of a TAG subscription, the default.
const ExpressionTag = "TAG"

// Message models.
const (
	Clustering   = "CLUSTERING"
	Broadcasting = "BROADCASTING"
)

// Executor names the codes run on.
const (
	HeartbeatExecutor    = "heartbeat"
	ClientManageExecutor = "client-manage"
)

// ProcessorTable is the broker's processor table: Handle routes code to fn
// on the named executor, behind the broker's one ACL and readiness gate.
type ProcessorTable interface {
	Handle(code int32, executor string, fn remoting.ProcessorFunc)
}

// Deps is what the service needs from the broker.
type Deps struct {
	// CompileFilter compiles the subscriptions heartbeats carry (nil: no
	// filters are kept).
	CompileFilter CompileFilter
	// BeforeHeartbeat runs first on every HEART_BEAT (the broker creates
	// the groups' retry topics and subscription groups); a non-nil
	// response answers the heartbeat once its client is recorded.
	BeforeHeartbeat func(hb *HeartbeatData) *remoting.Command
	// NotifyEnabled reports whether a group's members are told of
	// membership changes (notifyConsumerIdsChangedEnable); nil: always.
	NotifyEnabled func(group string) bool
	// EnablePropertyFilter admits SQL92 subscriptions (CHECK_CLIENT_CONFIG).
	EnablePropertyFilter bool
	Logger               *slog.Logger
}

// Service is the broker's client management (ProducerManager,
// ConsumerManager and ClientManageProcessor): the client Table, the
// heartbeat and unregister codes, and NOTIFY_CONSUMER_IDS_CHANGED. Safe for
// concurrent use; Wait returns once the notifications in flight are
// written.
type Service struct {
	*Table
	deps     Deps
	log      *slog.Logger
	notifyWG sync.WaitGroup // NOTIFY_CONSUMER_IDS_CHANGED writes in flight
}

// New builds the service with an empty table.
func New(d Deps) *Service {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Service{Table: newTable(d.CompileFilter), deps: d, log: log}
}

// Register routes HEART_BEAT, UNREGISTER_CLIENT,
// GET_CONSUMER_LIST_BY_GROUP and CHECK_CLIENT_CONFIG (the last on the
// default executor).
func (s *Service) Register(t ProcessorTable) {
	t.Handle(protocol.ReqHeartBeat, HeartbeatExecutor, s.heartbeat)
	t.Handle(protocol.ReqUnregisterClient, HeartbeatExecutor, s.unregisterClient)
	t.Handle(protocol.ReqGetConsumerListByGroup, ClientManageExecutor, s.getConsumerList)
	t.Handle(protocol.ReqCheckClientConfig, "", s.checkClientConfig)
}

// heartbeat handles HEART_BEAT (34): the client's groups replace what it
// announced before (after Deps.BeforeHeartbeat); groups whose membership
// changed are told (NOTIFY_CONSUMER_IDS_CHANGED).
func (s *Service) heartbeat(_ context.Context, conn *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	hb, err := DecodeHeartbeat(req.Body)
	if err != nil {
		return nil, remoting.NewBadRequest("%v", err)
	}
	var resp *remoting.Command
	if s.deps.BeforeHeartbeat != nil {
		resp = s.deps.BeforeHeartbeat(hb)
	}
	changed := s.Heartbeat(conn, hb, time.Now())
	s.SetClientMeta(hb.ClientID, req.Language, req.Version)
	s.NotifyConsumerIDsChanged(changed)
	if resp != nil {
		return resp, nil
	}
	return success(), nil
}

// unregisterClient handles UNREGISTER_CLIENT (35).
func (s *Service) unregisterClient(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	id, err := req.ExtFields.String("clientID")
	if err != nil {
		return nil, err
	}
	changed := s.Unregister(id, req.ExtFields.OptString("producerGroup", ""), req.ExtFields.OptString("consumerGroup", ""))
	s.NotifyConsumerIDsChanged(changed)
	return success(), nil
}

// OnConnClose drops the connection's clients and tells their groups.
func (s *Service) OnConnClose(conn *remoting.Conn) {
	s.NotifyConsumerIDsChanged(s.ConnClosed(conn))
}

// DropExpired drops the clients whose last heartbeat is older than
// before, closes their connections and tells their groups.
func (s *Service) DropExpired(before time.Time) {
	changed, conns := s.Expire(before)
	for _, c := range conns {
		s.log.Info("client heartbeat expired, closing its connection", "remote", c.RemoteAddr().String())
		_ = c.Close()
	}
	s.NotifyConsumerIDsChanged(changed)
}

// NotifyConsumerIDsChanged pushes NOTIFY_CONSUMER_IDS_CHANGED (40) to every
// remaining member of each group, so they rebalance at once.
func (s *Service) NotifyConsumerIDsChanged(groups []string) {
	seen := make(map[string]struct{}, len(groups))
	for _, g := range groups {
		if _, dup := seen[g]; dup {
			continue
		}
		seen[g] = struct{}{}
		if s.deps.NotifyEnabled != nil && !s.deps.NotifyEnabled(g) {
			continue
		}
		for _, c := range s.MemberConns(g) {
			s.notifyWG.Add(1)
			go func() {
				defer s.notifyWG.Done()
				req := remoting.NewRequest(protocol.ReqNotifyConsumerIDsChanged, remoting.ExtFields{"consumerGroup": g})
				if err := c.Send(req); err != nil {
					s.log.Debug("notify consumer ids changed failed", "group", g, "err", err)
				}
			}()
		}
	}
}

// Wait waits for the notifications in flight.
func (s *Service) Wait() { s.notifyWG.Wait() }

func success() *remoting.Command { return remoting.NewResponse(protocol.RespSuccess, "") }

func responsef(code int32, format string, args ...any) *remoting.Command {
	return remoting.NewResponse(code, fmt.Sprintf(format, args...))
}

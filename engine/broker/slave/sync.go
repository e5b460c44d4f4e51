// Package slave is a slave broker's copy of its master's metadata, in the
// shape of RocketMQ's SlaveSynchronize: the topic configs
// (GET_ALL_TOPIC_CONFIG) and the subscription groups
// (GET_ALL_SUBSCRIPTIONGROUP_CONFIG), read from the master over remoting
// and written into the slave's engine/broker/meta tables. It is not the
// commit log's replication (engine/ha) nor the registration that tells the
// slave its master's address (Deps.MasterAddr). The package never imports
// engine/broker.
package slave

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/meta"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// firstSync is the delay before a slave's first metadata copy
// (SlaveSynchronize starts 3 s after the broker in 4.9.x).
const firstSync = 3 * time.Second

// Service is a slave's SlaveSynchronize: every Deps.Interval (the first
// time after at most 3 s) it copies the master's topic configs and
// subscription groups (metadata is not in the commit log, and a slave that
// does not know a topic cannot serve pulls of it). Topics the master no
// longer has are kept (a consumer draining the slave still needs them).
// Run is its one goroutine; the tables it writes carry their own locks.
type Service struct {
	deps Deps
	last protocol.DataVersion // the master's topic table version last copied; owned by Run
}

// Deps is what the service needs from the broker.
type Deps struct {
	// Meta holds the slave's topic and group tables (loaded).
	Meta *meta.Service
	// Invoke sends a request to addr and waits for the answer.
	Invoke func(ctx context.Context, addr string, req *remoting.Command) (*remoting.Command, error)
	// MasterAddr is the master's remoting address as the name servers
	// last said ("" before the first registration: nothing is copied).
	MasterAddr func() string
	// Interval is the time between copies; Timeout bounds each request.
	Interval, Timeout time.Duration
	// Context ends requests in flight; Stop ends Run.
	Context context.Context
	Stop    <-chan struct{}
	Logger  *slog.Logger
}

// New builds the service.
func New(d Deps) *Service {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return &Service{deps: d}
}

// Run copies the master's metadata every Interval until Stop closes.
func (s *Service) Run() {
	t := time.NewTimer(min(firstSync, s.deps.Interval))
	defer t.Stop()
	for {
		select {
		case <-s.deps.Stop:
			return
		case <-t.C:
		}
		v, err := s.syncTopicConfig(s.last)
		if err != nil {
			s.deps.Logger.Warn("slave: copy the master's topic configs", "master", s.deps.MasterAddr(), "err", err)
		} else {
			s.last = v
		}
		if err := s.syncSubGroups(); err != nil {
			s.deps.Logger.Warn("slave: copy the master's subscription groups", "master", s.deps.MasterAddr(), "err", err)
		}
		t.Reset(s.deps.Interval)
	}
}

// syncTopicConfig fetches GET_ALL_TOPIC_CONFIG from the master and stores
// every topic that is new or changed, unless the master's DataVersion is
// still last.
func (s *Service) syncTopicConfig(last protocol.DataVersion) (protocol.DataVersion, error) {
	addr := s.deps.MasterAddr()
	if addr == "" {
		return last, nil
	}
	ctx, cancel := context.WithTimeout(s.deps.Context, s.deps.Timeout)
	defer cancel()
	resp, err := s.deps.Invoke(ctx, addr, remoting.NewRequest(protocol.ReqGetAllTopicConfig, nil))
	if err != nil {
		return last, err
	}
	if resp.Code != protocol.RespSuccess {
		return last, fmt.Errorf("slave: GET_ALL_TOPIC_CONFIG from %s: code %d %s", addr, resp.Code, resp.Remark)
	}
	var w protocol.TopicConfigSerializeWrapper
	if err := json.Unmarshal(resp.Body, &w); err != nil {
		return last, fmt.Errorf("slave: GET_ALL_TOPIC_CONFIG from %s: %w", addr, err)
	}
	if w.DataVersion == last {
		return last, nil
	}
	for name, tc := range w.TopicConfigTable {
		if cur, ok := s.deps.Meta.Topics.Get(name); ok && meta.SameTopicConfig(cur, tc) {
			continue
		}
		if tc.TopicName == "" {
			tc.TopicName = name
		}
		if _, err := s.deps.Meta.Topics.Put(tc); err != nil {
			return last, err
		}
	}
	return w.DataVersion, nil
}

// syncSubGroups copies the master's subscription group table to a slave
// (SlaveSynchronize.syncSubscriptionGroupConfig): GET_ALL_SUBSCRIPTIONGROUP_CONFIG
// from the master replaces the slave's table when its DataVersion differs.
func (s *Service) syncSubGroups() error {
	addr := s.deps.MasterAddr()
	if addr == "" {
		return nil
	}
	t, err := s.deps.Meta.Groups()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(s.deps.Context, s.deps.Timeout)
	defer cancel()
	resp, err := s.deps.Invoke(ctx, addr, remoting.NewRequest(protocol.ReqGetAllSubscriptionGroupConfig, nil))
	if err != nil {
		return err
	}
	if resp.Code != protocol.RespSuccess {
		return fmt.Errorf("slave: GET_ALL_SUBSCRIPTIONGROUP_CONFIG from %s: code %d %s", addr, resp.Code, resp.Remark)
	}
	var w protocol.SubscriptionGroupWrapper
	if err := json.Unmarshal(resp.Body, &w); err != nil {
		return fmt.Errorf("slave: GET_ALL_SUBSCRIPTIONGROUP_CONFIG from %s: %w", addr, err)
	}
	return t.Replace(w)
}

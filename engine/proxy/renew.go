package proxy

import (
	"errors"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// Lease renewal defaults (ProxyConfig, RenewStrategyPolicy).
const (
	defaultRenewPeriod    = 5 * time.Second // renewSchedulePeriodMillis
	defaultRenewAhead     = 10 * time.Second
	defaultRenewMax       = 3 * time.Hour
	defaultClearInvisible = time.Second // invisibleTimeMillisWhenClear
	maxRenewRetries       = 3
)

// defaultRenewDelays is RenewStrategyPolicy: the invisible time of the
// n-th renewal (the last repeats).
var defaultRenewDelays = []time.Duration{time.Minute, 3 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	30 * time.Minute, time.Hour}

// lease is a message a client received with auto_renew: the proxy keeps it
// invisible while the client consumes it (the push consumer's model), as
// Java's DefaultReceiptHandleManager. mu is held while the lease's handle
// is changed, so an ack waits for a renewal in flight and uses its result.
type lease struct {
	mu         sync.Mutex
	group      string
	topic      string
	handle     string    // the current receipt handle (the client keeps the first one)
	visibleAt  time.Time // when the current handle's lease ends
	received   time.Time
	renewals   int
	retries    int
	reconsumes int32
	gone       bool // taken (acked, changed, forwarded) or dropped
}

// leaseTable holds the auto-renewed leases per client id, each by the
// handle the client holds. Safe for concurrent use.
type leaseTable struct {
	mu       sync.Mutex
	byClient map[string]map[string]*lease
	renewed  int64 // successful renewals, for tests
}

func (t *leaseTable) init() { t.byClient = make(map[string]map[string]*lease) }

func (t *leaseTable) add(clientID, handle string, l *lease) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.byClient[clientID]
	if m == nil {
		m = make(map[string]*lease)
		t.byClient[clientID] = m
	}
	m[handle] = l
}

// take removes the lease the client holds handle of (its group must
// match) and returns the handle to use on the broker: the lease's current
// one, or handle itself when it is not renewed here.
func (t *leaseTable) take(clientID, group, handle string) string {
	t.mu.Lock()
	l := t.byClient[clientID][handle]
	if l == nil || l.group != group {
		t.mu.Unlock()
		return handle
	}
	delete(t.byClient[clientID], handle)
	if len(t.byClient[clientID]) == 0 {
		delete(t.byClient, clientID)
	}
	t.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gone = true
	return l.handle
}

// removeClient removes and returns a client's leases (of group, or all
// when group is "").
func (t *leaseTable) removeClient(clientID, group string) []*lease {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*lease
	for h, l := range t.byClient[clientID] {
		if group == "" || l.group == group {
			out = append(out, l)
			delete(t.byClient[clientID], h)
		}
	}
	if len(t.byClient[clientID]) == 0 {
		delete(t.byClient, clientID)
	}
	return out
}

func (t *leaseTable) clients() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.byClient))
	for id := range t.byClient {
		out = append(out, id)
	}
	return out
}

// due returns a client's leases that end within ahead of now.
func (t *leaseTable) due(clientID string, now time.Time, ahead time.Duration) []*lease {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*lease
	for _, l := range t.byClient[clientID] {
		if l.visibleAt.Sub(now) <= ahead {
			out = append(out, l)
		}
	}
	return out
}

func (t *leaseTable) drop(clientID string, l *lease) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for h, x := range t.byClient[clientID] {
		if x == l {
			delete(t.byClient[clientID], h)
		}
	}
	if len(t.byClient[clientID]) == 0 {
		delete(t.byClient, clientID)
	}
}

func (s *Server) renewPeriod() time.Duration { return orDefault(s.cfg.RenewPeriod, defaultRenewPeriod) }

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// renewLoop runs scheduleRenewTask every RenewPeriod until Shutdown.
func (s *Server) renewLoop() {
	t := time.NewTicker(s.renewPeriod())
	defer t.Stop()
	for {
		select {
		case <-s.stop.Done():
			return
		case <-t.C:
			s.renewDue()
		}
	}
}

// renewDue renews every lease that ends within RenewAhead, of clients
// still connected (a Telemetry session); the leases of a client gone are
// cleared: made visible after ClearInvisible.
func (s *Server) renewDue() {
	ahead := orDefault(s.cfg.RenewAhead, defaultRenewAhead)
	for _, id := range s.leases.clients() {
		if s.sessions.get(id) == nil {
			s.clearLeases(id, "")
			continue
		}
		for _, l := range s.leases.due(id, time.Now(), ahead) {
			if !s.renew(l) {
				s.leases.drop(id, l)
			}
		}
	}
}

// renew extends l by the renewal policy's next step, or, past RenewMax,
// gives it back after the group's retry delay; false means stop renewing.
func (s *Server) renew(l *lease) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gone {
		return false
	}
	var d time.Duration
	stop := time.Since(l.received) >= orDefault(s.cfg.RenewMax, defaultRenewMax)
	if stop {
		d = s.retryDelay(l.group, l.reconsumes)
	} else {
		delays := s.cfg.RenewDelays
		if len(delays) == 0 {
			delays = defaultRenewDelays
		}
		d = delays[min(l.renewals, len(delays)-1)]
	}
	h, err := s.cfg.Consumer.ChangeInvisible(l.group, l.topic, l.handle, d)
	if err != nil {
		s.log.Warn("lease renewal failed", "group", l.group, "topic", l.topic, "err", err)
		if l.retries++; errors.Is(err, ErrInvalidHandle) || l.retries >= maxRenewRetries {
			l.gone = true
			return false
		}
		return true
	}
	if stop {
		l.gone = true
		return false
	}
	l.handle, l.visibleAt, l.retries = h, time.Now().Add(d), 0
	l.renewals++
	s.leases.mu.Lock()
	s.leases.renewed++
	s.leases.mu.Unlock()
	return true
}

// clearLeases gives back a client's leases (of group, or all): visible
// again after ClearInvisible (Java's CLEAR_GROUP).
func (s *Server) clearLeases(clientID, group string) {
	d := orDefault(s.cfg.ClearInvisible, defaultClearInvisible)
	for _, l := range s.leases.removeClient(clientID, group) {
		l.mu.Lock()
		if !l.gone {
			l.gone = true
			if _, err := s.cfg.Consumer.ChangeInvisible(l.group, l.topic, l.handle, d); err != nil {
				s.log.Debug("lease not cleared", "group", l.group, "err", err)
			}
		}
		l.mu.Unlock()
	}
}

// retryDelay is how long a message of group stays invisible when its
// renewal stops after reconsumes deliveries: the group's retry policy
// (CustomizedRetryPolicy: next[reconsumes+2]; exponential: initial *
// multiplier^reconsumes, at most max).
func (s *Server) retryDelay(group string, reconsumes int32) time.Duration {
	p := s.groupRetryPolicy(group)
	if p == nil {
		p = retryPolicy(protocol.DefaultSubscriptionGroupConfig(group))
	}
	if e := p.GetExponentialBackoff(); e != nil {
		d := e.GetInitial().AsDuration()
		for i := int32(0); i < reconsumes && d < e.GetMax().AsDuration(); i++ {
			d = time.Duration(float64(d) * float64(e.GetMultiplier()))
		}
		return min(d, e.GetMax().AsDuration())
	}
	next := p.GetCustomizedBackoff().GetNext()
	if len(next) == 0 {
		return defaultRenewDelays[0]
	}
	return next[min(int(max(reconsumes, 0))+2, len(next)-1)].AsDuration()
}

// leaseOf starts renewing a message received with auto_renew.
func (s *Server) leaseOf(clientID, group, topic string, m PoppedMessage, invisible time.Duration) {
	now := time.Now()
	s.leases.add(clientID, m.Handle, &lease{group: group, topic: topic, handle: m.Handle, visibleAt: now.Add(invisible),
		received: now, reconsumes: max(m.DeliveryAttempt-1, 0)})
}

package meta

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// lockMaxLive is REBALANCE_LOCK_MAX_LIVE_TIME: a queue lock not renewed for
// this long is free again.
const lockMaxLive = 60 * time.Second

// lockBatchBody is the body of LOCK_BATCH_MQ (41) and UNLOCK_BATCH_MQ (42).
type lockBatchBody struct {
	ConsumerGroup  string                  `json:"consumerGroup"`
	ClientID       string                  `json:"clientId"`
	OnlyThisBroker bool                    `json:"onlyThisBroker"`
	MQSet          []protocol.MessageQueue `json:"mqSet"`
}

type lockKey struct {
	group string
	mq    protocol.MessageQueue
}

type lockEntry struct {
	clientID string
	renewed  time.Time
}

// Locks is RebalanceLockManager: which client of a group consumes a
// queue orderly. Safe for concurrent use.
type Locks struct {
	mu    sync.Mutex
	locks map[lockKey]lockEntry
}

func newLocks() *Locks { return &Locks{locks: make(map[lockKey]lockEntry)} }

// Lock takes or renews the locks it can and returns those held by clientID.
func (t *Locks) Lock(group, clientID string, mqs []protocol.MessageQueue, now time.Time) []protocol.MessageQueue {
	t.mu.Lock()
	defer t.mu.Unlock()
	ok := make([]protocol.MessageQueue, 0, len(mqs))
	for _, mq := range mqs {
		k := lockKey{group, mq}
		e, held := t.locks[k]
		if !held || e.clientID == clientID || now.Sub(e.renewed) > lockMaxLive {
			t.locks[k] = lockEntry{clientID: clientID, renewed: now}
			ok = append(ok, mq)
		}
	}
	return ok
}

// Unlock releases the locks clientID holds among mqs.
func (t *Locks) Unlock(group, clientID string, mqs []protocol.MessageQueue) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, mq := range mqs {
		k := lockKey{group, mq}
		if e, held := t.locks[k]; held && e.clientID == clientID {
			delete(t.locks, k)
		}
	}
}

// lockBatchMQ handles LOCK_BATCH_MQ (41).
func (s *Service) lockBatchMQ(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	var body lockBatchBody
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return nil, remoting.NewBadRequest("bad lock body: %v", err)
	}
	locked := s.Locks.Lock(body.ConsumerGroup, body.ClientID, body.MQSet, time.Now())
	out, err := json.Marshal(struct {
		LockOKMQSet []protocol.MessageQueue `json:"lockOKMQSet"`
	}{locked})
	if err != nil {
		return nil, err
	}
	return bodyResponse(out), nil
}

// unlockBatchMQ handles UNLOCK_BATCH_MQ (42).
func (s *Service) unlockBatchMQ(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	var body lockBatchBody
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return nil, remoting.NewBadRequest("bad unlock body: %v", err)
	}
	s.Locks.Unlock(body.ConsumerGroup, body.ClientID, body.MQSet)
	return success(), nil
}

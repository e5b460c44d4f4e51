package broker

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

type queueKey struct {
	topic   string
	queueID int32
}

// heldPull is a pull parked until its queue grows past offset, its deadline
// passes or its connection closes. Exactly one of those claims it.
type heldPull struct {
	conn     *remoting.Conn
	req      *remoting.Command
	key      queueKey
	offset   int64
	deadline time.Time

	claimed atomic.Bool
	mu      sync.Mutex // guards the two stoppers while they are installed
	timer   *time.Timer
	stopCtx func() bool
}

// wake says what claimed a held pull.
type wake int

const (
	wakeArrival  wake = iota // the queue grew: re-read, and hold again if nothing matched
	wakeDeadline             // answer with whatever is there (PULL_NOT_FOUND)
	wakeClose                // connection closing or broker stopping: answer now
)

// holdTable is PullRequestHoldService. Safe for concurrent use.
type holdTable struct {
	b  *Broker
	mu struct {
		sync.Mutex
		byQueue map[queueKey]map[*heldPull]struct{}
		closed  bool
	}
}

func newHoldTable(b *Broker) *holdTable {
	h := &holdTable{b: b}
	h.mu.byQueue = make(map[queueKey]map[*heldPull]struct{})
	return h
}

// hold parks hp. A message that arrived between the pull's read and now is
// caught by the re-check at the end, so no wake-up is lost.
func (h *holdTable) hold(hp *heldPull) {
	hp.mu.Lock()
	hp.timer = time.AfterFunc(time.Until(hp.deadline), func() { h.fire(hp, wakeDeadline) })
	hp.stopCtx = context.AfterFunc(hp.conn.Context(), func() { h.fire(hp, wakeClose) })
	hp.mu.Unlock()

	h.mu.Lock()
	if h.mu.closed {
		h.mu.Unlock()
		h.fire(hp, wakeClose)
		return
	}
	if !hp.claimed.Load() {
		set := h.mu.byQueue[hp.key]
		if set == nil {
			set = make(map[*heldPull]struct{})
			h.mu.byQueue[hp.key] = set
		}
		set[hp] = struct{}{}
	}
	h.mu.Unlock()
	if h.b.store.MaxOffset(hp.key.topic, hp.key.queueID) > hp.offset {
		h.fire(hp, wakeArrival)
	}
}

// fire claims hp (once) and answers it on a new goroutine.
func (h *holdTable) fire(hp *heldPull, why wake) {
	if !hp.claimed.CompareAndSwap(false, true) {
		return
	}
	h.mu.Lock()
	if set := h.mu.byQueue[hp.key]; set != nil {
		delete(set, hp)
		if len(set) == 0 {
			delete(h.mu.byQueue, hp.key)
		}
	}
	h.mu.Unlock()
	hp.mu.Lock()
	if hp.timer != nil {
		hp.timer.Stop()
	}
	if hp.stopCtx != nil {
		hp.stopCtx()
	}
	hp.mu.Unlock()
	go h.answer(hp, why)
}

// answer re-reads the queue without suspending and replies. Woken by an
// arrival that the consumer's filter rejects (PULL_RETRY_IMMEDIATELY), the
// pull is held again from the next offset until its deadline, as Java's
// PullRequestHoldService does by checking the new unit's tags code.
func (h *holdTable) answer(hp *heldPull, why wake) {
	resp, _ := h.b.pull(hp.conn, hp.req, false)
	if why == wakeArrival && resp.Code == protocol.RespPullRetryImmediately && time.Until(hp.deadline) > 0 {
		if next, err := resp.ExtFields.Int64("nextBeginOffset"); err == nil && next > hp.offset {
			hp.req.ExtFields.SetInt64("queueOffset", next) // the request is ours until answered
			h.hold(&heldPull{conn: hp.conn, req: hp.req, key: hp.key, offset: next, deadline: hp.deadline})
			return
		}
	}
	h.b.reply(hp.conn, hp.req, resp)
}

// notify wakes the pulls of (topic, queueID) that nextOffset satisfies (the
// store's arriving listener).
func (h *holdTable) notify(topic string, queueID int32, nextOffset int64) {
	var ready []*heldPull
	h.mu.Lock()
	for hp := range h.mu.byQueue[queueKey{topic, queueID}] {
		if nextOffset > hp.offset {
			ready = append(ready, hp)
		}
	}
	h.mu.Unlock()
	for _, hp := range ready {
		h.fire(hp, wakeArrival)
	}
}

// all returns every held pull.
func (h *holdTable) all() []*heldPull {
	h.mu.Lock()
	defer h.mu.Unlock()
	var all []*heldPull
	for _, set := range h.mu.byQueue {
		for hp := range set {
			all = append(all, hp)
		}
	}
	return all
}

// check wakes every held pull whose queue has grown past its offset.
func (h *holdTable) check() {
	for _, hp := range h.all() {
		if h.b.store.MaxOffset(hp.key.topic, hp.key.queueID) > hp.offset {
			h.fire(hp, wakeArrival)
		}
	}
}

// closeAll answers every held pull and makes later holds answer at once.
func (h *holdTable) closeAll() {
	h.mu.Lock()
	h.mu.closed = true
	h.mu.Unlock()
	for _, hp := range h.all() {
		h.fire(hp, wakeClose)
	}
}

// held is the number of parked pulls.
func (h *holdTable) held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, set := range h.mu.byQueue {
		n += len(set)
	}
	return n
}

// HeldPulls is the number of pulls currently held (long polling).
func (b *Broker) HeldPulls() int { return b.holds.held() }

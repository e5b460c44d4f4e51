package flush

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// groupPolicy is leader/follower group commit, without a flusher goroutine
// (pebble's LogWriter runs a dedicated flush loop, the shape of
// rmqGroupPolicy):
//
//   - A committer whose position is not yet flushed takes the flush token if
//     no flush is running and flushes inline itself (the leader). With one
//     producer a commit costs one flush, as under sync: no hand-off, no timer.
//   - Whoever arrives while a flush runs queues a waiter and parks. When the
//     running flush ends, its leader answers every queued waiter the flush
//     covered and, if any are left, hands the token to the oldest of them,
//     which wakes and at once runs the next single flush for all of them
//     (and for everyone who queued meanwhile).
//   - One deadline sweeper goroutine (not a timer per commit) answers
//     waiters queued longer than SyncFlushTimeout with ErrTimeout; a
//     leader whose own flush ran past its deadline reports ErrTimeout too
//     (its bytes are written, and durable, but not within the bound the
//     producer asked for — RocketMQ's FLUSH_DISK_TIMEOUT).
//   - A ticker flushes, every TickInterval, bytes appended without a commit
//     (WAIT=false) when no flush is running.
//   - With CoalesceWait > 0 a leader first waits (up to CoalesceWait) until
//     as many commits are queued as the previous round had in flight; the
//     commit that completes the batch wakes it.
//   - A round's target is the Flusher's WrittenPos read before its flush.
//     A flush short of it is repeated while it makes progress
//     (flushCovering); the round then answers every commit at or below
//     the target, the leader's included: nil if the flushed position
//     reached it, else a short-flush error (ErrShortFlush). Commits beyond
//     the target were appended after the flush began and wait for the next
//     round.
//
// Waiters come from a pool and the queue reuses its backing array: a Commit
// allocates nothing in steady state. A waiter's context is honoured while it
// is queued; a leader cannot abandon the flush it runs.
//
// Lock order: mu is never held across Flush or while waking goroutines.
type groupPolicy struct {
	f       Flusher
	cfg     Config
	flushed atomic.Int64
	err     stickyErr
	closedA atomic.Bool // fast-path copy of closed

	mu       sync.Mutex
	idle     sync.Cond  // signalled (while closing) when flushing turns false
	flushing bool       // guarded by mu: someone holds the flush token
	closed   bool       // guarded by mu: no waiter is queued and no token taken after Close began
	queue    []*gWaiter // guarded by mu: commits waiting for a future flush, oldest first
	spare    []*gWaiter // guarded by mu: scratch for the token holder's completed waiters
	// expect is the number of commits the last round had in flight: those
	// its flush completed plus those it left queued (guarded by mu).
	expect int
	// filling: the token holder waits on fillCh until fillTarget commits
	// are queued (guarded by mu). fillTimer is owned by the token holder.
	filling    bool
	fillTarget int
	fillCh     chan struct{}
	fillTimer  *time.Timer
	fillWaits  atomic.Uint64 // fills that ran out of CoalesceWait
	tick       *ticker       // flushes un-waited appends
	sweep      *ticker       // deadline sweeper
	once       sync.Once
	cerr       error
	counters
}

// gWaiter is one queued Commit. It receives exactly one value on ch per
// wait: nil, an error, or errLead (take the token and flush).
type gWaiter struct {
	pos   int64
	since int64      // nanotime() when queued
	ch    chan error // capacity 1
}

// errLead tells a waiter that it holds the flush token now.
var errLead = errors.New("flush: internal: lead the next flush")

var gWaiterPool = sync.Pool{New: func() any { return &gWaiter{ch: make(chan error, 1)} }}

// monotonic nanoseconds for deadlines.
var epoch = time.Now()

func nanotime() int64 { return int64(time.Since(epoch)) }

func newGroup(f Flusher, start int64, cfg Config) *groupPolicy {
	p := &groupPolicy{f: f, cfg: cfg, fillCh: make(chan struct{}, 1)}
	p.idle.L = &p.mu
	if cfg.CoalesceWait > 0 {
		p.fillTimer = time.NewTimer(time.Hour)
		p.fillTimer.Stop()
	}
	p.flushed.Store(start)
	p.tick = startTicker("flush-group-tick", cfg.TickInterval, p.onTick)
	p.sweep = startTicker("flush-group-sweep", sweepInterval(cfg), p.onSweep)
	return p
}

// sweepInterval keeps a timeout late by at most a fraction of itself.
func sweepInterval(cfg Config) time.Duration {
	return max(min(cfg.TickInterval, cfg.SyncFlushTimeout/8), 100*time.Microsecond)
}

func (p *groupPolicy) Commit(ctx context.Context, pos int64) error {
	p.commits.Add(1)
	if err := p.err.get(); err != nil {
		return err
	}
	if p.closedA.Load() {
		return ErrClosed
	}
	if p.flushed.Load() >= pos {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	switch {
	case p.closed:
		p.mu.Unlock()
		return ErrClosed
	case p.flushed.Load() >= pos:
		p.mu.Unlock()
		return nil
	case !p.flushing:
		p.flushing = true
		p.mu.Unlock()
		return p.lead(true, pos, 0)
	}
	w := gWaiterPool.Get().(*gWaiter)
	w.pos, w.since = pos, nanotime()
	p.queue = append(p.queue, w)
	if p.filling && len(p.queue) >= p.fillTarget {
		p.filling = false
		p.fillCh <- struct{}{} // capacity 1, sent only while filling
	}
	p.mu.Unlock()

	select {
	case err := <-w.ch:
		return p.answered(w, err)
	case <-ctx.Done():
	}
	p.mu.Lock()
	for i, q := range p.queue {
		if q == w {
			p.queue = slices.Delete(p.queue, i, i+1)
			p.mu.Unlock()
			gWaiterPool.Put(w)
			return ctx.Err()
		}
	}
	p.mu.Unlock()
	// A leader or the sweeper has taken w off the queue: its answer is on
	// the way (and a lead must be honoured).
	return p.answered(w, <-w.ch)
}

// answered recycles w after its one answer and acts on it.
func (p *groupPolicy) answered(w *gWaiter, err error) error {
	pos, since := w.pos, w.since
	gWaiterPool.Put(w)
	if err == errLead {
		return p.lead(true, pos, since)
	}
	return err
}

// flushOnce runs one flush (ran is false if an error was already sticky)
// and publishes its position. REQUIRES: the caller holds the flush token.
func (p *groupPolicy) flushOnce() (start time.Time, d time.Duration, ran bool, err error) {
	start = time.Now()
	if err = p.err.get(); err != nil {
		return start, 0, false, err
	}
	pos, ferr := p.f.Flush()
	d = time.Since(start)
	if ferr != nil {
		return start, d, true, p.err.set(fmt.Errorf("flush: group flush: %w", ferr))
	}
	maxPos(&p.flushed, pos)
	return start, d, true, nil
}

// flushCovering flushes until the flushed position reaches target (the
// Flusher's WrittenPos read before the call): one flushOnce, then — after
// a short flush — another while the last advanced the position, for up to
// SyncFlushTimeout after the first retry (as flushState.runCovering). It
// records every flush but the last (serving no commits) itself; the caller
// records the last one, returned as flushOnce returns it.
// REQUIRES: the caller holds the flush token.
func (p *groupPolicy) flushCovering(target int64) (start time.Time, d time.Duration, ran bool, err error) {
	var began int64 // clock read only once a retry is due
	for {
		before := p.flushed.Load()
		start, d, ran, err = p.flushOnce()
		after := p.flushed.Load()
		if !ran || err != nil || after >= target || after == before {
			return start, d, ran, err
		}
		if began == 0 {
			began = nanotime()
		} else if time.Duration(nanotime()-began) >= p.cfg.SyncFlushTimeout {
			return start, d, ran, err
		}
		p.recordFlush(d, 0)
		if p.cfg.OnFlush != nil {
			p.cfg.OnFlush(Event{Start: start, Duration: d, FlushedPos: after})
		}
	}
}

// lead runs one round as the token holder (self: on behalf of a Commit at
// pos whose waiting began at since, or at the flush's start if since is 0):
// it flushes up to the round's target, answers every queued waiter at or
// below the target, and hands the token to the oldest waiter left, or
// releases it.
func (p *groupPolicy) lead(self bool, pos, since int64) error {
	if p.fillTimer != nil {
		p.fill(self)
	}
	target := p.f.WrittenPos()
	start, d, ran, err := p.flushCovering(target)
	flushed := p.flushed.Load()
	// Waiters at or below limit are answered now: nil if flushed covers
	// them, else (a short flush) an error. Above it: the next round.
	limit := max(flushed, target)

	p.mu.Lock()
	done := p.spare[:0]
	p.spare = nil
	kept := p.queue[:0]
	for _, w := range p.queue {
		if err != nil || w.pos <= limit {
			done = append(done, w)
		} else {
			kept = append(kept, w)
		}
	}
	clear(p.queue[len(kept):])
	p.queue = kept
	var next *gWaiter
	if len(p.queue) > 0 && !p.closed {
		next = p.queue[0]
		n := copy(p.queue, p.queue[1:])
		p.queue[n] = nil
		p.queue = p.queue[:n]
	} else {
		p.flushing = false
		if p.closed {
			p.idle.Broadcast()
		}
	}
	if len(done) == 0 {
		p.spare = done
	}
	served := len(done)
	if self {
		served++
	}
	p.expect = served + len(p.queue)
	if next != nil {
		p.expect++
	}
	p.mu.Unlock()

	if ran {
		p.recordFlush(d, served)
		if p.cfg.OnFlush != nil {
			p.cfg.OnFlush(Event{Start: start, Duration: d, Waiters: served, FlushedPos: flushed, Err: err})
		}
	}
	if len(done) > 0 {
		for i, w := range done {
			answer := err
			if err == nil && w.pos > flushed {
				p.shortFlushes.Add(1)
				answer = shortFlush(w.pos, flushed)
			}
			w.ch <- answer // w may be recycled from here on
			done[i] = nil
		}
		p.mu.Lock()
		if p.spare == nil {
			p.spare = done[:0]
		}
		p.mu.Unlock()
	}
	if next != nil {
		next.ch <- errLead
	}
	if err != nil || !self {
		return err
	}
	if pos > flushed {
		p.shortFlushes.Add(1)
		return shortFlush(pos, flushed)
	}
	if since == 0 {
		since = int64(start.Sub(epoch))
	}
	if time.Duration(nanotime()-since) >= p.cfg.SyncFlushTimeout {
		p.timeouts.Add(1)
		return ErrTimeout
	}
	return nil
}

// fill waits, up to CoalesceWait, until the commits the last round had in
// flight are back: queued, plus the leader itself if self. It returns at
// once for a lone producer, after an error and when closing.
// REQUIRES: the caller holds the flush token.
func (p *groupPolicy) fill(self bool) {
	mine := 0
	if self {
		mine = 1
	}
	p.mu.Lock()
	if p.closed || p.err.get() != nil || len(p.queue)+mine >= p.expect {
		p.mu.Unlock()
		return
	}
	p.filling, p.fillTarget = true, p.expect-mine
	p.mu.Unlock()
	p.fillTimer.Reset(p.cfg.CoalesceWait)
	select {
	case <-p.fillCh:
		p.fillTimer.Stop() // Go >= 1.23: no stale tick survives Stop/Reset
		return
	case <-p.fillTimer.C:
	}
	p.fillWaits.Add(1)
	p.mu.Lock()
	if p.filling {
		p.filling = false
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	<-p.fillCh // a commit completed the batch as the timer fired
}

// onTick flushes bytes appended without a Commit when no flush is running
// (a running flush, or the next tick, covers them otherwise).
func (p *groupPolicy) onTick() {
	if p.err.get() != nil || !unflushed(p.f, p.flushed.Load()) {
		return
	}
	p.mu.Lock()
	if p.closed || p.flushing {
		p.mu.Unlock()
		return
	}
	p.flushing = true
	p.mu.Unlock()
	_ = p.lead(false, 0, 0) // sticky: later commits see it
}

// onSweep answers ErrTimeout to every waiter queued longer than
// SyncFlushTimeout; its bytes stay written.
func (p *groupPolicy) onSweep() {
	now := nanotime()
	limit := int64(p.cfg.SyncFlushTimeout)
	p.mu.Lock()
	kept := p.queue[:0]
	for _, w := range p.queue {
		if now-w.since >= limit {
			p.timeouts.Add(1)
			w.ch <- ErrTimeout // buffered; w is off the queue, so nobody else answers it
		} else {
			kept = append(kept, w)
		}
	}
	clear(p.queue[len(kept):])
	p.queue = kept
	p.mu.Unlock()
}

func (p *groupPolicy) FlushedPos() int64 { return p.flushed.Load() }
func (p *groupPolicy) Stats() Stats      { return p.snapshot() }

// Close refuses new commits, waits for the running flush, flushes once more
// and answers every waiter still queued: nil if that flush covered it, else
// the sticky error, a short-flush error (at or below the written position
// the final flush was meant to reach) or ErrClosed. Nobody is left to time
// out. Close returns the sticky error, or ErrShortFlush if the final flush
// stayed short.
func (p *groupPolicy) Close() error {
	p.once.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.closedA.Store(true)
		if p.filling { // release a leader waiting for its batch
			p.filling = false
			p.fillCh <- struct{}{}
		}
		p.mu.Unlock()
		p.tick.halt()
		p.mu.Lock()
		for p.flushing {
			p.idle.Wait()
		}
		p.flushing = true
		p.mu.Unlock()

		target := p.f.WrittenPos()
		start, d, ran, err := p.flushCovering(target)
		flushed := p.flushed.Load()
		p.mu.Lock()
		waiting := p.queue
		p.queue = nil
		p.mu.Unlock()
		served := 0
		for _, w := range waiting {
			res, covered := p.answer(w.pos, target, flushed, err)
			switch {
			case !covered:
				res = ErrClosed
			case res == nil:
				served++
			}
			w.ch <- res
		}
		if ran {
			p.recordFlush(d, served)
			if p.cfg.OnFlush != nil {
				p.cfg.OnFlush(Event{Start: start, Duration: d, Waiters: served, FlushedPos: flushed, Err: err})
			}
		}
		p.sweep.halt()
		p.cerr = err
		if err == nil && flushed < target {
			p.cerr = shortFlush(target, flushed)
		}
	})
	return p.cerr
}

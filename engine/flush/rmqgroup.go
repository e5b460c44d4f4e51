package flush

import (
	"context"
	"runtime/pprof"
	"sync"
	"time"
)

// rmqGroupPolicy is RocketMQ's GroupCommitService. Committers append a
// request to the write list and kick the flusher goroutine; the flusher
// swaps the write list for its (empty) read list, performs ONE flush, which
// covers every byte appended before it started, and completes every request
// in the read list whose position it covers. Requests that arrive while a
// flush runs collect in the new write list and are served together by the
// next single flush. Every round hands off twice (committer to flusher and
// back), and each committer arms its own timer.
//
// The flusher also wakes TickInterval after its last round without a kick
// (waitForRunning(10)) and flushes bytes appended without a request
// (RocketMQ flushes with no requests "because individual messages are set
// not to sync flush").
//
// A request not completed within SyncFlushTimeout gets ErrTimeout
// (FLUSH_DISK_TIMEOUT); its bytes stay written.
//
// The dsync policy is this loop over a Flusher whose writes are durable by
// themselves: its "flush" only waits for the durable prefix to reach the
// round's target, while the writes of later appends are already in
// flight, so rounds do not serialise the device work as fdatasyncs do.
//
// A round's target is the Flusher's WrittenPos read before its flush; a
// flush short of it is repeated while it makes progress, as doCommit
// repeats flush(0) (flushState.runCovering). Requests at or below the
// target are then answered: nil if the flushed position reached them, else
// a short-flush error (ErrShortFlush, which matches ErrTimeout too).
type rmqGroupPolicy struct {
	f   Flusher
	cfg Config

	mu struct {
		sync.Mutex
		write  []*rmqWaiter // guarded by mu
		closed bool         // guarded by mu: no request is queued after Close began
	}
	read       []*rmqWaiter // owned by the flusher goroutine
	kick       chan struct{}
	stop       chan struct{}
	done       chan struct{}
	flushState // flushed position, sticky error
	once       sync.Once
	cerr       error
	counters
}

type rmqWaiter struct {
	pos int64
	ch  chan error // capacity 1: answered exactly once
}

var rmqWaiterPool = sync.Pool{New: func() any { return &rmqWaiter{ch: make(chan error, 1)} }}

// newRMQGroup starts the policy; label names its flusher goroutine for
// pprof (the dsync policy is this loop too, see the package doc).
func newRMQGroup(f Flusher, start int64, cfg Config, label string) *rmqGroupPolicy {
	p := &rmqGroupPolicy{f: f, cfg: cfg, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	p.flushed.Store(start)
	go pprof.Do(context.Background(), pprof.Labels("brokerlab", label), func(context.Context) { p.loop() })
	return p
}

func (p *rmqGroupPolicy) Commit(ctx context.Context, pos int64) error {
	p.commits.Add(1)
	if err := p.err.get(); err != nil {
		return err
	}
	w := rmqWaiterPool.Get().(*rmqWaiter)
	w.pos = pos
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		rmqWaiterPool.Put(w)
		return ErrClosed
	}
	if p.flushed.Load() >= pos {
		p.mu.Unlock()
		rmqWaiterPool.Put(w)
		return nil
	}
	p.mu.write = append(p.mu.write, w)
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
	timer := time.NewTimer(p.cfg.SyncFlushTimeout)
	defer timer.Stop()
	select {
	case err := <-w.ch:
		rmqWaiterPool.Put(w) // the flusher sent exactly once and holds no reference
		return err
	case <-timer.C:
		// The flusher still owns w and will send into its buffered channel;
		// w is not returned to the pool.
		p.timeouts.Add(1)
		return ErrTimeout
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *rmqGroupPolicy) loop() {
	defer close(p.done)
	idle := time.NewTimer(p.cfg.TickInterval)
	defer idle.Stop()
	var coalesce *time.Timer
	if p.cfg.CoalesceWait > 0 {
		coalesce = time.NewTimer(time.Hour)
		coalesce.Stop()
	}
	for {
		kicked := false
		select {
		case <-p.kick:
			kicked = true
		case <-idle.C:
		case <-p.stop:
			p.serve() // serve whoever is still waiting
			return
		}
		if coalesce != nil && kicked {
			coalesce.Reset(p.cfg.CoalesceWait)
			select {
			case <-coalesce.C:
			case <-p.stop:
				coalesce.Stop()
			}
		}
		p.serve()
		idle.Reset(p.cfg.TickInterval)
	}
}

// serve swaps the lists and serves the read list with one flush; with an
// empty read list it flushes only if bytes were appended without a request.
func (p *rmqGroupPolicy) serve() {
	p.mu.Lock()
	p.read, p.mu.write = p.mu.write, p.read[:0]
	p.mu.Unlock()
	if len(p.read) == 0 {
		if p.err.get() == nil && unflushed(p.f, p.flushed.Load()) {
			_ = p.flush(0, p.f.WrittenPos()) // sticky: later commits see it
		}
		return
	}
	target := p.f.WrittenPos()
	err := p.flush(len(p.read), target)
	flushed := p.flushed.Load()
	var again []*rmqWaiter
	for _, w := range p.read {
		res, covered := p.answer(w.pos, target, flushed, err)
		if !covered {
			// Appended after the flush captured its position; the next
			// flush serves it.
			again = append(again, w)
			continue
		}
		w.ch <- res
	}
	clear(p.read)
	p.read = p.read[:0]
	if len(again) > 0 {
		p.mu.Lock()
		p.mu.write = append(p.mu.write, again...)
		p.mu.Unlock()
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
}

// flush flushes up to target (retrying a short flush) serving waiters
// requests and records it.
func (p *rmqGroupPolicy) flush(waiters int, target int64) error {
	return p.runCovering(p.f, &p.cfg, &p.counters, "group", waiters, target)
}

func (p *rmqGroupPolicy) FlushedPos() int64 { return p.flushed.Load() }
func (p *rmqGroupPolicy) Stats() Stats      { return p.snapshot() }

// Close refuses new requests, lets the flusher serve the queued ones, stops
// it, flushes once more and answers every request still queued: nil if the
// final flush covered it, else the sticky error, a short-flush error (at or
// below the written position the final flush was meant to reach) or
// ErrClosed. Close returns the sticky error, or ErrShortFlush if the final
// flush stayed short.
func (p *rmqGroupPolicy) Close() error {
	p.once.Do(func() {
		p.mu.Lock()
		p.mu.closed = true
		p.mu.Unlock()
		close(p.stop)
		<-p.done
		p.mu.Lock()
		late := p.mu.write
		p.mu.write = nil
		p.mu.Unlock()
		target := p.f.WrittenPos()
		err := p.flush(len(late), target)
		flushed := p.flushed.Load()
		for _, w := range late {
			res, covered := p.answer(w.pos, target, flushed, err)
			if !covered {
				res = ErrClosed
			}
			w.ch <- res
		}
		p.cerr = err
		if err == nil && flushed < target {
			p.cerr = shortFlush(target, flushed)
		}
	})
	return p.cerr
}

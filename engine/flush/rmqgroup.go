package flush

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

// groupPolicy is RocketMQ's GroupCommitService. Committers append a waiter
// to the write list and kick the flusher; the flusher swaps the write list
// for its (empty) read list, performs ONE flush, which covers every byte
// appended before it started, and completes every waiter in the read list
// whose position it covers. Waiters that arrive while a flush runs collect in
// the new write list and are served together by the next single flush.
//
// A waiter not completed within SyncFlushTimeout gets ErrTimeout
// (FLUSH_DISK_TIMEOUT); its bytes stay written.
type groupPolicy struct {
	f   Flusher
	cfg Config

	mu struct {
		sync.Mutex
		write []*waiter // guarded by mu
	}
	read    []*waiter // owned by the flusher goroutine
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	flushed atomic.Int64
	err     stickyErr
	closed  atomic.Bool
	once    sync.Once
	cerr    error
	counters
}

type waiter struct {
	pos int64
	ch  chan error // capacity 1
}

var waiterPool = sync.Pool{New: func() any { return &waiter{ch: make(chan error, 1)} }}

func newGroup(f Flusher, start int64, cfg Config) *groupPolicy {
	p := &groupPolicy{f: f, cfg: cfg, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	p.flushed.Store(start)
	go pprof.Do(context.Background(), pprof.Labels("brokerlab", "flush-group"), func(context.Context) { p.loop() })
	return p
}

func (p *groupPolicy) Commit(ctx context.Context, pos int64) error {
	p.commits.Add(1)
	if err := p.err.get(); err != nil {
		return err
	}
	if p.flushed.Load() >= pos {
		return nil
	}
	if p.closed.Load() {
		return ErrClosed
	}
	w := waiterPool.Get().(*waiter)
	w.pos = pos
	p.mu.Lock()
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
		waiterPool.Put(w) // the flusher sent exactly once and holds no reference
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

func (p *groupPolicy) loop() {
	defer close(p.done)
	var coalesce *time.Timer
	if p.cfg.CoalesceWait > 0 {
		coalesce = time.NewTimer(time.Hour)
		coalesce.Stop()
	}
	for {
		select {
		case <-p.kick:
		case <-p.stop:
			p.serve() // drain whoever is still waiting
			return
		}
		if coalesce != nil {
			coalesce.Reset(p.cfg.CoalesceWait)
			select {
			case <-coalesce.C:
			case <-p.stop:
				coalesce.Stop()
			}
		}
		p.serve()
	}
}

// serve swaps the lists and serves the read list with one flush.
func (p *groupPolicy) serve() {
	p.mu.Lock()
	p.read, p.mu.write = p.mu.write, p.read[:0]
	p.mu.Unlock()
	if len(p.read) == 0 {
		return
	}
	var err error
	if err = p.err.get(); err == nil {
		start := time.Now()
		var pos int64
		pos, err = p.f.Flush()
		d := time.Since(start)
		p.recordFlush(d, len(p.read))
		if err != nil {
			err = p.err.set(fmt.Errorf("flush: group flush: %w", err))
		} else {
			maxPos(&p.flushed, pos)
		}
		if p.cfg.OnFlush != nil {
			p.cfg.OnFlush(Event{Start: start, Duration: d, Waiters: len(p.read), FlushedPos: p.flushed.Load(), Err: err})
		}
	}
	flushed := p.flushed.Load()
	var again []*waiter
	for _, w := range p.read {
		switch {
		case err != nil:
			w.ch <- err
		case w.pos <= flushed:
			w.ch <- nil
		default:
			// Appended after the flush captured its position; the next
			// flush serves it.
			again = append(again, w)
		}
	}
	for i := range p.read {
		p.read[i] = nil
	}
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

func (p *groupPolicy) FlushedPos() int64 { return p.flushed.Load() }
func (p *groupPolicy) Stats() Stats      { return p.snapshot() }

// Close serves the remaining waiters, stops the flusher and flushes once more.
func (p *groupPolicy) Close() error {
	p.once.Do(func() {
		p.closed.Store(true)
		close(p.stop)
		<-p.done
		if err := p.err.get(); err != nil {
			p.cerr = err
			return
		}
		pos, err := p.f.Flush()
		if err != nil {
			p.cerr = p.err.set(fmt.Errorf("flush: group flush at close: %w", err))
			return
		}
		maxPos(&p.flushed, pos)
		// A Commit that raced with Close may have queued after the last
		// serve: answer it now.
		p.mu.Lock()
		late := p.mu.write
		p.mu.write = nil
		p.mu.Unlock()
		for _, w := range late {
			if w.pos <= pos {
				w.ch <- nil
			} else {
				w.ch <- ErrClosed
			}
		}
	})
	return p.cerr
}

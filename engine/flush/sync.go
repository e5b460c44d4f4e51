package flush

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// syncPolicy flushes inside every Commit: one flush per acknowledged append,
// even when a concurrent flush already covered it (that would be group
// commit). Commits are serialized by mu, as in a WAL's Save.
type syncPolicy struct {
	f       Flusher
	cfg     Config
	mu      sync.Mutex // serializes Flush calls
	flushed atomic.Int64
	closed  atomic.Bool
	err     stickyErr
	counters
}

func newSync(f Flusher, start int64, cfg Config) *syncPolicy {
	p := &syncPolicy{f: f, cfg: cfg}
	p.flushed.Store(start)
	return p
}

func (p *syncPolicy) Commit(ctx context.Context, pos int64) error {
	p.commits.Add(1)
	if err := p.err.get(); err != nil {
		return err
	}
	if p.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flushLocked(1)
}

// REQUIRES: p.mu held.
func (p *syncPolicy) flushLocked(waiters int) error {
	if err := p.err.get(); err != nil {
		return err
	}
	start := time.Now()
	pos, err := p.f.Flush()
	d := time.Since(start)
	p.recordFlush(d, waiters)
	if err != nil {
		err = p.err.set(fmt.Errorf("flush: sync flush: %w", err))
	} else {
		maxPos(&p.flushed, pos)
	}
	if p.cfg.OnFlush != nil {
		p.cfg.OnFlush(Event{Start: start, Duration: d, Waiters: waiters, FlushedPos: p.flushed.Load(), Err: err})
	}
	return err
}

func (p *syncPolicy) FlushedPos() int64 { return p.flushed.Load() }
func (p *syncPolicy) Stats() Stats      { return p.snapshot() }

func (p *syncPolicy) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flushLocked(0)
}

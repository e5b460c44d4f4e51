package flush

import (
	"context"
	"sync"
	"sync/atomic"
)

// syncPolicy flushes inside every Commit: one flush per acknowledged append,
// even when a concurrent flush already covered it (that would be group
// commit). Flushes are serialized by mu, as in a WAL's Save; the commit log
// calls Commit under its append lock, so each flush covers exactly its
// append.
//
// A ticker flushes, every TickInterval and under the same mu, whatever was
// appended without a Commit (WAIT=false).
//
// A Commit returns nil only when the flushed position reaches its pos; a
// short flush is retried while it makes progress, then answered with
// ErrShortFlush (see the package doc).
type syncPolicy struct {
	f          Flusher
	cfg        Config
	mu         sync.Mutex // serializes Flush calls
	flushState            // flushed position, sticky error
	closed     atomic.Bool
	tick       *ticker
	once       sync.Once
	cerr       error
	counters
}

func newSync(f Flusher, start int64, cfg Config) *syncPolicy {
	p := &syncPolicy{f: f, cfg: cfg}
	p.flushed.Store(start)
	p.tick = startTicker("flush-sync-tick", cfg.TickInterval, p.onTick)
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
	if err := p.flushLocked(1); err != nil {
		return err
	}
	if f := p.flushed.Load(); f < pos {
		p.shortFlushes.Add(1)
		return shortFlush(pos, f)
	}
	return nil
}

// onTick flushes appends nobody committed.
func (p *syncPolicy) onTick() {
	if p.err.get() != nil || !unflushed(p.f, p.flushed.Load()) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() || !unflushed(p.f, p.flushed.Load()) {
		return
	}
	_ = p.flushLocked(0) // sticky: later commits see it
}

// flushLocked flushes everything appended so far, retrying a short flush
// (runCovering).
// REQUIRES: p.mu held.
func (p *syncPolicy) flushLocked(waiters int) error {
	return p.runCovering(p.f, &p.cfg, &p.counters, "sync", waiters, p.f.WrittenPos())
}

func (p *syncPolicy) FlushedPos() int64 { return p.flushed.Load() }
func (p *syncPolicy) Stats() Stats      { return p.snapshot() }

// Close stops the ticker and flushes once more; a final flush that stays
// short of the written position is reported (ErrShortFlush). Commits
// already inside mu finish first; later ones get ErrClosed.
func (p *syncPolicy) Close() error {
	p.once.Do(func() {
		p.closed.Store(true)
		p.tick.halt()
		p.mu.Lock()
		defer p.mu.Unlock()
		target := p.f.WrittenPos()
		p.cerr = p.runCovering(p.f, &p.cfg, &p.counters, "sync", 0, target)
		if f := p.flushed.Load(); p.cerr == nil && f < target {
			p.cerr = shortFlush(target, f)
		}
	})
	return p.cerr
}

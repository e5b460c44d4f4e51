package flush

import (
	"context"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

// asyncPolicy is RocketMQ's FlushRealTimeService: a goroutine sleeps
// Interval (not wakeable, flushCommitLogTimed=true), then flushes if at least
// LeastPages pages are dirty, or everything if ThoroughInterval has passed
// since the last thorough flush. Dirty pages are counted from the Flusher's
// own written position (as RocketMQ reads the mapped file's), so appends
// nobody commits (WAIT=false) are flushed too; Commit only records its
// position as well.
type asyncPolicy struct {
	f          Flusher
	cfg        Config
	wrote      atomic.Int64 // highest position committed (f.WrittenPos() is the other source)
	flushState              // flushed position, sticky error
	closed     atomic.Bool
	stop       chan struct{}
	done       chan struct{}
	closeErr   error
	once       sync.Once
	counters
}

func newAsync(f Flusher, start int64, cfg Config) *asyncPolicy {
	p := &asyncPolicy{f: f, cfg: cfg, stop: make(chan struct{}), done: make(chan struct{})}
	p.wrote.Store(start)
	p.flushed.Store(start)
	go pprof.Do(context.Background(), pprof.Labels("brokerlab", "flush-async"), func(context.Context) { p.loop() })
	return p
}

func (p *asyncPolicy) Commit(ctx context.Context, pos int64) error {
	p.commits.Add(1)
	if err := p.err.get(); err != nil {
		return err
	}
	if p.closed.Load() {
		return ErrClosed
	}
	maxPos(&p.wrote, pos)
	return nil
}

// dirtyPages follows DefaultMappedFile.isAbleToFlush: whole pages between
// the flushed and written positions.
func dirtyPages(wrote, flushed int64) int64 { return wrote/PageSize - flushed/PageSize }

func (p *asyncPolicy) loop() {
	defer close(p.done)
	lastThorough := time.Now()
	t := time.NewTimer(p.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		t.Reset(p.cfg.Interval)
		least := int64(p.cfg.LeastPages)
		if time.Since(lastThorough) >= p.cfg.ThoroughInterval {
			least = 0
			lastThorough = time.Now()
		}
		wrote, flushed := max(p.wrote.Load(), p.f.WrittenPos()), p.flushed.Load()
		if wrote <= flushed || (least > 0 && dirtyPages(wrote, flushed) < least) {
			continue
		}
		if p.flush() != nil {
			return // sticky: nothing more to do until Close
		}
	}
}

func (p *asyncPolicy) flush() error { return p.run(p.f, &p.cfg, &p.counters, "async", 0) }

func (p *asyncPolicy) FlushedPos() int64 { return p.flushed.Load() }
func (p *asyncPolicy) Stats() Stats      { return p.snapshot() }

// Close stops the loop and flushes everything once (RocketMQ retries
// flush(0) up to 10 times at shutdown; one complete flush is equivalent).
func (p *asyncPolicy) Close() error {
	p.once.Do(func() {
		p.closed.Store(true)
		close(p.stop)
		<-p.done
		p.closeErr = p.flush()
	})
	return p.closeErr
}

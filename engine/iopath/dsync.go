package iopath

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"sync"
	"sync/atomic"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// DefaultDSyncWriters is how many durable writes a pwrite or uncached
// segment keeps in flight under Config.DSync when Config.DSyncWriters is 0.
const DefaultDSyncWriters = 4

// dsyncQueueDepth is how many appends per writer may wait for a writer
// before Append blocks (back pressure).
const dsyncQueueDepth = 16

// dsyncBatchBytes bounds one coalesced durable write: a writer that finds
// more jobs queued behind the one it took, each starting where the
// previous ended, writes them with one call of at most this many bytes.
const dsyncBatchBytes = 1 << 20

// ErrNoDSync is returned by the Opener of a write path that has no durable
// write (Config.DSync): mmap (a store through a mapping cannot be made
// durable by itself; only msync can) and pool (its bytes reach the file in
// background commits, not per append).
var ErrNoDSync = errors.New("iopath: write path has no durable write (flush=dsync needs pwrite, uncached or direct)")

// SupportsDSync reports whether write path k can write every append
// durably (Config.DSync).
func SupportsDSync(k Kind) bool { return k == Pwrite || k == Uncached || k == Direct }

// syncSizeForDSync makes a segment's preallocated size durable before
// durable writes go into it: RWF_DSYNC makes a write's bytes durable, but
// not the size fallocate gave the file beyond them, which only an
// fdatasync does (under the other policies their first flush does it). A
// segment opened full is only read and needs nothing.
func syncSizeForDSync(f vfs.File, cfg Config, size, wrotePos int64) error {
	if !cfg.DSync || wrotePos >= size {
		return nil
	}
	if err := f.Datasync(); err != nil {
		return fmt.Errorf("iopath: fdatasync the preallocated %s: %w", f.Name(), err)
	}
	return nil
}

// refuseDSync is the Opener error of a write path without durable writes.
func refuseDSync(k Kind, path string) error {
	return fmt.Errorf("%w: %s %s", ErrNoDSync, k, path)
}

// dsyncWriters writes the appends of a pwrite or uncached segment under
// Config.DSync: each Append's bytes are copied into a job and written by
// one of n writer goroutines with pwritev2(RWF_DSYNC), so up to n durable
// writes of disjoint ranges are in flight at once. Jobs are queued in
// append order and complete in any order; the durable position is the end
// of the longest prefix of jobs that all completed, so it only advances
// over contiguous written bytes. It is the appender's FlushedPos and
// CommittedPos: bytes above it may be missing from the file after a crash
// of the process or a power cut, bytes below it survive both.
//
// A writer takes the next queued job and, without waiting, the jobs queued
// right behind it while each starts where the previous ended (up to
// dsyncBatchBytes): it writes such a run with one durable call, from a copy
// in its own scratch buffer, so under load fewer, larger writes are in
// flight instead of one per append.
//
// Errors: the first failed write is the appender's sticky error; writers
// skip the jobs they take after it, the durable position stops below the
// failed job, and Flush (and every later Append) returns the error.
//
// Locking: mu guards the job list (pending, oldest first) and is held for
// list updates and for copying bytes out of jobs (ReadAt), never across a
// write. Jobs are added by Append (one at a time, the appender's contract);
// writers complete them. cond (on mu) is broadcast whenever the durable
// position moves or a write fails.
type dsyncWriters struct {
	a        *segmentBase
	uncached bool
	n        int

	start   sync.Once
	jobs    chan *dsyncJob
	stopped chan struct{} // closed when every writer has exited

	mu      sync.Mutex
	cond    sync.Cond
	pending []*dsyncJob // queued or in flight or complete above a gap, in offset order; guarded by mu
	durable atomic.Int64
	pool    sync.Pool // *dsyncJob
}

type dsyncJob struct {
	off  int64
	data []byte
	done bool // guarded by dsyncWriters.mu
}

func newDSyncWriters(a *segmentBase, uncached bool, n int, wrotePos int64) *dsyncWriters {
	if n <= 0 {
		n = DefaultDSyncWriters
	}
	d := &dsyncWriters{a: a, uncached: uncached, n: n}
	d.cond.L = &d.mu
	d.durable.Store(wrotePos)
	return d
}

// enqueue queues a durable write of p at off (copied), starting the
// writers on first use. It blocks while every queue slot is taken.
// Called by Append with life read-locked.
func (d *dsyncWriters) enqueue(p []byte, off int64) {
	d.start.Do(func() {
		d.jobs = make(chan *dsyncJob, d.n*dsyncQueueDepth)
		d.stopped = make(chan struct{})
		var wg sync.WaitGroup
		for range d.n {
			wg.Add(1)
			go pprof.Do(context.Background(), pprof.Labels("brokerlab", "iopath-dsync"), func(context.Context) {
				defer wg.Done()
				d.writer()
			})
		}
		go func() { wg.Wait(); close(d.stopped) }()
	})
	j, _ := d.pool.Get().(*dsyncJob)
	if j == nil {
		j = &dsyncJob{}
	}
	j.off, j.done = off, false
	j.data = append(j.data[:0], p...)
	d.mu.Lock()
	d.pending = append(d.pending, j)
	d.mu.Unlock()
	d.jobs <- j
}

func (d *dsyncWriters) writer() {
	var run []*dsyncJob
	var scratch []byte
	var next *dsyncJob
	for {
		j := next
		next = nil
		if j == nil {
			var ok bool
			if j, ok = <-d.jobs; !ok {
				return
			}
		}
		run = append(run[:0], j)
		end, n := j.off+int64(len(j.data)), len(j.data)
	more:
		for n < dsyncBatchBytes {
			select {
			case k, ok := <-d.jobs:
				if !ok {
					break more
				}
				if k.off != end || n+len(k.data) > dsyncBatchBytes {
					next = k // another writer took the job between: k starts the next run
					break more
				}
				run = append(run, k)
				end += int64(len(k.data))
				n += len(k.data)
			default:
				break more
			}
		}
		data := j.data
		if len(run) > 1 {
			scratch = scratch[:0]
			for _, k := range run {
				scratch = append(scratch, k.data...)
			}
			data = scratch
		}
		err := d.a.sticky.get()
		if err == nil {
			_, werr := vfs.WriteAtDSync(d.a.file, data, j.off, d.uncached)
			d.a.countWrite(len(data))
			if werr != nil {
				err = d.a.fail(werr)
			}
		}
		for _, k := range run {
			d.complete(k, err)
		}
		clear(run)
	}
}

// complete marks j written (err == nil) and advances the durable position
// over the completed prefix, releasing its jobs; a failure only wakes the
// waiters (the prefix never passes a failed job).
func (d *dsyncWriters) complete(j *dsyncJob, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.cond.Broadcast()
		return
	}
	j.done = true
	k := 0
	for k < len(d.pending) && d.pending[k].done {
		k++
	}
	if k == 0 {
		return
	}
	last := d.pending[k-1]
	end := last.off + int64(len(last.data))
	for i := range k {
		d.pool.Put(d.pending[i])
		d.pending[i] = nil
	}
	d.pending = append(d.pending[:0], d.pending[k:]...)
	d.durable.Store(end)
	d.a.flushed.Store(end)
	d.cond.Broadcast()
}

// wait blocks until the durable position reaches pos or a write failed; it
// returns the durable position and the sticky error.
func (d *dsyncWriters) wait(pos int64) (int64, error) {
	if dp := d.durable.Load(); dp >= pos {
		return dp, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		if dp := d.durable.Load(); dp >= pos {
			return dp, nil
		}
		if err := d.a.sticky.get(); err != nil {
			return d.durable.Load(), err
		}
		d.cond.Wait()
	}
}

// readPending copies into q (file bytes [off, off+len(q))) what the jobs
// not yet below the durable position hold, and returns the durable
// position as of the copy: bytes of q below it are on disk, bytes at or
// above it were all copied from jobs (every byte in [durable, WrotePos)
// belongs to a pending job).
func (d *dsyncWriters) readPending(q []byte, off int64) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	end := off + int64(len(q))
	for _, j := range d.pending {
		jend := j.off + int64(len(j.data))
		if jend <= off || j.off >= end {
			continue
		}
		lo, hi := max(off, j.off), min(end, jend)
		copy(q[lo-off:hi-off], j.data[lo-j.off:hi-j.off])
	}
	return d.durable.Load()
}

// stop lets the writers finish every queued job and waits for them. Called
// by Close with life write-locked (no Append in flight).
func (d *dsyncWriters) stop() {
	if d.jobs == nil {
		return
	}
	close(d.jobs)
	<-d.stopped
}

package segment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/vfs"
)

// Config describes a queue of segments.
type Config struct {
	FS   vfs.FS
	Dir  string
	Size int64
	Path iopath.Kind
	IO   iopath.Config
	// Preallocate the next segment in the background after each roll.
	PreallocateNext bool
}

// Stats are cumulative counters of a queue.
type Stats struct {
	Rolls        uint64 // segments started by Roll
	Prepared     uint64 // rolls served by a segment the allocator had ready
	SyncCreates  uint64 // rolls that had to create the segment inline (a stall)
	CreateNanos  uint64 // time spent creating segments (either goroutine)
	RemovedFiles uint64
}

// Queue is an ordered list of segments.
//
// Concurrency: the list is a copy-on-write snapshot. Readers (Segments,
// First, Last, Find) load it without a lock and may use it while it is
// replaced. Every change (Roll by the log's writer, DetachFirst by the
// cleaner, RemoveAfter by recovery, Close) copies and stores it under smu, so
// two changes never start from the same snapshot and one cannot undo the
// other (a roll racing a detach would otherwise drop the new segment from
// the list, or bring a deleted one back).
type Queue struct {
	cfg  Config
	smu  sync.Mutex // serialises changes to segs (Roll and DetachFirst hold it only to copy)
	segs atomic.Pointer[[]*Segment]

	alloc struct {
		sync.Mutex
		cond  *sync.Cond
		want  int64 // start offset requested, -1 none
		ready *Segment
		busy  bool
	}
	stop   chan struct{}
	done   chan struct{}
	closed atomic.Bool

	rolls, prepared, syncCreates, createNanos, removed atomic.Uint64
}

// Open loads the segments in cfg.Dir (creating it). Every file must be named
// by a 20-digit offset and be exactly cfg.Size long, except that a
// zero-length last file is deleted (RocketMQ doLoad). Loaded segments are
// opened with wrotePos = wrote(start) — the caller (the commit log's
// recovery) decides the write positions; use Size for full segments.
func Open(cfg Config, wrote func(start int64) int64) (*Queue, error) {
	if cfg.FS == nil {
		cfg.FS = vfs.Default
	}
	if cfg.Size <= 0 {
		return nil, fmt.Errorf("segment: size %d must be positive", cfg.Size)
	}
	if err := cfg.FS.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("segment: create %s: %w", cfg.Dir, err)
	}
	ents, err := cfg.FS.ReadDir(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("segment: read %s: %w", cfg.Dir, err)
	}
	var starts []int64
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		st, ok := ParseName(e.Name())
		if !ok {
			continue // temp files and foreign files are ignored
		}
		starts = append(starts, st)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	q := &Queue{cfg: cfg, stop: make(chan struct{}), done: make(chan struct{})}
	q.alloc.cond = sync.NewCond(&q.alloc.Mutex)
	q.alloc.want = -1
	var segs []*Segment
	for i, st := range starts {
		p := filepath.Join(cfg.Dir, Name(st))
		fi, err := cfg.FS.Stat(p)
		if err != nil {
			closeAll(segs)
			return nil, fmt.Errorf("segment: stat %s: %w", p, err)
		}
		if fi.Size() == 0 && i == len(starts)-1 {
			if err := cfg.FS.Remove(p); err != nil {
				closeAll(segs)
				return nil, fmt.Errorf("segment: remove empty %s: %w", p, err)
			}
			continue
		}
		if fi.Size() != cfg.Size {
			closeAll(segs)
			return nil, fmt.Errorf("%w: %s is %d bytes, want %d", ErrSizeMismatch, p, fi.Size(), cfg.Size)
		}
		if st%cfg.Size != 0 {
			closeAll(segs)
			return nil, fmt.Errorf("%w: %s starts at %d, not a multiple of %d", ErrSizeMismatch, p, st, cfg.Size)
		}
		wp := cfg.Size
		if wrote != nil {
			wp = wrote(st)
		}
		app, err := iopath.Open(cfg.Path, cfg.FS, p, cfg.Size, wp, cfg.IO)
		if err != nil {
			closeAll(segs)
			return nil, fmt.Errorf("segment: open %s: %w", p, err)
		}
		segs = append(segs, &Segment{start: st, path: p, app: app})
	}
	q.segs.Store(&segs)
	go pprof.Do(context.Background(), pprof.Labels("brokerlab", "segment-allocator"), func(context.Context) { q.allocLoop() })
	return q, nil
}

func closeAll(segs []*Segment) {
	for _, s := range segs {
		s.app.Close()
	}
}

// Segments returns the current snapshot, oldest first. Do not modify it.
func (q *Queue) Segments() []*Segment {
	if p := q.segs.Load(); p != nil {
		return *p
	}
	return nil
}

// First returns the oldest segment or nil.
func (q *Queue) First() *Segment {
	s := q.Segments()
	if len(s) == 0 {
		return nil
	}
	return s[0]
}

// Last returns the newest segment or nil.
func (q *Queue) Last() *Segment {
	s := q.Segments()
	if len(s) == 0 {
		return nil
	}
	return s[len(s)-1]
}

// Find returns the segment holding global offset off.
func (q *Queue) Find(off int64) (*Segment, error) {
	segs := q.Segments()
	if len(segs) == 0 {
		return nil, ErrNotFound
	}
	i := int((off - segs[0].start) / q.cfg.Size)
	if off >= segs[0].start && i < len(segs) && segs[i].Contains(off) {
		return segs[i], nil
	}
	for _, s := range segs { // gaps (RocketMQ checkSelf tolerates them)
		if s.Contains(off) {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%w: offset %d", ErrNotFound, off)
}

// SegmentSize is the configured size.
func (q *Queue) SegmentSize() int64 { return q.cfg.Size }

// Dir is the queue's directory.
func (q *Queue) Dir() string { return q.cfg.Dir }

// Roll makes a new segment starting at start the last one and returns it. If
// the allocator has it ready it is used at once; otherwise it is created
// inline. Then the allocator is asked for the one after.
// REQUIRES: the log's writer (append lock held).
func (q *Queue) Roll(start int64) (*Segment, error) {
	if q.closed.Load() {
		return nil, ErrClosed
	}
	if start%q.cfg.Size != 0 {
		panic(fmt.Sprintf("segment: roll to unaligned offset %d", start))
	}
	seg, err := q.take(start)
	if err != nil {
		return nil, err
	}
	q.smu.Lock()
	old := q.Segments()
	next := make([]*Segment, len(old), len(old)+1)
	copy(next, old)
	next = append(next, seg)
	q.segs.Store(&next)
	q.smu.Unlock()
	q.rolls.Add(1)
	if q.cfg.PreallocateNext {
		q.request(start + q.cfg.Size)
	}
	return seg, nil
}

// take returns the segment at start, from the allocator if it has (or is
// making) it, else created inline.
func (q *Queue) take(start int64) (*Segment, error) {
	q.alloc.Lock()
	for q.alloc.busy { // a creation in progress finishes first (no duplicates)
		q.alloc.cond.Wait()
	}
	r := q.alloc.ready
	q.alloc.ready = nil
	q.alloc.want = -1 // whatever was requested, the writer decides now
	q.alloc.Unlock()
	if r != nil && r.start == start {
		q.prepared.Add(1)
		return r, nil
	}
	if r != nil {
		q.discard(r) // prepared for another offset, never used
	}
	q.syncCreates.Add(1)
	return q.create(start)
}

func (q *Queue) request(start int64) {
	q.alloc.Lock()
	q.alloc.want = start
	q.alloc.Unlock()
	q.alloc.cond.Broadcast()
}

func (q *Queue) allocLoop() {
	defer close(q.done)
	for {
		q.alloc.Lock()
		for !q.closed.Load() && (q.alloc.want < 0 || (q.alloc.ready != nil && q.alloc.ready.start == q.alloc.want)) {
			q.alloc.cond.Wait()
		}
		if q.closed.Load() {
			q.alloc.Unlock()
			return
		}
		start := q.alloc.want
		q.alloc.busy = true
		stale := q.alloc.ready
		q.alloc.ready = nil
		q.alloc.Unlock()
		if stale != nil {
			q.discard(stale)
		}
		seg, err := q.create(start)
		q.alloc.Lock()
		q.alloc.busy = false
		if err == nil {
			q.alloc.ready = seg
		} else if q.alloc.want == start {
			// Give up on this one; the writer will create it inline and
			// see the error itself.
			q.alloc.want = -1
		}
		q.alloc.Unlock()
		q.alloc.cond.Broadcast()
	}
}

// create makes, preallocates and opens the segment at start.
func (q *Queue) create(start int64) (*Segment, error) {
	t0 := time.Now()
	defer func() { q.createNanos.Add(uint64(time.Since(t0))) }()
	p := filepath.Join(q.cfg.Dir, Name(start))
	app, err := iopath.Open(q.cfg.Path, q.cfg.FS, p, q.cfg.Size, 0, q.cfg.IO)
	if err != nil {
		return nil, fmt.Errorf("segment: create %s: %w", p, err)
	}
	if err := q.cfg.FS.SyncDir(q.cfg.Dir); err != nil {
		app.Close()
		return nil, fmt.Errorf("segment: sync dir after creating %s: %w", p, err)
	}
	return &Segment{start: start, path: p, app: app}, nil
}

// discard closes and removes a prepared segment that was never used.
func (q *Queue) discard(s *Segment) {
	s.app.Close()
	_ = q.cfg.FS.Remove(s.path)
}

// RemoveFirst closes and deletes the oldest segment (cleaning). It never
// removes the last segment.
// REQUIRES: no reader is using the segment (the caller coordinates).
func (q *Queue) RemoveFirst() (*Segment, error) {
	s := q.DetachFirst()
	if s == nil {
		return nil, nil
	}
	return s, q.Delete(s)
}

// detachHook, when set by a test, runs inside DetachFirst between loading the
// list and storing its successor: the window in which a concurrent change
// must wait.
var detachHook func()

// DetachFirst takes the oldest segment out of the queue's snapshot, so that
// Find, First and Segments no longer return it, and returns it (nil when
// only the last segment is left: it is never detached). The file stays open
// and on disk until Delete: a cleaner detaches under its readers' barrier
// and deletes outside it, so readers never wait for a close, an unlink or a
// directory fsync.
func (q *Queue) DetachFirst() *Segment {
	q.smu.Lock()
	defer q.smu.Unlock()
	old := q.Segments()
	if len(old) <= 1 {
		return nil
	}
	if detachHook != nil {
		detachHook()
	}
	next := append([]*Segment(nil), old[1:]...)
	q.segs.Store(&next)
	return old[0]
}

// Delete closes and removes a detached segment's file and syncs the
// directory.
// REQUIRES: s was returned by DetachFirst and no reader still uses it.
func (q *Queue) Delete(s *Segment) error {
	if err := s.app.Close(); err != nil {
		return fmt.Errorf("segment: close %s: %w", s.path, err)
	}
	if err := q.cfg.FS.Remove(s.path); err != nil {
		return fmt.Errorf("segment: remove %s: %w", s.path, err)
	}
	q.removed.Add(1)
	return q.cfg.FS.SyncDir(q.cfg.Dir)
}

// RemoveAfter closes and deletes every segment that starts at or after off
// (recovery drops segments past the recovered end).
// REQUIRES: the log's writer, before appends start.
func (q *Queue) RemoveAfter(off int64) error {
	q.smu.Lock()
	defer q.smu.Unlock()
	old := q.Segments()
	var keep []*Segment
	var errs []error
	for _, s := range old {
		if s.start < off {
			keep = append(keep, s)
			continue
		}
		if err := s.app.Close(); err != nil {
			errs = append(errs, err)
		}
		if err := q.cfg.FS.Remove(s.path); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
		q.removed.Add(1)
	}
	q.segs.Store(&keep)
	if len(errs) > 0 {
		return fmt.Errorf("segment: remove after %d: %v", off, errs)
	}
	return q.cfg.FS.SyncDir(q.cfg.Dir)
}

// Stats returns cumulative counters.
func (q *Queue) Stats() Stats {
	return Stats{
		Rolls: q.rolls.Load(), Prepared: q.prepared.Load(), SyncCreates: q.syncCreates.Load(),
		CreateNanos: q.createNanos.Load(), RemovedFiles: q.removed.Load(),
	}
}

// Close stops the allocator, deletes a prepared segment that was never used
// (so a reopen does not see an empty file past the end) and closes every
// segment. It does not flush.
func (q *Queue) Close() error {
	if q.closed.Swap(true) {
		return nil
	}
	// Wake the allocator under its lock so it cannot miss the close between
	// checking closed and waiting.
	q.alloc.Lock()
	q.alloc.cond.Broadcast()
	q.alloc.Unlock()
	<-q.done
	if r := q.alloc.ready; r != nil {
		q.alloc.ready = nil
		q.discard(r)
	}
	q.smu.Lock()
	defer q.smu.Unlock()
	var first error
	for _, s := range q.Segments() {
		if err := s.app.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

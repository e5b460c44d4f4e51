package commitlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/segment"
)

// Log is an open commit log. See the package doc for the concurrency contract.
type Log struct {
	cfg    Config
	q      *segment.Queue
	policy flush.Policy

	mu sync.Mutex // the append lock (putMessageLock); guards the last segment's writes
	// beginInLock is the monotonic nanotime at which the current holder of
	// mu took it, 0 when free (RocketMQ beginTimeInLock).
	beginInLock atomic.Int64
	// wrote is the global offset one past the last appended record
	// (RocketMQ getMaxOffset).
	wrote atomic.Int64

	flushMu sync.Mutex // serializes flushAll
	flushed atomic.Int64

	// rmu protects segments against removal while a reader uses them: readers
	// hold it shared; cleaning takes it only to detach a segment from the
	// snapshot, never across I/O.
	rmu sync.RWMutex

	werr   atomic.Pointer[error] // sticky write/flush error
	closed atomic.Bool

	scratch sync.Pool // *[]byte encode buffers

	st  logCounters
	raw rawState // replica appends (raw.go)
	// recovered describes what Open found.
	recovered OpenReport
}

type logCounters struct {
	appends, bytes, blanks, lockHeldNanos, maxLockHeld, busyRefused atomic.Uint64
}

// Stats are cumulative counters the harness reads.
type Stats struct {
	Appends       uint64
	Bytes         uint64 // record bytes appended (blanks excluded)
	Blanks        uint64 // end-of-segment blank records written
	LockHeldNanos uint64 // total time the append lock was held
	MaxLockHeld   time.Duration
	BusyRefused   uint64 // appends refused with OS_PAGE_CACHE_BUSY
	MaxOffset     int64
	FlushedOffset int64
	Segment       segment.Stats
	Flush         flush.Stats
}

// monotonic clock for lock timing.
var epoch = time.Now()

func nanotime() int64 { return int64(time.Since(epoch)) + 1 }

// Stats returns a snapshot of the counters.
func (l *Log) Stats() Stats {
	return Stats{
		Appends:       l.st.appends.Load(),
		Bytes:         l.st.bytes.Load(),
		Blanks:        l.st.blanks.Load(),
		LockHeldNanos: l.st.lockHeldNanos.Load(),
		MaxLockHeld:   time.Duration(l.st.maxLockHeld.Load()),
		BusyRefused:   l.st.busyRefused.Load(),
		MaxOffset:     l.wrote.Load(),
		FlushedOffset: l.flushed.Load(),
		Segment:       l.q.Stats(),
		Flush:         l.policy.Stats(),
	}
}

// Config returns the configuration the log was opened with (defaults filled in).
func (l *Log) Config() Config { return l.cfg }

// MaxOffset is one past the last appended record.
func (l *Log) MaxOffset() int64 { return l.wrote.Load() }

// FlushedOffset is the highest offset known durable.
func (l *Log) FlushedOffset() int64 { return l.flushed.Load() }

// CommittedOffset is the offset below which every appended byte has left
// user space (reached the page cache or the device) and so survives a
// crash of the process: MaxOffset for mmap and pwrite, the pool's committed
// position, the direct path's written position. Readers that publish
// records (the dispatcher) must not pass it: a record above it can vanish
// in a kill -9 and its queue offset be handed to another message (RocketMQ
// reads the pool path only up to the committed position).
func (l *Log) CommittedOffset() int64 {
	wrote := l.wrote.Load()
	flushed := l.flushed.Load()
	c := wrote
	segs := l.q.Segments()
	for i := len(segs) - 1; i >= 0; i-- {
		s := segs[i]
		if s.End() <= flushed {
			break // flushed implies committed, here and before
		}
		if s.Start() >= wrote {
			continue // rolled, nothing published in it yet
		}
		app := s.Appender()
		if cp := iopath.CommittedPos(app); cp < app.WrotePos() {
			c = min(c, s.Start()+cp)
		}
	}
	return max(min(c, wrote), flushed)
}

// MinOffset is the first offset still stored (the first segment's start),
// or MaxOffset when the log is empty.
func (l *Log) MinOffset() int64 {
	if s := l.q.First(); s != nil {
		return s.Start()
	}
	return l.wrote.Load()
}

// SegmentSize is the configured segment size.
func (l *Log) SegmentSize() int64 { return l.cfg.SegmentSize }

// Segments returns the current segments, oldest first (for probes and
// cleaning). Do not modify the slice.
func (l *Log) Segments() []*segment.Segment { return l.q.Segments() }

// RollNextFile returns the start of the segment after the one holding off
// (RocketMQ rollNextFile), used by readers that meet a blank record.
func (l *Log) RollNextFile(off int64) int64 {
	return off + l.cfg.SegmentSize - off%l.cfg.SegmentSize
}

// LockHeldFor reports how long the current holder has held the append lock
// (0 when it is free). RocketMQ's "OS page cache busy" signal.
func (l *Log) LockHeldFor() time.Duration {
	b := l.beginInLock.Load()
	if b == 0 {
		return 0
	}
	return time.Duration(nanotime() - b)
}

// Err returns the sticky write/flush error, if any.
func (l *Log) Err() error {
	if p := l.werr.Load(); p != nil {
		return *p
	}
	return nil
}

func (l *Log) setErr(err error) error {
	l.werr.CompareAndSwap(nil, &err)
	return l.Err()
}

// Flush makes everything appended so far durable, whatever the policy. It is
// the Flusher the policy drives, and callers may use it directly (shutdown).
func (l *Log) Flush() (int64, error) { return l.flushAll() }

// WrittenPos is every byte appended so far (MaxOffset), waited for or not:
// the flush policy's background work flushes up to it (flush.Flusher).
func (l *Log) WrittenPos() int64 { return l.wrote.Load() }

// flushAll flushes, oldest first, every segment with unflushed bytes up to
// the current write position. Unlike RocketMQ's flush(), which flushes one
// segment per call, a flush that spans a roll completes in one call, so a
// group-commit waiter is never left behind by a roll.
func (l *Log) flushAll() (int64, error) {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	if err := l.Err(); err != nil {
		return l.flushed.Load(), err
	}
	// No read barrier is needed (or taken: an fdatasync under it would stall
	// readers behind the disk): cleaning removes only segments that end at
	// or below the flushed offset, and this loop touches none of those.
	segs := l.q.Segments()
	flushed := l.flushed.Load()
	for _, s := range segs {
		if s.End() <= flushed {
			continue
		}
		app := s.Appender()
		if app.FlushedPos() < app.WrotePos() {
			fp, err := app.Flush()
			if err != nil {
				return flushed, l.setErr(fmt.Errorf("commitlog: flush %s: %w", s.Path(), err))
			}
			flushed = s.Start() + fp
		} else {
			flushed = s.Start() + app.FlushedPos()
		}
		if !s.Full() {
			break
		}
	}
	// A segment's flush covers what it held when it ran, which can be past
	// the log's published end (a record or blank being appended): the
	// flushed offset never passes MaxOffset.
	flushed = min(flushed, l.wrote.Load())
	if flushed > l.flushed.Load() {
		l.flushed.Store(flushed)
	}
	return l.flushed.Load(), nil
}

// Close stops the flush policy (which flushes once more) and closes every
// segment. Appends must have stopped.
func (l *Log) Close() error {
	if l.closed.Swap(true) {
		return nil
	}
	l.mu.Lock() // wait for an append in progress
	l.mu.Unlock()
	perr := l.policy.Close()
	l.rmu.Lock()
	defer l.rmu.Unlock()
	qerr := l.q.Close()
	if perr != nil {
		return perr
	}
	return qerr
}

// commit waits for the flush policy to cover end.
func (l *Log) commit(ctx context.Context, end int64) error {
	err := l.policy.Commit(ctx, end)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flush.ErrTimeout):
		return statusErr(FlushDiskTimeout, err)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return statusErr(UnknownError, err)
	default:
		return statusErr(ServiceNotAvailable, l.setErr(err))
	}
}

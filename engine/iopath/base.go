package iopath

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// openSegmentFile opens path read-write with extraFlag, creating it if
// missing, checks an existing file's size, and preallocates it to exactly
// size. An empty file counts as new (a crash between create and fallocate).
func openSegmentFile(fs vfs.FS, kind Kind, path string, size, wrotePos int64, extraFlag int) (vfs.File, error) {
	if size <= 0 || wrotePos < 0 || wrotePos > size {
		return nil, fmt.Errorf("%w: %s %s: size %d, wrotePos %d", ErrBadSize, kind, path, size, wrotePos)
	}
	_, statErr := fs.Stat(path)
	existed := statErr == nil
	f, err := fs.OpenFile(path, os.O_RDWR|os.O_CREATE|extraFlag, 0o644)
	if err != nil {
		if errors.Is(err, vfs.ErrUnsupported) {
			if !existed {
				_ = fs.Remove(path) // open may have created it before refusing the flag
			}
			return nil, fmt.Errorf("%w: %s %s: %w", ErrUnsupported, kind, path, err)
		}
		return nil, fmt.Errorf("iopath: %s: %w", kind, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("iopath: %s: %w", kind, err)
	}
	if cur := fi.Size(); (cur != 0 && cur != size) || (cur == 0 && wrotePos > 0) {
		f.Close()
		return nil, fmt.Errorf("%w: %s %s is %d bytes, want %d (wrotePos %d)", ErrSizeMismatch, kind, path, cur, size, wrotePos)
	}
	if err := f.Allocate(size); err != nil {
		f.Close()
		if !existed {
			// A failed fallocate (ENOSPC) can leave a partly sized file:
			// remove the file this call created, or every later open of
			// it fails on its size.
			_ = fs.Remove(path)
		}
		return nil, fmt.Errorf("iopath: %s: preallocate %s: %w", kind, path, err)
	}
	return f, nil
}

// segmentBase holds what every write path shares: positions, the sticky
// error, the lifetime lock and counters.
//
// Locking: life is read-locked by every Append, Flush, ReadAt (and Slice) for
// its whole duration and write-locked by Close, so Close waits for calls in
// flight and memory is never released under them; closed is guarded by it.
// flushMu serialises Flush calls. wrote and flushed are atomics written by
// the appending and the flushing goroutine respectively.
type segmentBase struct {
	kind Kind
	path string
	file vfs.File
	size int64

	wrote   atomic.Int64
	flushed atomic.Int64

	life    sync.RWMutex
	closed  bool // guarded by life
	flushMu sync.Mutex

	sticky stickyErr
	ioCounters
}

func (b *segmentBase) init(kind Kind, path string, f vfs.File, size, wrotePos int64) {
	b.kind, b.path, b.file, b.size = kind, path, f, size
	b.wrote.Store(wrotePos)
	b.flushed.Store(wrotePos)
}

func (b *segmentBase) WrotePos() int64   { return b.wrote.Load() }
func (b *segmentBase) FlushedPos() int64 { return b.flushed.Load() }
func (b *segmentBase) Size() int64       { return b.size }

// The appender skeleton: every write path's Append, Flush and ReadAt is
// one of these openings around the path's own step, so the locking, the
// closed and sticky checks and the flushed-position bookkeeping are written
// once.

// appendWith is Append's skeleton: with life read-locked it checks the
// appender may take len(p) bytes (appendStart) and, for a non-empty p,
// returns write(p, w): the new WrotePos after writing p at w, or the error.
// An empty p is accepted without calling write.
func (b *segmentBase) appendWith(p []byte, write func(p []byte, w int64) (int64, error)) (int64, error) {
	b.life.RLock()
	defer b.life.RUnlock()
	w, err := b.appendStart(len(p))
	if err != nil || len(p) == 0 {
		return w, err
	}
	return write(p, w)
}

// flushWith is Flush's skeleton: with life read-locked and flushMu held it
// checks the appender may flush (flushStart) and returns flush(f), f being
// the flushed position.
func (b *segmentBase) flushWith(flush func(f int64) (int64, error)) (int64, error) {
	b.life.RLock()
	defer b.life.RUnlock()
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	f, err := b.flushStart()
	if err != nil {
		return f, err
	}
	return flush(f)
}

// syncTo ends a Flush that found the bytes up to w written and f flushed:
// nothing to do if w == f; else it runs sync (fdatasync or msync; timed and
// counted), records a failure as the sticky error, and otherwise makes w
// the flushed position. Called inside flushWith.
func (b *segmentBase) syncTo(f, w int64, sync func() error) (int64, error) {
	if w == f {
		return f, nil
	}
	t0 := time.Now()
	err := sync()
	b.countSync(time.Since(t0))
	if err != nil {
		return f, b.fail(err)
	}
	b.flushed.Store(w)
	return w, nil
}

// readWith is ReadAt's skeleton: with life read-locked it clamps the read
// to WrotePos (readStart) and, when there is something to read, has read
// fill q = p[:n] from off; it returns n and readStart's error (io.EOF for a
// short read), or read's count and error if read failed.
func (b *segmentBase) readWith(p []byte, off int64, read func(q []byte, off int64) (int, error)) (int, error) {
	b.life.RLock()
	defer b.life.RUnlock()
	n, rerr := b.readStart(p, off)
	if n == 0 {
		return 0, rerr
	}
	if m, err := read(p[:n], off); err != nil {
		return m, err
	}
	return n, rerr
}

// appendStart is the opening every Append shares, called with life
// read-locked: the position to append n bytes at, or the error to return
// with it — ErrClosed, the sticky error, or ErrFull when n bytes do not
// fit.
func (b *segmentBase) appendStart(n int) (int64, error) {
	w := b.wrote.Load()
	if b.closed {
		return w, ErrClosed
	}
	if err := b.sticky.get(); err != nil {
		return w, err
	}
	if int64(n) > b.size-w {
		return w, ErrFull
	}
	return w, nil
}

// flushStart is the opening every Flush shares, called with life
// read-locked and flushMu held: the flushed position, and ErrClosed or the
// sticky error when there is nothing to flush. (A closed appender has no
// Flush in flight, so taking flushMu first never waits.)
func (b *segmentBase) flushStart() (int64, error) {
	f := b.flushed.Load()
	if b.closed {
		return f, ErrClosed
	}
	return f, b.sticky.get()
}

// readStart is the opening every ReadAt shares, called with life
// read-locked: ErrClosed, else readSpan.
func (b *segmentBase) readStart(p []byte, off int64) (int, error) {
	if b.closed {
		return 0, ErrClosed
	}
	return b.readSpan(p, off)
}

// fail records err as the appender's sticky error (if it is the first) and
// returns the recorded error.
func (b *segmentBase) fail(err error) error {
	return b.sticky.set(fmt.Errorf("iopath: %s %s: %w", b.kind, b.path, err))
}

// readSpan clamps a read of len(p) bytes at off to WrotePos: it returns how
// many bytes to read and the error to return with them (io.EOF if short).
func (b *segmentBase) readSpan(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%w: read at offset %d", ErrBadSize, off)
	}
	w := b.wrote.Load()
	if off >= w {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	if int64(len(p)) > w-off {
		return int(w - off), io.EOF
	}
	return len(p), nil
}

// stickyErr is the first I/O failure of an appender; once set every later
// Append and Flush returns it.
type stickyErr struct {
	failed atomic.Bool
	mu     sync.Mutex
	err    error
}

func (s *stickyErr) get() error {
	if !s.failed.Load() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *stickyErr) set(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
		s.failed.Store(true)
	}
	return s.err
}

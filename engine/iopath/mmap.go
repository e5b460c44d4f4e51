package iopath

import (
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

func init() { Register(Mmap, openMmap) }

// Slicer is implemented by write paths that can hand out bytes without
// copying (mmap). The returned slice aliases the segment's mapping: it must
// not be modified, and it is invalid (using it faults) after Close.
type Slicer interface {
	// Slice returns [off, off+n), which must lie below WrotePos.
	Slice(off, n int64) ([]byte, error)
}

// mmapAppender maps the whole preallocated file MAP_SHARED. Append copies
// into the mapping; Flush msyncs [FlushedPos rounded down to a page,
// WrotePos as captured at the start of the Flush).
//
// Locking: Append takes no lock but life (shared); Flush holds flushMu and
// life (shared) across msync, so an Append overlapping a Flush never waits
// for it. Bytes appended while msync runs are covered by the next Flush.
type mmapAppender struct {
	segmentBase
	data     []byte // the mapping; nil after Close
	pageMask int64
}

func openMmap(fs vfs.FS, path string, size, wrotePos int64, cfg Config) (Appender, error) {
	if err := validateConfig(&cfg); err != nil {
		return nil, err
	}
	if size > math.MaxInt {
		return nil, fmt.Errorf("%w: mmap: size %d does not fit in an int", ErrBadSize, size)
	}
	if cfg.DSync {
		return nil, refuseDSync(Mmap, path)
	}
	f, err := openSegmentFile(fs, Mmap, path, size, wrotePos, 0)
	if err != nil {
		return nil, err
	}
	data, err := f.Map(int(size))
	if err != nil {
		f.Close()
		if errors.Is(err, vfs.ErrUnsupported) {
			return nil, fmt.Errorf("%w: mmap %s: %w", ErrUnsupported, path, err)
		}
		return nil, fmt.Errorf("iopath: mmap: %w", err)
	}
	a := &mmapAppender{data: data, pageMask: int64(os.Getpagesize()) - 1}
	a.init(Mmap, path, f, size, wrotePos)
	if err := a.applyKnobs(cfg, wrotePos); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

func (a *mmapAppender) applyKnobs(cfg Config, wrotePos int64) error {
	if cfg.Warm {
		touchPages(a.data, wrotePos)
	}
	if cfg.Mlock {
		if err := lockMemory(a.data, "mmap "+a.path); err != nil {
			return err
		}
	}
	return madvise(a.data, cfg.Advice)
}

func (a *mmapAppender) Append(p []byte) (int64, error) {
	return a.appendWith(p, func(p []byte, w int64) (int64, error) {
		copy(a.data[w:], p)
		w += int64(len(p))
		a.wrote.Store(w)
		a.countAppend(len(p))
		return w, nil
	})
}

func (a *mmapAppender) Flush() (int64, error) {
	return a.flushWith(func(f int64) (int64, error) {
		w := a.wrote.Load()
		return a.syncTo(f, w, func() error { return a.file.Msync(a.data[f&^a.pageMask : w]) })
	})
}

func (a *mmapAppender) ReadAt(p []byte, off int64) (int, error) {
	return a.readWith(p, off, func(q []byte, off int64) (int, error) {
		return copy(q, a.data[off:]), nil
	})
}

func (a *mmapAppender) Slice(off, n int64) ([]byte, error) {
	a.life.RLock()
	defer a.life.RUnlock()
	if a.closed {
		return nil, ErrClosed
	}
	if off < 0 || n < 0 || off+n > a.wrote.Load() {
		return nil, fmt.Errorf("%w: slice [%d, %d+%d) beyond WrotePos %d", ErrBadSize, off, off, n, a.wrote.Load())
	}
	return a.data[off : off+n : off+n], nil
}

// Close unmaps the segment (dirty pages stay in the page cache and reach the
// file eventually) and closes the file. It is idempotent.
func (a *mmapAppender) Close() error {
	a.life.Lock()
	defer a.life.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	err := a.file.Unmap(a.data)
	a.data = nil
	return errors.Join(err, a.file.Close())
}

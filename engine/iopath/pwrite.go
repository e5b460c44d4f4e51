package iopath

import (
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

func init() { Register(Pwrite, openPwrite) }

// pwriteAppender writes every Append with one pwrite(2) into the page
// cache; Flush is fdatasync.
//
// Locking: Append takes only life (shared); Flush holds flushMu and life
// (shared) across fdatasync, capturing WrotePos before it, so an Append
// overlapping a Flush never waits for it.
//
// The uncached path is this appender with writeAt = vfs.WriteAtUncached
// (pwritev2 with RWF_DONTCACHE); see uncached.go.
type pwriteAppender struct {
	segmentBase
	// writeAt writes one Append; nil is a plain pwrite.
	writeAt func(f vfs.File, p []byte, off int64) (int, error)
}

func openPwrite(fs vfs.FS, path string, size, wrotePos int64, cfg Config) (Appender, error) {
	if err := validateConfig(&cfg); err != nil {
		return nil, err
	}
	f, err := openSegmentFile(fs, Pwrite, path, size, wrotePos, 0)
	if err != nil {
		return nil, err
	}
	a := &pwriteAppender{}
	a.init(Pwrite, path, f, size, wrotePos)
	if err := a.applyKnobs(cfg, wrotePos); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

func (a *pwriteAppender) applyKnobs(cfg Config, wrotePos int64) error {
	if cfg.Warm && wrotePos < a.size {
		if err := fadvise(a.file.Fd(), wrotePos, a.size-wrotePos, AdviceWillNeed); err != nil {
			return err
		}
	}
	// Mlock: nothing to lock (the bytes live only in the page cache).
	return fadvise(a.file.Fd(), 0, 0, cfg.Advice)
}

func (a *pwriteAppender) Append(p []byte) (int64, error) {
	a.life.RLock()
	defer a.life.RUnlock()
	w, err := a.appendStart(len(p))
	if err != nil {
		return w, err
	}
	if len(p) == 0 {
		return w, nil
	}
	if a.writeAt != nil {
		_, err = a.writeAt(a.file, p, w)
	} else {
		_, err = a.file.WriteAt(p, w)
	}
	a.countWrite(len(p))
	if err != nil {
		return w, a.fail(err)
	}
	w += int64(len(p))
	a.wrote.Store(w)
	a.countAppend(len(p))
	return w, nil
}

func (a *pwriteAppender) Flush() (int64, error) {
	a.life.RLock()
	defer a.life.RUnlock()
	a.flushMu.Lock()
	defer a.flushMu.Unlock()
	f, err := a.flushStart()
	if err != nil {
		return f, err
	}
	w := a.wrote.Load()
	if w == f {
		return f, nil
	}
	t0 := time.Now()
	err = a.file.Datasync()
	a.countSync(time.Since(t0))
	if err != nil {
		return f, a.fail(err)
	}
	a.flushed.Store(w)
	return w, nil
}

func (a *pwriteAppender) ReadAt(p []byte, off int64) (int, error) {
	a.life.RLock()
	defer a.life.RUnlock()
	n, rerr := a.readStart(p, off)
	if n == 0 {
		return 0, rerr
	}
	m, err := a.file.ReadAt(p[:n], off)
	if err != nil {
		return m, err
	}
	return n, rerr
}

// Close closes the file (written bytes are in the page cache). It is
// idempotent.
func (a *pwriteAppender) Close() error {
	a.life.Lock()
	defer a.life.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	return a.file.Close()
}

package iopath

import "github.com/brokerlab/brokerlab/engine/vfs"

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
//
// Under Config.DSync Append only queues its bytes for dsync's writer
// goroutines, which write each append durably (pwritev2 with RWF_DSYNC,
// plus RWF_DONTCACHE on the uncached path), several at once; FlushedPos and
// CommittedPos are the durable prefix, Flush waits for it to reach the
// WrotePos it saw (no fdatasync), and ReadAt serves bytes above it from
// the queued copies. See dsyncWriters.
type pwriteAppender struct {
	segmentBase
	// writeAt writes one Append; nil is a plain pwrite.
	writeAt func(f vfs.File, p []byte, off int64) (int, error)
	// dsync is non-nil under Config.DSync.
	dsync *dsyncWriters
}

func openPwrite(fs vfs.FS, path string, size, wrotePos int64, cfg Config) (Appender, error) {
	if err := validateConfig(&cfg); err != nil {
		return nil, err
	}
	f, err := openSegmentFile(fs, Pwrite, path, size, wrotePos, 0)
	if err != nil {
		return nil, err
	}
	if err := syncSizeForDSync(f, cfg, size, wrotePos); err != nil {
		f.Close()
		return nil, err
	}
	a := &pwriteAppender{}
	a.init(Pwrite, path, f, size, wrotePos)
	a.setDSync(cfg, false, wrotePos)
	if err := a.applyKnobs(cfg, wrotePos); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// setDSync gives the appender its durable writers under cfg.DSync.
func (a *pwriteAppender) setDSync(cfg Config, uncached bool, wrotePos int64) {
	if cfg.DSync {
		a.dsync = newDSyncWriters(&a.segmentBase, uncached, cfg.DSyncWriters, wrotePos)
	}
}

// CommittedPos is WrotePos, or under DSync the durable prefix (queued
// appends are lost with the process).
func (a *pwriteAppender) CommittedPos() int64 {
	if a.dsync != nil {
		return a.dsync.durable.Load()
	}
	return a.wrote.Load()
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
	return a.appendWith(p, a.write)
}

// write is Append's step: p at w, by the durable writers under DSync.
func (a *pwriteAppender) write(p []byte, w int64) (int64, error) {
	var err error
	if a.dsync != nil {
		a.dsync.enqueue(p, w)
		w += int64(len(p))
		a.wrote.Store(w)
		a.countAppend(len(p))
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
	return a.flushWith(func(f int64) (int64, error) {
		w := a.wrote.Load()
		if a.dsync != nil && w != f {
			// The writers make the bytes durable; wait until they cover w.
			return a.dsync.wait(w)
		}
		return a.syncTo(f, w, a.file.Datasync)
	})
}

func (a *pwriteAppender) ReadAt(p []byte, off int64) (int, error) {
	return a.readWith(p, off, func(q []byte, off int64) (int, error) {
		fileEnd := off + int64(len(q))
		if a.dsync != nil {
			// Bytes at or above the durable prefix come from the queued copies.
			fileEnd = min(fileEnd, max(a.dsync.readPending(q, off), off))
		}
		if fileEnd > off {
			return a.file.ReadAt(q[:fileEnd-off], off)
		}
		return len(q), nil
	})
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
	if a.dsync != nil {
		a.dsync.stop() // queued appends are written (durably) before the file closes
	}
	return a.file.Close()
}

package iopath

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

func init() { Register(Pool, openPool) }

// PoolWaitTimeout bounds how long opening a pool segment waits for a free
// buffer (RocketMQ's allocation wait, 5 s).
var PoolWaitTimeout = 5 * time.Second

// Committer is implemented by write paths that hold appended bytes in user
// space before they reach the file (pool: the transient buffer; direct: the
// staging block): CommittedPos is how far appended bytes have been handed to
// the kernel (page cache or device), not necessarily durable. Bytes below it
// survive a crash of the process; bytes above it do not.
// FlushedPos <= CommittedPos <= WrotePos.
type Committer interface {
	CommittedPos() int64
}

// CommittedPos returns a's CommittedPos, or its WrotePos for paths that
// write every Append straight to the kernel (mmap, pwrite).
func CommittedPos(a Appender) int64 {
	if c, ok := a.(Committer); ok {
		return c.CommittedPos()
	}
	return a.WrotePos()
}

// poolAppender is RocketMQ's transient-store-pool write path. Append copies
// into a buffer borrowed from a BufferPool, at the segment offset (buffer
// byte i is file byte i). A commit pwrites [CommittedPos, WrotePos) from
// the buffer: a background committer does so every CommitInterval when at
// least CommitLeastPages pages are pending, or whatever is pending when
// CommitInterval has passed since the last commit (RocketMQ's "thorough"
// rule, commitCommitLogThoroughInterval = commitIntervalCommitLog); Flush
// commits everything and then fdatasyncs. CommitInterval <= 0 disables the
// background committer (commits happen in Flush and Close only).
//
// The buffer goes back to the pool when the segment is full and completely
// committed, or at Close. ReadAt serves bytes below the open-time wrotePos
// from the file and later bytes from the buffer while it is held.
//
// Locking: Append takes only life (shared) and never waits for a commit or a
// sync: a commit reads buffer bytes below the WrotePos it loaded, Append
// writes at and after WrotePos. commitMu serialises commits (background and
// Flush); Flush holds flushMu, takes commitMu only for the commit and
// fdatasyncs with neither commitMu nor any lock Append needs. bufMu guards
// readable against the buffer's early return to the pool.
type poolAppender struct {
	segmentBase
	pool *BufferPool
	wbuf []byte // the borrowed buffer; never reassigned while open
	base int64  // wrotePos at open: bytes below it are only in the file

	bufMu    sync.RWMutex
	readable bool // wbuf is still ours (guarded by bufMu)

	commitMu   sync.Mutex
	committed  atomic.Int64
	lastCommit atomic.Int64 // nanoseconds since epoch (monotonic clock)
	epoch      time.Time

	interval   time.Duration
	leastPages int64
	stop       chan struct{}
	kick       chan struct{} // Append filled the segment: commit it now
	done       chan struct{}
	stopOnce   sync.Once
}

func openPool(fs vfs.FS, path string, size, wrotePos int64, cfg Config) (Appender, error) {
	if err := validateConfig(&cfg); err != nil {
		return nil, err
	}
	if cfg.DSync {
		return nil, refuseDSync(Pool, path)
	}
	pool := cfg.Pool
	if pool == nil {
		pool = DefaultBufferPool(size)
	}
	if pool.BufSize() < size {
		return nil, fmt.Errorf("%w: pool buffers of %d bytes are smaller than the %d-byte segment", ErrBadSize, pool.BufSize(), size)
	}
	f, err := openSegmentFile(fs, Pool, path, size, wrotePos, 0)
	if err != nil {
		return nil, err
	}
	// A full segment is only read: it needs no buffer (a reopened log's old
	// segments must not drain the pool).
	var buf []byte
	if wrotePos < size {
		buf, err = pool.GetWait(PoolWaitTimeout)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("iopath: pool %s: %w", path, err)
		}
		buf = buf[:size]
	}
	a := &poolAppender{
		pool:       pool,
		wbuf:       buf,
		base:       wrotePos,
		readable:   buf != nil,
		kick:       make(chan struct{}, 1),
		epoch:      time.Now(),
		interval:   cfg.CommitInterval,
		leastPages: int64(cfg.CommitLeastPages),
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	a.init(Pool, path, f, size, wrotePos)
	a.committed.Store(wrotePos)
	if err := a.applyKnobs(cfg, wrotePos); err != nil {
		close(a.done)
		a.Close()
		return nil, err
	}
	if a.interval > 0 && buf != nil {
		go a.commitLoop()
	} else {
		close(a.done)
	}
	return a, nil
}

func (a *poolAppender) applyKnobs(cfg Config, wrotePos int64) error {
	if cfg.Warm {
		touchPages(a.wbuf, wrotePos)
		if wrotePos < a.size {
			if err := fadvise(a.file.Fd(), wrotePos, a.size-wrotePos, AdviceWillNeed); err != nil {
				return err
			}
		}
	}
	if cfg.Mlock {
		if err := a.pool.mlock(a.wbuf); err != nil {
			return err
		}
	}
	return fadvise(a.file.Fd(), 0, 0, cfg.Advice)
}

func (a *poolAppender) CommittedPos() int64 { return a.committed.Load() }

func (a *poolAppender) commitLoop() {
	defer close(a.done)
	t := time.NewTicker(a.interval)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		case <-a.kick:
		}
		if a.sticky.failed.Load() {
			continue
		}
		least := a.leastPages
		if time.Duration(time.Since(a.epoch).Nanoseconds()-a.lastCommit.Load()) >= a.interval {
			least = 0
		}
		if a.wrote.Load() == a.size {
			if a.committed.Load() == a.size {
				return // full and committed: the buffer is back in the pool
			}
			least = 0
		}
		a.commitMu.Lock()
		_ = a.commitLocked(least) // a failure is sticky; Append and Flush report it
		a.commitMu.Unlock()
	}
}

// commitLocked pwrites [committed, wrote) if the segment is full, or at
// least leastPages pages are pending (leastPages <= 0: anything pending).
// REQUIRES: commitMu held.
func (a *poolAppender) commitLocked(leastPages int64) error {
	c := a.committed.Load()
	w := a.wrote.Load()
	if w == c {
		return nil
	}
	if w < a.size && leastPages > 0 && w/pageSize-c/pageSize < leastPages {
		return nil
	}
	_, err := a.file.WriteAt(a.wbuf[c:w], c)
	a.countWrite(int(w - c))
	if err != nil {
		return a.fail(err)
	}
	a.committed.Store(w)
	a.lastCommit.Store(time.Since(a.epoch).Nanoseconds())
	if w == a.size {
		a.releaseBuffer()
	}
	return nil
}

// releaseBuffer returns the buffer to the pool once (readers switch to the
// file, which now holds every byte).
func (a *poolAppender) releaseBuffer() {
	a.bufMu.Lock()
	held := a.readable
	a.readable = false
	a.bufMu.Unlock()
	if held {
		a.pool.Put(a.wbuf)
	}
}

func (a *poolAppender) Append(p []byte) (int64, error) {
	return a.appendWith(p, a.stage)
}

// stage is Append's step: copy p into the buffer at w.
func (a *poolAppender) stage(p []byte, w int64) (int64, error) {
	copy(a.wbuf[w:], p)
	w += int64(len(p))
	a.wrote.Store(w)
	a.countAppend(len(p))
	if w == a.size {
		select { // full: commit it and give the buffer back promptly
		case a.kick <- struct{}{}:
		default:
		}
	}
	return w, nil
}

func (a *poolAppender) Flush() (int64, error) {
	return a.flushWith(func(f int64) (int64, error) {
		a.commitMu.Lock()
		err := a.commitLocked(0)
		c := a.committed.Load()
		a.commitMu.Unlock()
		if err != nil {
			return f, err
		}
		return a.syncTo(f, c, a.file.Datasync)
	})
}

func (a *poolAppender) ReadAt(p []byte, off int64) (int, error) {
	return a.readWith(p, off, a.read)
}

// read is ReadAt's step: q from off, committed bytes from the file and the
// rest from the buffer.
func (a *poolAppender) read(q []byte, off int64) (int, error) {
	n := len(q)
	if off < a.base {
		k := min(int64(n), a.base-off)
		if m, err := a.file.ReadAt(q[:k], off); err != nil {
			return m, err
		}
		q, off = q[k:], off+k
	}
	if len(q) > 0 {
		a.bufMu.RLock()
		if a.readable {
			copy(q, a.wbuf[off:])
			a.bufMu.RUnlock()
		} else {
			a.bufMu.RUnlock()
			if m, err := a.file.ReadAt(q, off); err != nil {
				return n - len(q) + m, err
			}
		}
	}
	return n, nil
}

// Close stops the committer, commits what is pending (pwrite, no fdatasync:
// Close makes bytes visible in the file, not durable), returns the buffer to
// the pool and closes the file. It is idempotent.
func (a *poolAppender) Close() error {
	a.stopOnce.Do(func() { close(a.stop) })
	<-a.done
	a.life.Lock()
	defer a.life.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	var err error
	if a.sticky.get() == nil {
		a.commitMu.Lock()
		err = a.commitLocked(0)
		a.commitMu.Unlock()
	}
	a.releaseBuffer()
	return errors.Join(err, a.file.Close())
}

package iopath

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

func init() { Register(Direct, openDirect) }

// directStageBytes is the size of the direct path's staging buffer (clipped
// to the segment size): appends are batched into pwrites of this size.
const directStageBytes = 256 << 10

// directReadChunk is the most one uncached O_DIRECT read asks for.
const directReadChunk = 64 << 10

// directAppender writes with O_DIRECT. The alignment A is the file's
// statx(STATX_DIOALIGN) offset alignment (4096 when unreported); the segment
// size must be a multiple of it.
//
// Append copies into an aligned staging buffer that holds file bytes
// [stageOff, WrotePos) (stageOff a multiple of A). When the staging buffer
// is full its blocks are written with one pwrite and it starts over. Flush
// writes the staged bytes padded with zeros to a multiple of A, keeps the
// partial tail block in the staging buffer (it is rewritten, with more
// data, by the next write of that block), then fdatasyncs. Reopening at a
// wrotePos that is not a multiple of A reads the partial block back into
// the staging buffer.
//
// Reads: bytes below diskValid are final on disk and are read with O_DIRECT
// pread of whole aligned blocks, through cfg.Cache when set (only blocks
// entirely below diskValid are cached); staged bytes are copied from the
// staging buffer.
//
// Locking (order: flushMu, stageMu, writeMu): stageMu guards the staging
// buffer and stageOff; Append holds it while copying and while writing a
// full staging buffer. writeMu keeps pwrites in order. Flush holds stageMu
// while it writes the padded staged bytes and, only once that write
// succeeded, shifts the partial tail block to the front of the buffer (so
// a failed write leaves every acknowledged byte readable from the staging
// buffer); the fdatasync holds no lock an Append needs. An Append
// overlapping a Flush therefore waits for the Flush's tail write (at most
// one staging buffer), never for its fdatasync.
type directAppender struct {
	segmentBase
	align    int64
	memAlign int64
	stageCap int64

	stageMu  sync.Mutex
	staging  []byte // file bytes [stageOff, wrote) at index 0; guarded by stageMu
	stageOff int64  // guarded by stageMu

	writeMu   sync.Mutex
	flushBuf  []byte       // Flush's padded copy of the staged bytes (under flushMu)
	diskValid atomic.Int64 // file bytes below this are written and final

	cache   *BlockCache
	id      FileID
	scratch sync.Pool // *[]byte: aligned O_DIRECT read buffers of readLen bytes
	readLen int64
}

func openDirect(fs vfs.FS, path string, size, wrotePos int64, cfg Config) (Appender, error) {
	if err := validateConfig(&cfg); err != nil {
		return nil, err
	}
	if oDirect == 0 {
		return nil, fmt.Errorf("%w: direct: no O_DIRECT on this OS", ErrUnsupported)
	}
	f, err := openSegmentFile(fs, Direct, path, size, wrotePos, oDirect)
	if err != nil {
		return nil, err
	}
	align, memAlign := dioAlign(f.Fd())
	switch {
	case memAlign > int64(os.Getpagesize()):
		f.Close()
		return nil, fmt.Errorf("%w: direct %s: O_DIRECT memory alignment %d exceeds the page size", ErrUnsupported, path, memAlign)
	case size%align != 0:
		f.Close()
		return nil, fmt.Errorf("%w: direct %s: segment size %d is not a multiple of the O_DIRECT alignment %d", ErrUnsupported, path, size, align)
	case cfg.Cache != nil && int64(cfg.Cache.BlockSize())%align != 0:
		f.Close()
		return nil, fmt.Errorf("%w: direct %s: cache block size %d is not a multiple of the O_DIRECT alignment %d", ErrBadSize, path, cfg.Cache.BlockSize(), align)
	}
	a := &directAppender{
		align:    align,
		memAlign: memAlign,
		stageCap: min(alignUp(directStageBytes, align), size),
		cache:    cfg.Cache,
	}
	a.init(Direct, path, f, size, wrotePos)
	a.diskValid.Store(wrotePos) // before setUp: a failed open's Close must write nothing
	a.readLen = alignUp(directReadChunk, align)
	if a.cache != nil {
		a.readLen = max(a.readLen, int64(a.cache.BlockSize()))
	}
	a.scratch.New = func() any {
		b := alignedAlloc(a.readLen, a.memAlign)
		return &b
	}
	if err := a.setUp(cfg, wrotePos); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

func (a *directAppender) setUp(cfg Config, wrotePos int64) error {
	var err error
	if a.staging, err = anonMap(int(a.stageCap)); err != nil {
		return err
	}
	if a.flushBuf, err = anonMap(int(a.stageCap)); err != nil {
		return err
	}
	a.stageOff = alignDown(wrotePos, a.align)
	if wrotePos > a.stageOff {
		if _, err := a.file.ReadAt(a.staging[:a.align], a.stageOff); err != nil {
			return fmt.Errorf("iopath: direct %s: read back the partial block at %d: %w", a.path, a.stageOff, err)
		}
	}
	if a.cache != nil {
		a.id = FileIDOf(a.file)
		a.cache.Invalidate(a.id) // the file may have been rewritten since its blocks were cached
	}
	if cfg.Warm {
		touchPages(a.staging, wrotePos-a.stageOff)
		touchPages(a.flushBuf, 0)
	}
	if cfg.Mlock {
		if err := lockMemory(a.staging, "direct staging buffer"); err != nil {
			return err
		}
		if err := lockMemory(a.flushBuf, "direct flush buffer"); err != nil {
			return err
		}
	}
	return fadvise(a.file.Fd(), 0, 0, cfg.Advice)
}

// advanceDiskValid raises diskValid to v. REQUIRES: writeMu held.
func (a *directAppender) advanceDiskValid(v int64) {
	if v > a.diskValid.Load() {
		a.diskValid.Store(v)
	}
}

func (a *directAppender) Append(p []byte) (int64, error) {
	a.life.RLock()
	defer a.life.RUnlock()
	if a.closed {
		return a.wrote.Load(), ErrClosed
	}
	w := a.wrote.Load()
	if err := a.sticky.get(); err != nil {
		return w, err
	}
	if int64(len(p)) > a.size-w {
		return w, ErrFull
	}
	if len(p) == 0 {
		return w, nil
	}
	n := len(p)
	a.stageMu.Lock()
	for len(p) > 0 {
		end := min(a.stageOff+a.stageCap, a.size)
		c := copy(a.staging[w-a.stageOff:end-a.stageOff], p)
		p = p[c:]
		w += int64(c)
		if w == end {
			if err := a.writeStagedLocked(end); err != nil {
				a.stageMu.Unlock()
				return a.wrote.Load(), err
			}
		}
	}
	a.wrote.Store(w)
	a.stageMu.Unlock()
	a.countAppend(n)
	return w, nil
}

// writeStagedLocked writes the full staging buffer, file bytes [stageOff,
// end), and starts the buffer over at end. REQUIRES: stageMu held.
func (a *directAppender) writeStagedLocked(end int64) error {
	n := end - a.stageOff
	a.writeMu.Lock()
	_, err := a.file.WriteAt(a.staging[:n], a.stageOff)
	if err == nil {
		a.advanceDiskValid(end)
	}
	a.writeMu.Unlock()
	a.countWrite(int(n))
	if err != nil {
		return a.fail(err)
	}
	a.cacheWritten(a.stageOff, end)
	a.stageOff = end
	return nil
}

// cacheWritten puts the cache blocks lying wholly inside the staged range
// [from, to), just written and final, into the block cache (write-through),
// so readers of fresh data — the store's dispatcher, tailing consumers — do
// not read back from the device what was just written to it. O_DIRECT
// bypasses the page cache, so without this every byte would cross the
// device twice. REQUIRES: stageMu held (the staging buffer holds [from, to)).
func (a *directAppender) cacheWritten(from, to int64) {
	if a.cache == nil {
		return
	}
	bs := int64(a.cache.BlockSize())
	for blk := (from + bs - 1) / bs; (blk+1)*bs <= to; blk++ {
		start := blk * bs
		a.cache.Set(a.id, blk, a.staging[start-from:start-from+bs])
	}
}

func (a *directAppender) Flush() (int64, error) {
	a.life.RLock()
	defer a.life.RUnlock()
	if a.closed {
		return a.flushed.Load(), ErrClosed
	}
	a.flushMu.Lock()
	defer a.flushMu.Unlock()
	f := a.flushed.Load()
	if err := a.sticky.get(); err != nil {
		return f, err
	}
	a.stageMu.Lock()
	w := a.wrote.Load()
	if w == f {
		a.stageMu.Unlock()
		return f, nil
	}
	so := a.stageOff
	if n := w - so; n > 0 {
		padded := alignUp(n, a.align)
		copy(a.flushBuf[:n], a.staging[:n])
		clear(a.flushBuf[n:padded])
		a.writeMu.Lock()
		_, err := a.file.WriteAt(a.flushBuf[:padded], so)
		if err == nil {
			a.advanceDiskValid(w)
			// Only once the write succeeded do the staged bytes before the
			// partial tail block leave the staging buffer: after a failed
			// write they stay readable from it.
			if tail := alignDown(w, a.align); tail > so {
				copy(a.staging, a.staging[tail-so:a.wrote.Load()-so])
				a.stageOff = tail
			}
		}
		a.stageMu.Unlock()
		a.writeMu.Unlock()
		a.countWrite(int(padded))
		if err != nil {
			return f, a.fail(err)
		}
	} else {
		a.stageMu.Unlock() // everything up to w was written by Append
	}
	t0 := time.Now()
	err := a.file.Datasync()
	a.countSync(time.Since(t0))
	if err != nil {
		return f, a.fail(err)
	}
	a.flushed.Store(w)
	return w, nil
}

func (a *directAppender) ReadAt(p []byte, off int64) (int, error) {
	a.life.RLock()
	defer a.life.RUnlock()
	if a.closed {
		return 0, ErrClosed
	}
	n, rerr := a.readSpan(p, off)
	if n == 0 {
		return 0, rerr
	}
	q := p[:n]
	end := off + int64(n)
	if end <= a.diskValid.Load() {
		if err := a.readDisk(q, off); err != nil {
			return 0, err
		}
		return n, rerr
	}
	a.stageMu.Lock()
	so := a.stageOff
	if end > so {
		from := max(off, so)
		copy(q[from-off:], a.staging[from-so:end-so])
	}
	a.stageMu.Unlock()
	if off < so {
		// Bytes below stageOff were handed to a writer that took writeMu
		// before stageMu was released: wait for it, then read the disk.
		a.writeMu.Lock()
		a.writeMu.Unlock()
		if err := a.readDisk(q[:min(end, so)-off], off); err != nil {
			return 0, err
		}
	}
	return n, rerr
}

// readDisk fills q with file bytes at off, all below diskValid, using
// aligned O_DIRECT reads (through the block cache when there is one).
func (a *directAppender) readDisk(q []byte, off int64) error {
	sp := a.scratch.Get().(*[]byte)
	defer a.scratch.Put(sp)
	buf := *sp
	if a.cache != nil {
		return a.readCached(q, off, buf)
	}
	for len(q) > 0 {
		start := alignDown(off, a.align)
		n := min(int64(len(buf)), alignUp(off+int64(len(q)), a.align)-start)
		if _, err := a.file.ReadAt(buf[:n], start); err != nil {
			return fmt.Errorf("iopath: direct %s: read: %w", a.path, err)
		}
		c := copy(q, buf[off-start:n])
		q = q[c:]
		off += int64(c)
	}
	return nil
}

func (a *directAppender) readCached(q []byte, off int64, buf []byte) error {
	bs := int64(a.cache.BlockSize())
	for len(q) > 0 {
		blk := off / bs
		start := blk * bs
		data, ok := a.cache.Get(a.id, blk)
		if !ok {
			dv := a.diskValid.Load()
			n := min(bs, a.size-start)
			if _, err := a.file.ReadAt(buf[:n], start); err != nil {
				return fmt.Errorf("iopath: direct %s: read: %w", a.path, err)
			}
			data = buf[:n]
			if n == bs && start+bs <= dv {
				a.cache.Set(a.id, blk, data)
			}
		}
		c := copy(q, data[off-start:])
		q = q[c:]
		off += int64(c)
	}
	return nil
}

// Close writes the staged bytes (padded; no fdatasync: Close makes bytes
// visible in the file, not durable), releases the buffers and closes the
// file. It is idempotent.
func (a *directAppender) Close() error {
	a.life.Lock()
	defer a.life.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	var werr error
	if w := a.wrote.Load(); a.sticky.get() == nil && a.staging != nil && w > a.diskValid.Load() {
		n := w - a.stageOff
		padded := alignUp(n, a.align)
		clear(a.staging[n:padded])
		_, werr = a.file.WriteAt(a.staging[:padded], a.stageOff)
		a.countWrite(int(padded))
	}
	err1 := anonUnmap(a.staging)
	err2 := anonUnmap(a.flushBuf)
	a.staging, a.flushBuf = nil, nil
	return errors.Join(werr, err1, err2, a.file.Close())
}

package iopath

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

func init() { Register(Direct, openDirect) }

// directStageBytes is the size of one staging buffer of the direct path
// (rounded up to a multiple of the alignment and of the cache block size,
// clipped to the segment size): full buffers are written with one pwrite.
const directStageBytes = 256 << 10

// directBuffers is how many staging buffers a direct segment has: one
// filled by Append while the others are queued for or under their write.
// They are consecutive in one mapping and used in turn, so the writer can
// write several queued spans with one pwrite.
const directBuffers = 8

// directReadChunk is the most one uncached O_DIRECT read asks for.
const directReadChunk = 64 << 10

// directAppender writes with O_DIRECT. The alignment A is the larger of the
// file's statx(STATX_DIOALIGN) offset and memory alignments (4096 when
// unreported); the segment size must be a multiple of it.
//
// On-disk format: the file holds the appended bytes at their offsets, as
// on every other path; bytes past the last flush within its A-block are
// zeros (a flush writes the partial tail block padded and the next write of
// that block rewrites it with more data). A store written by direct opens
// with any other path and vice versa.
//
// Staging: the file is cut into buffer spans of C bytes (C =
// directStageBytes rounded up to A and to the cache block size); span k is
// [k*C, min((k+1)*C, size)). Append copies into the staging buffer of the
// current span; when the span is full the buffer is queued to the writer
// goroutine and Append takes a free buffer for the next span. With
// directBuffers buffers, copying overlaps up to directBuffers-1 device
// writes in the queue; Append waits for the device only when every buffer
// is queued (back pressure, counted in IOStats.StageWaits), and never under
// stageMu. The writer pwrites the queued buffers in order — spans queued
// back to back in adjacent buffers with one pwrite, so writes grow when the
// device falls behind — advances the written position (CommittedPos) and
// hands the written buffers, in order, to its retirer goroutine, which puts
// each buffer's complete cache blocks into the BlockCache's ring of recent
// blocks and only then frees the buffer (so a reader finds every byte in a
// buffer, the ring or on disk). The ring copy thus overlaps the next device
// write. Only one device write is in flight at a time.
//
// Flush writes whatever the current buffer holds beyond its clean mark,
// padded to A, from a copy (the flush buffer), through the same queue
// (behind the buffers queued before it, so writes of a block never pass
// each other), waits for it and fdatasyncs. It holds stageMu only to copy
// the tail; Appends continue while it writes and syncs. Once the tail write
// succeeded the current buffer's clean mark moves to the tail's last full
// A-block, so its later writes skip what is already final on disk.
//
// Errors: the first failed write (or fdatasync) is sticky; the writer
// skips later writes, failed and skipped buffers stay in the in-flight list
// (their bytes remain readable), and every later Append, Flush — and an
// Append waiting for a buffer — returns the error.
//
// Under Config.DSync (the dsync flush policy) the writer issues every write
// (full spans and flushed tails alike) with RWF_DSYNC, which on an O_DIRECT
// descriptor the kernel sends with FUA (or follows with a cache flush), and
// Flush is the tail write alone: no fdatasync. Only one write is in flight,
// as without it.
//
// Crash semantics: bytes below FlushedPos are durable. An Append returns
// before its bytes reach the device: a process crash loses the bytes in the
// staging and queued buffers, i.e. [CommittedPos, WrotePos); bytes below
// CommittedPos were written with O_DIRECT (in the device, not in a
// page-cache that a process crash could lose) but are durable only after
// the next fdatasync. As on every path, a power failure loses what is not
// flushed.
//
// Reads: bytes at or above the lowest byte held by a buffer (memLow) are
// copied from the in-flight and current buffers (IOStats.StagingHits);
// bytes below it are final on disk and are read through cfg.Cache (the ring
// of recent blocks, then ristretto; IOStats.RingHits, CacheHits) or with
// O_DIRECT pread of whole aligned blocks (IOStats.DeviceReads).
//
// Buffers exist only while the segment can grow: a segment opened full has
// none, and they are released when the last span's write succeeded; the
// writer goroutine runs while there are buffers and exits then (or at
// Close, which drains the queue first).
//
// Locking (order: flushMu, stageMu): stageMu guards the buffer table (cur,
// the in-flight list, the spans and clean marks) and is held for memory
// copies only. Append copies into the current buffer without it (only
// Append changes the current buffer; readers and Flush read bytes below
// WrotePos, Append writes at and above it).
type directAppender struct {
	segmentBase
	align    int64
	stageCap int64

	bufs     []stageBuf               // fixed at open; bufs[i].mem = stageMem[i*stageCap:(i+1)*stageCap]
	stageMem []byte                   // one anonymous mapping holding every buffer
	flushBuf []byte                   // Flush's and Close's padded copy of the tail (one flush at a time)
	batch    [directBuffers]directJob // the writer's current batch (writer goroutine only)

	stageMu  sync.Mutex
	cur      int                // buffer of the current span; -1 while Append waits for one or once full; guarded by stageMu
	inflight [directBuffers]int // FIFO of queued buffers: inflight[(head+i)%directBuffers], i < nfly; guarded by stageMu
	head     int
	nfly     int

	memLow  atomic.Int64 // lowest file byte held by a buffer; bytes below are final on disk
	written atomic.Int64 // bytes below are on disk (may run ahead of WrotePos inside an Append)

	queue      chan directJob
	free       chan int      // buffers ready for Append
	flushDone  chan error    // the writer's answer to a tail or barrier job
	dead       chan struct{} // closed when the writer stops writing after an error
	deadOnce   sync.Once
	writerDone chan struct{} // closed when the writer goroutine (and its retirer) has exited
	retireQ    chan int      // written buffers, oldest first, for the retirer (the writer's own; set before its first job)

	// commitLoop's lifecycle (nil when the segment opened full or the
	// interval is 0).
	commitStop chan struct{}
	commitDone chan struct{}
	commitOnce sync.Once

	// dsync (Config.DSync): every block and tail write carries RWF_DSYNC
	// (FUA on the O_DIRECT descriptor) and Flush does no fdatasync.
	dsync bool

	cache   *BlockCache
	id      FileID
	scratch sync.Pool // *[]byte: aligned O_DIRECT read buffers of readLen bytes
	readLen int64
}

// stageBuf is one staging buffer and the span it holds: mem[i] is file byte
// base+i; bytes [valid, end) belong to the span (valid > base only for the
// first buffer after reopening inside a span); bytes below clean are
// already final on disk.
type stageBuf struct {
	mem                     []byte
	base, end, valid, clean int64
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
	if err := syncSizeForDSync(f, cfg, size, wrotePos); err != nil {
		f.Close()
		return nil, err
	}
	offAlign, memAlign := dioAlign(f.Fd())
	align := max(offAlign, memAlign)
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
	a := &directAppender{align: align, cache: cfg.Cache, cur: -1, dsync: cfg.DSync}
	gran := align
	if a.cache != nil {
		gran = max(gran, int64(a.cache.BlockSize()))
	}
	a.stageCap = min(alignUp(directStageBytes, gran), size)
	a.init(Direct, path, f, size, wrotePos)
	a.written.Store(wrotePos)
	a.memLow.Store(wrotePos)
	a.readLen = alignUp(directReadChunk, align)
	if a.cache != nil {
		a.readLen = max(a.readLen, int64(a.cache.BlockSize()))
	}
	a.scratch.New = func() any {
		b := alignedAlloc(a.readLen, memAlign)
		return &b
	}
	if err := a.setUp(cfg, wrotePos); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

func (a *directAppender) setUp(cfg Config, wrotePos int64) error {
	if a.cache != nil {
		a.id = FileIDOf(a.file)
		a.cache.Invalidate(a.id) // the file may have been rewritten since its blocks were cached
	}
	if err := fadvise(a.file.Fd(), 0, 0, cfg.Advice); err != nil {
		return err
	}
	if wrotePos == a.size {
		return nil // full: read-only, no buffers, no writer
	}
	var err error
	if a.stageMem, err = anonMap(directBuffers * int(a.stageCap)); err != nil {
		return err
	}
	a.bufs = make([]stageBuf, directBuffers)
	for i := range a.bufs {
		lo, hi := int64(i)*a.stageCap, int64(i+1)*a.stageCap
		a.bufs[i].mem = a.stageMem[lo:hi:hi]
	}
	if a.flushBuf, err = anonMap(int(a.stageCap)); err != nil {
		return err
	}
	stageOff := alignDown(wrotePos, a.align)
	b := &a.bufs[0]
	b.base = alignDown(stageOff, a.stageCap)
	b.end = min(b.base+a.stageCap, a.size)
	b.valid, b.clean = stageOff, stageOff
	if wrotePos > stageOff {
		// The partial block is rewritten, with more data, by the next write
		// of it: read it back.
		if _, err := a.file.ReadAt(b.mem[stageOff-b.base:stageOff-b.base+a.align], stageOff); err != nil {
			return fmt.Errorf("iopath: direct %s: read back the partial block at %d: %w", a.path, stageOff, err)
		}
	}
	a.cur = 0
	a.memLow.Store(stageOff)
	if cfg.Warm {
		touchPages(a.stageMem, wrotePos-b.base)
		touchPages(a.flushBuf, 0)
	}
	if cfg.Mlock {
		if err := lockMemory(a.stageMem, "direct staging buffers"); err != nil {
			return err
		}
		if err := lockMemory(a.flushBuf, "direct flush buffer"); err != nil {
			return err
		}
	}
	a.queue = make(chan directJob, directBuffers+1) // every buffer once, plus one flush: sends never block
	a.free = make(chan int, directBuffers)
	for i := 1; i < directBuffers; i++ {
		a.free <- i
	}
	a.flushDone = make(chan error, 1)
	a.dead = make(chan struct{})
	a.writerDone = make(chan struct{})
	go a.writer()
	if cfg.CommitInterval > 0 {
		a.commitStop, a.commitDone = make(chan struct{}), make(chan struct{})
		go a.commitLoop(cfg.CommitInterval)
	}
	return nil
}

// Append copies p into the staging buffers. It returns before p reaches
// the device (see the type's crash semantics); it waits only when every
// buffer is queued for writing.
func (a *directAppender) Append(p []byte) (int64, error) {
	return a.appendWith(p, a.stage)
}

// stage is Append's step: copy p into the staging buffers from w.
func (a *directAppender) stage(p []byte, w int64) (int64, error) {
	n := len(p)
	for len(p) > 0 {
		b := &a.bufs[a.cur] // cur >= 0: a span below size is always staged
		c := copy(b.mem[w-b.base:b.end-b.base], p)
		p = p[c:]
		w += int64(c)
		if w == b.end {
			if err := a.rotate(); err != nil {
				return a.wrote.Load(), err
			}
		}
	}
	a.wrote.Store(w)
	a.countAppend(n)
	return w, nil
}

// rotate queues the full current buffer and, unless the segment is full,
// makes a free buffer current for the next span, waiting for one if every
// buffer is queued. Called by Append only.
func (a *directAppender) rotate() error {
	a.stageMu.Lock()
	i := a.cur
	b := &a.bufs[i]
	end := b.end
	a.queue <- directJob{kind: jobBuffer, buf: i, base: b.base, off: b.clean, data: b.mem[b.clean-b.base : b.end-b.base], end: end}
	a.inflight[(a.head+a.nfly)%directBuffers] = i
	a.nfly++
	a.cur = -1
	a.stageMu.Unlock()
	if end == a.size {
		return nil
	}
	var j int
	select {
	case j = <-a.free:
	default:
		a.stageWaits.Add(1)
		select {
		case j = <-a.free:
		case <-a.dead:
			return a.sticky.get()
		}
	}
	a.stageMu.Lock()
	nb := &a.bufs[j]
	nb.base, nb.end, nb.valid, nb.clean = end, min(end+a.stageCap, a.size), end, end
	a.cur = j
	a.stageMu.Unlock()
	return nil
}

// CommittedPos is how far appended bytes have reached the device (a crash
// of the process loses only what lies above it): the bytes written so far
// by the writer or a flush, or the last flush, whichever is further.
func (a *directAppender) CommittedPos() int64 {
	return max(min(a.written.Load(), a.wrote.Load()), a.FlushedPos())
}

// Flush writes the staged tail and everything queued before it, then
// fdatasyncs; see the type's doc.
func (a *directAppender) Flush() (int64, error) {
	return a.flushWith(func(f int64) (int64, error) {
		w, base, err := a.writeTail()
		if err != nil {
			return f, err
		}
		if base >= 0 {
			a.markClean(base, alignDown(w, a.align))
		}
		if a.dsync && w != f {
			// Every write below w, the tail's included, was durable on
			// completion.
			a.flushed.Store(w)
			return w, nil
		}
		return a.syncTo(f, w, a.file.Datasync)
	})
}

// directTailHook, when set by a test, runs inside writeTail between reading
// the written position and waiting for the writer: it widens the window in
// which the writer can finish the segment's last span and exit.
var directTailHook func()

// writeTail makes [0, WrotePos) written: it queues the current buffer's
// bytes beyond its clean mark (padded, from a copy in flushBuf) or, when
// there are none, a barrier, and waits for the writer to reach it. It
// returns the position written and the span of the tail it wrote (-1: no
// tail). REQUIRES: flushMu held (or life held exclusively, by Close).
func (a *directAppender) writeTail() (w, base int64, err error) {
	a.stageMu.Lock()
	w = a.wrote.Load()
	if a.written.Load() >= w {
		a.stageMu.Unlock()
		return w, -1, nil
	}
	if w == a.size {
		// Every span is queued and the writer exits by itself once it has
		// written the last one, so a job queued now might never be
		// answered (the writer may already have found the queue empty and
		// left). Wait for the writer to finish instead.
		a.stageMu.Unlock()
		if directTailHook != nil {
			directTailHook()
		}
		select {
		case <-a.writerDone:
		case <-a.dead:
		}
		return w, -1, a.sticky.get()
	}
	job := directJob{kind: jobBarrier, end: w}
	base = -1
	if a.cur >= 0 {
		if b := &a.bufs[a.cur]; w > b.clean {
			n := w - b.clean
			padded := alignUp(n, a.align)
			copy(a.flushBuf[:n], b.mem[b.clean-b.base:w-b.base])
			clear(a.flushBuf[n:padded])
			job = directJob{kind: jobTail, off: b.clean, data: a.flushBuf[:padded], end: w}
			base = b.base
		}
	}
	a.queue <- job
	a.stageMu.Unlock()
	if err := <-a.flushDone; err != nil {
		return w, -1, err
	}
	return w, base, nil
}

// markClean moves the clean mark of the buffer holding span base, if it is
// still the current one, up to c.
func (a *directAppender) markClean(base, c int64) {
	a.stageMu.Lock()
	if a.cur >= 0 {
		if b := &a.bufs[a.cur]; b.base == base && c > b.clean {
			b.clean = c
		}
	}
	a.stageMu.Unlock()
}

// Close writes the staged bytes (padded; no fdatasync: Close makes bytes
// visible in the file, not durable) after the queued buffers, stops the
// writer goroutine, releases the buffers and closes the file. After a
// sticky error it writes nothing more. It is idempotent.
func (a *directAppender) Close() error {
	a.stopCommit()
	a.life.Lock()
	defer a.life.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	var werr error
	if a.queue != nil {
		if a.sticky.get() == nil {
			if _, _, werr = a.writeTail(); werr == nil && a.sticky.get() != nil {
				werr = a.sticky.get()
			}
		}
		close(a.queue)
		<-a.writerDone
	}
	return errors.Join(werr, a.releaseBuffers(), a.file.Close())
}

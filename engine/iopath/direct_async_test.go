package iopath

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
)

// gate holds WriteAt calls of the files opened through a gateFS until it is
// released, so a test can keep the direct writer's buffers in flight.
type gate struct {
	mu      sync.Mutex
	ch      chan struct{} // nil: open
	entered atomic.Int64  // WriteAt calls that reached the gate
}

func (g *gate) hold() {
	g.mu.Lock()
	if g.ch == nil {
		g.ch = make(chan struct{})
	}
	g.mu.Unlock()
}

func (g *gate) release() {
	g.mu.Lock()
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
	g.mu.Unlock()
}

func (g *gate) pass() {
	g.entered.Add(1)
	g.mu.Lock()
	ch := g.ch
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

type gateFS struct {
	vfs.FS
	g *gate
}

func (fs gateFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := fs.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return gateFile{File: f, g: fs.g}, nil
}

type gateFile struct {
	vfs.File
	g *gate
}

func (f gateFile) WriteAt(p []byte, off int64) (int, error) {
	f.g.pass()
	return f.File.WriteAt(p, off)
}

// waitFor polls cond every millisecond for up to 10 s (a bounded wait for
// another goroutine's progress, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 10000; i++ {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func openDirectOrSkip(t *testing.T, fs vfs.FS, path string, size, wrotePos int64, cache *BlockCache) *directAppender {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Cache = cache
	// No background tail commit: these tests count the writes and bytes the
	// appender issues, and a commit tick under load would add a padded tail
	// write at a random moment. direct_commit_test.go tests the commit loop.
	cfg.CommitInterval = 0
	a := openOrSkip(t, Direct, fs, path, size, wrotePos, cfg).(*directAppender)
	if a.align != 4096 && a.align != 512 {
		t.Logf("O_DIRECT alignment here: %d", a.align)
	}
	return a
}

func newCache(t *testing.T, ringBytes int64) *BlockCache {
	t.Helper()
	c, err := NewBlockCacheRing(8<<20, 64<<10, ringBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func writerStopped(a *directAppender) bool {
	select {
	case <-a.writerDone:
		return true
	default:
		return false
	}
}

// TestDirectReadLayers reads back appended bytes from every place they can
// be: the current staging buffer, buffers queued for writing, the ring of
// recent blocks, ristretto, and the device; every read must return what
// was appended.
func TestDirectReadLayers(t *testing.T) {
	const size = 4 << 20
	g := &gate{}
	cache := newCache(t, 256<<10) // 4 blocks of 64 KiB: one span
	path := segPath(t)
	a := openDirectOrSkip(t, gateFS{vfs.Default, g}, path, size, 0, cache)
	defer a.Close()
	defer g.release() // before Close, should the test fail while the gate is held
	if a.stageCap != 256<<10 {
		t.Fatalf("staging buffers of %d bytes, want 256 KiB", a.stageCap)
	}
	src := randomBytes(21, size)
	st := func() IOStats { return a.IOStats() }

	// Spans 0 and 1 queued (the writer held in its first pwrite), span 2
	// current: everything comes from buffers.
	g.hold()
	appendAll(t, a, src[:600<<10], 1, 5000)
	waitFor(t, "the writer to reach its first write", func() bool { return g.entered.Load() == 1 })
	if a.written.Load() != 0 || a.memLow.Load() != 0 {
		t.Fatalf("written %d, memLow %d while the device is held", a.written.Load(), a.memLow.Load())
	}
	checkRead(t, a, src, 0, 600<<10)
	checkRead(t, a, src, 250<<10, 300<<10) // across in-flight buffers and the current one
	checkRead(t, a, src, 599<<10, 1<<10)
	if s := st(); s.StagingHits != 3 || s.DeviceReads != 0 || s.RingHits != 0 || s.CacheHits != 0 {
		t.Fatalf("reads of staged bytes: %+v", s)
	}

	// Back pressure: the last buffer's span fills and every buffer is
	// queued; the Append that needs one more span waits for the device,
	// and a Flush waits with it.
	const span = 256 << 10
	const total = directBuffers*span + 76<<10
	appended := make(chan error, 1)
	go func() {
		_, err := a.Append(src[600<<10 : total])
		appended <- err
	}()
	waitFor(t, "an Append to wait for a buffer", func() bool { return st().StageWaits == 1 })
	flushed := flushAsync(a)
	select {
	case err := <-appended:
		t.Fatalf("Append returned (%v) while every buffer was in flight", err)
	case err := <-flushed:
		t.Fatalf("Flush returned (%v) while the device was held", err)
	default:
	}
	g.release()
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if fp, err := a.Flush(); err != nil || fp != total {
		t.Fatalf("Flush = %d, %v", fp, err)
	}
	// Every span but the current one is written and retired.
	waitFor(t, "the full spans to retire", func() bool { return a.memLow.Load() == directBuffers*span })
	before := st()
	checkRead(t, a, src, directBuffers*span-224<<10, 224<<10) // the last full span: the ring
	checkRead(t, a, src, directBuffers*span, 76<<10)          // the current span: staging (already written, still buffered)
	s := st()
	if s.RingHits-before.RingHits != 4 || s.StagingHits-before.StagingHits != 1 || s.DeviceReads != before.DeviceReads {
		t.Fatalf("ring/staging reads: before %+v after %+v", before, s)
	}

	// Span 0 left the ring: the device, then ristretto.
	checkRead(t, a, src, 0, 100)
	if s2 := st(); s2.DeviceReads != s.DeviceReads+1 || s2.DeviceReadBytes != s.DeviceReadBytes+64<<10 {
		t.Fatalf("cold read: %+v", s2)
	}
	cache.Wait()
	s = st()
	checkRead(t, a, src, 1000, 5000)
	if s2 := st(); s2.CacheHits != s.CacheHits+1 || s2.DeviceReads != s.DeviceReads {
		t.Fatalf("second cold read did not hit ristretto: %+v", s2)
	}
	// One read across device/cache, ring and staging.
	checkRead(t, a, src, 0, total)

	// Without a cache every byte below the buffers comes from the device.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, src[:total])
	b := openDirectOrSkip(t, vfs.Default, path, size, total, nil)
	defer b.Close()
	checkRead(t, b, src, 0, total)
	if s := b.IOStats(); s.DeviceReadBytes < total || s.StagingHits != 0 {
		t.Fatalf("uncached reads after reopen: %+v", s)
	}
}

// TestDirectFreshReadBack is the dispatcher's pattern: appends with a flush
// every 32 KiB, and a reader that follows CommittedPos. In steady state it
// must never read from the device: fresh bytes are in the staging buffers
// or the ring of recent blocks.
func TestDirectFreshReadBack(t *testing.T) {
	const size = 8 << 20
	for _, mode := range []string{"lockstep", "concurrent"} {
		t.Run(mode, func(t *testing.T) {
			cache := newCache(t, 1<<20)
			a := openDirectOrSkip(t, vfs.Default, segPath(t), size, 0, cache)
			defer a.Close()
			src := randomBytes(22, size)
			var disp int64
			buf := make([]byte, 48<<10)
			follow := func() error {
				for cp := a.CommittedPos(); disp < cp; {
					n := min(cp-disp, int64(len(buf)))
					if _, err := a.ReadAt(buf[:n], disp); err != nil {
						return err
					}
					if !bytes.Equal(buf[:n], src[disp:disp+n]) {
						return errors.New("read-back differs from what was appended")
					}
					disp += n
				}
				return nil
			}
			var wg sync.WaitGroup
			done := make(chan struct{})
			errc := make(chan error, 1)
			var readWhileWriting int64 // concurrent: what the reader had read when the writer finished
			if mode == "concurrent" {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						if err := follow(); err != nil {
							errc <- err
							return
						}
						select {
						case <-done:
							readWhileWriting = disp
							errc <- follow()
							return
						default:
							time.Sleep(50 * time.Microsecond)
						}
					}
				}()
			}
			for pos := 0; pos < size; pos += 32 << 10 {
				appendAll(t, a, src[pos:pos+32<<10], uint64(pos), 3000)
				if _, err := a.Flush(); err != nil {
					t.Fatal(err)
				}
				if mode == "lockstep" {
					if err := follow(); err != nil {
						t.Fatal(err)
					}
				}
			}
			close(done)
			wg.Wait()
			if mode == "concurrent" {
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
			}
			if disp != size {
				t.Fatalf("reader stopped at %d of %d", disp, size)
			}
			s := a.IOStats()
			t.Logf("read-back of %d bytes: staging hits %d, ring hits %d, cache hits %d, device reads %d (%d bytes)",
				size, s.StagingHits, s.RingHits, s.CacheHits, s.DeviceReads, s.DeviceReadBytes)
			if s.DeviceReads != 0 || s.DeviceReadBytes != 0 {
				t.Fatalf("fresh data read back from the device: %+v", s)
			}
			switch mode {
			case "lockstep":
				// The reader follows each flush at once: the freshest
				// bytes are still staged.
				if s.StagingHits == 0 {
					t.Fatalf("no read was served from the staging buffers: %+v", s)
				}
			case "concurrent":
				// A reader one flush behind is served from the ring, so
				// where the bytes came from is the scheduler's choice;
				// what this mode adds is reads overlapping the appends
				// and flushes, and it must have made some.
				if readWhileWriting == 0 {
					t.Fatalf("the reader read nothing while the writer ran (then %d bytes): not a concurrent read-back", disp)
				}
			}
		})
	}
}

// TestDirectWriterErrorIsSticky fails the writer goroutine's pwrite of a
// full staging buffer (no Flush involved): the next Flush and Append
// report it, nothing is flushed, and every appended byte stays readable.
func TestDirectWriterErrorIsSticky(t *testing.T) {
	inj := faultfs.NewInjector(1)
	a := openDirectOrSkip(t, faultfs.Wrap(vfs.Default, inj), segPath(t), 2<<20, 0, nil)
	defer a.Close()
	src := randomBytes(23, 2<<20)
	inj.Add(faultfs.Rule{Op: vfs.OpWrite, Err: syscall.EIO})
	if _, err := a.Append(src[:300<<10]); err != nil { // span 0 queued, its write fails
		t.Fatal(err)
	}
	waitFor(t, "the writer's failure", func() bool { return a.sticky.get() != nil })
	if _, err := a.Flush(); !errors.Is(err, syscall.EIO) || !errors.Is(err, faultfs.ErrInjected) {
		t.Fatalf("Flush after a failed background write: %v", err)
	}
	if _, err := a.Append([]byte("x")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Append after a failed background write: %v", err)
	}
	if a.FlushedPos() != 0 || a.CommittedPos() != 0 {
		t.Fatalf("flushed %d, committed %d after the only write failed", a.FlushedPos(), a.CommittedPos())
	}
	checkRead(t, a, src, 0, 300<<10)
	if err := a.Close(); err != nil {
		t.Fatalf("Close after a sticky error: %v", err)
	}
	if !writerStopped(a) {
		t.Fatal("Close left the writer running")
	}
}

// TestDirectWaitingAppendGetsWriterError: an Append waiting for a buffer
// (all in flight) returns the writer's error instead of waiting forever.
func TestDirectWaitingAppendGetsWriterError(t *testing.T) {
	g := &gate{}
	inj := faultfs.NewInjector(1)
	a := openDirectOrSkip(t, gateFS{faultfs.Wrap(vfs.Default, inj), g}, segPath(t), 4<<20, 0, nil)
	defer a.Close()
	defer g.release()
	src := randomBytes(24, 4<<20)
	g.hold()
	done := make(chan error, 1)
	go func() {
		_, err := a.Append(src[:directBuffers*256<<10+1]) // needs one span more than there are buffers: waits
		done <- err
	}()
	waitFor(t, "the Append to wait for a buffer", func() bool { return a.IOStats().StageWaits == 1 })
	inj.Add(faultfs.Rule{Op: vfs.OpWrite, Err: syscall.ENOSPC})
	g.release()
	if err := <-done; !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("waiting Append = %v, want the writer's ENOSPC", err)
	}
	if a.WrotePos() != 0 {
		t.Fatalf("WrotePos %d after a failed Append", a.WrotePos())
	}
	if _, err := a.Flush(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Flush: %v", err)
	}
}

// TestDirectCloseDrains: Close writes every queued buffer and the staged
// tail before it returns, then stops the writer goroutine.
func TestDirectCloseDrains(t *testing.T) {
	g := &gate{}
	path := segPath(t)
	a := openDirectOrSkip(t, gateFS{vfs.Default, g}, path, 2<<20, 0, nil)
	defer g.release()
	src := randomBytes(25, 2<<20)
	g.hold()
	appendAll(t, a, src[:700<<10], 1, 5000)
	closed := make(chan error, 1)
	go func() { closed <- a.Close() }()
	waitFor(t, "the writer to reach the device", func() bool { return g.entered.Load() >= 1 })
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) with writes still held", err)
	default:
	}
	g.release()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if !writerStopped(a) {
		t.Fatal("the writer goroutine is still running after Close")
	}
	if got := a.IOStats().WriteBytes; got != 700<<10 {
		t.Fatalf("Close wrote %d bytes, want spans 0 and 1 and the tail, 700 KiB", got)
	}
	checkFile(t, path, src[:700<<10])
}

// TestDirectFullSegmentReleasesBuffers: once the last span is written the
// buffers are unmapped and the writer exits; reads and Flush still work.
func TestDirectFullSegmentReleasesBuffers(t *testing.T) {
	const size = 1 << 20
	cache := newCache(t, 2<<20)
	path := segPath(t)
	a := openDirectOrSkip(t, vfs.Default, path, size, 0, cache)
	defer a.Close()
	src := randomBytes(26, size)
	appendAll(t, a, src, 1, 7000)
	waitFor(t, "the writer to exit", func() bool { return writerStopped(a) })
	a.stageMu.Lock()
	for i := range a.bufs {
		if a.bufs[i].mem != nil {
			t.Errorf("buffer %d still mapped", i)
		}
	}
	a.stageMu.Unlock()
	if fp, err := a.Flush(); err != nil || fp != size {
		t.Fatalf("Flush of a full segment = %d, %v", fp, err)
	}
	checkRead(t, a, src, 0, size)
	if s := a.IOStats(); s.DeviceReads != 0 || s.RingHits != size/(64<<10) {
		t.Fatalf("reads of a just-filled segment: %+v", s)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, src)
	// A segment opened full has no buffers and no writer.
	b := openDirectOrSkip(t, vfs.Default, path, size, size, nil)
	defer b.Close()
	if b.bufs != nil || b.queue != nil {
		t.Fatal("a full segment was opened with staging buffers")
	}
	if fp, err := b.Flush(); err != nil || fp != size {
		t.Fatalf("Flush = %d, %v", fp, err)
	}
	checkRead(t, b, src, size-5000, 5000)
}

// TestDirectFormatInterchange: a segment written by direct (flushed at odd
// offsets, closed mid-block) opens with every other path and reads the
// same, and a segment written by another path continues under direct.
func TestDirectFormatInterchange(t *testing.T) {
	const size = 1 << 20
	for _, k := range Kinds() {
		if k == Direct {
			continue
		}
		t.Run(string(k), func(t *testing.T) {
			src := randomBytes(27, size)
			path := segPath(t)
			a := openDirectOrSkip(t, vfs.Default, path, size, 0, nil)
			appendAll(t, a, src[:300001], 1, 9000)
			if _, err := a.Flush(); err != nil {
				t.Fatal(err)
			}
			appendAll(t, a, src[300001:555555], 2, 9000)
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			cfg := DefaultConfig()
			o := openOrSkip(t, k, vfs.Default, path, size, 555555, cfg)
			checkRead(t, o, src, 0, 555555)
			appendAll(t, o, src[555555:777777], 3, 9000)
			if _, err := o.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := o.Close(); err != nil {
				t.Fatal(err)
			}
			d := openDirectOrSkip(t, vfs.Default, path, size, 777777, nil)
			checkRead(t, d, src, 0, 777777)
			appendAll(t, d, src[777777:], 4, 9000)
			if _, err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			checkRead(t, d, src, 0, size)
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			checkFile(t, path, src)
		})
	}
}

// TestDirectConcurrentWithCache runs appends, flushes and readers at once
// with a small ring and slow device writes, so reads race with buffer
// rotation, retirement into the ring and back pressure (run with -race).
func TestDirectConcurrentWithCache(t *testing.T) {
	const size = 6 << 20
	inj := faultfs.NewInjector(1)
	inj.Add(faultfs.Rule{Op: vfs.OpWrite, When: faultfs.WithProbability(0.3), Delay: 2 * time.Millisecond})
	cache := newCache(t, 512<<10)
	a := openDirectOrSkip(t, faultfs.Wrap(vfs.Default, inj), segPath(t), size, 0, cache)
	defer a.Close()
	src := randomBytes(28, size)
	done := make(chan struct{})
	var wg sync.WaitGroup
	fail := make(chan error, 8)
	wg.Add(1)
	go func() { // flusher
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			w := a.WrotePos()
			fp, err := a.Flush()
			if err != nil {
				fail <- err
				return
			}
			if fp < w || fp > a.WrotePos() || a.CommittedPos() < fp {
				fail <- errors.New("positions out of order after Flush")
				return
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(r int) { // readers: a tail follower and random readers
			defer wg.Done()
			buf := make([]byte, 70000)
			var pos int64
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				w := a.WrotePos()
				if w == 0 {
					continue
				}
				off := pos
				if r > 0 {
					off = int64(i*7919*(r+1)) % w
				}
				n := min(w-off, int64(len(buf)))
				if n == 0 {
					continue
				}
				if _, err := a.ReadAt(buf[:n], off); err != nil {
					fail <- err
					return
				}
				if !bytes.Equal(buf[:n], src[off:off+n]) {
					fail <- errors.New("a concurrent read returned bytes that were not appended there")
					return
				}
				if r == 0 {
					pos = off + n
				}
			}
		}(r)
	}
	appendAll(t, a, src, 5, 70000)
	close(done)
	wg.Wait()
	close(fail)
	for err := range fail {
		t.Fatal(err)
	}
	if fp, err := a.Flush(); err != nil || fp != size {
		t.Fatalf("final Flush = %d, %v", fp, err)
	}
	checkRead(t, a, src, 0, size)
	t.Logf("%+v", a.IOStats())
}

// TestDirectCoalescedWrites: spans queued behind a slow write go to the
// device in one pwrite (their buffers are adjacent in memory).
func TestDirectCoalescedWrites(t *testing.T) {
	g := &gate{}
	path := segPath(t)
	a := openDirectOrSkip(t, gateFS{vfs.Default, g}, path, 4<<20, 0, nil)
	defer a.Close()
	defer g.release()
	src := randomBytes(29, 1<<20)
	g.hold()
	// Span 0 alone first, so the writer's first write is span 0 whatever
	// the scheduler does; spans 1..3 queue while that write is held (span 4
	// is then current and empty) and the writer takes them in one write.
	appendAll(t, a, src[:256<<10], 1, 9000)
	waitFor(t, "the first write", func() bool { return g.entered.Load() == 1 })
	appendAll(t, a, src[256<<10:], 2, 9000)
	g.release()
	if fp, err := a.Flush(); err != nil || fp != 1<<20 {
		t.Fatalf("Flush = %d, %v", fp, err)
	}
	if s := a.IOStats(); s.WriteCalls != 2 || s.WriteBytes != 1<<20 {
		t.Fatalf("4 spans took %d writes of %d bytes in all, want 2 writes (the held one and the rest)", s.WriteCalls, s.WriteBytes)
	}
	checkFile(t, path, src)
}

// TestDirectReadBoundaries reads every range between interesting offsets
// (block, span and ring edges, memLow, the written and appended ends, ±1)
// in three states: spans in flight, everything written, and reopened in the
// middle of a block.
func TestDirectReadBoundaries(t *testing.T) {
	const size, span = 4 << 20, 256 << 10
	g := &gate{}
	cache := newCache(t, 256<<10)
	path := segPath(t)
	a := openDirectOrSkip(t, gateFS{vfs.Default, g}, path, size, 0, cache)
	defer a.Close()
	defer g.release()
	src := randomBytes(30, size)
	readAll := func(a Appender, state string, marks ...int64) {
		t.Helper()
		w := a.WrotePos()
		var offs []int64
		for _, m := range append(marks, 0, 64<<10, span, 2*span, 3*span, 4*span, 5*span, w) {
			for _, d := range []int64{-1, 0, 1} {
				if o := m + d; o >= 0 && o <= w {
					offs = append(offs, o)
				}
			}
		}
		for _, x := range offs {
			for _, y := range offs {
				if x < y && (y-x <= 150<<10 || x == 0 && y == w) { // short ranges and the whole
					got := make([]byte, y-x)
					if n, err := a.ReadAt(got, x); err != nil || int64(n) != y-x || !bytes.Equal(got, src[x:y]) {
						t.Fatalf("%s: ReadAt [%d, %d) = %d, %v (equal %v)", state, x, y, n, err, bytes.Equal(got[:n], src[x:x+int64(n)]))
					}
				}
			}
		}
	}
	appendAll(t, a, src[:3*span+100000], 1, 7000)
	if _, err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "three spans to retire", func() bool { return a.memLow.Load() == 3*span })
	flushedAt := a.WrotePos()
	g.hold()
	appendAll(t, a, src[flushedAt:5*span+10000], 2, 7000)
	readAll(a, "in flight", a.memLow.Load(), a.written.Load(), flushedAt)
	g.release()
	if _, err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "five spans to retire", func() bool { return a.memLow.Load() == 5*span })
	readAll(a, "written", a.memLow.Load(), flushedAt)
	s := a.IOStats()
	if s.StagingHits == 0 || s.RingHits == 0 || s.DeviceReads == 0 {
		t.Fatalf("the reads did not reach every layer: %+v", s)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	w := int64(5*span + 10000)
	b := openDirectOrSkip(t, vfs.Default, path, size, w, cache)
	defer b.Close()
	readAll(b, "reopened", alignDown(w, b.align), b.memLow.Load())
	appendAll(t, b, src[w:w+span], 3, 7000)
	readAll(b, "reopened and appended", alignDown(w, b.align), b.memLow.Load(), w)
}

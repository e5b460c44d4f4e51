package iopath

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
)

func TestAppendUntilFull(t *testing.T) {
	forEachKind(t, func(t *testing.T, k Kind) {
		const size = 256 << 10
		path := segPath(t)
		a := openOrSkip(t, k, vfs.Default, path, size, 0, DefaultConfig())
		defer a.Close()
		src := randomBytes(1, size+8192)
		r := rand.New(rand.NewPCG(2, 3))
		var pos int64
		for i := 0; ; i++ {
			n := int64(1 + r.IntN(5000))
			got, err := a.Append(src[pos : pos+n])
			if pos+n > size {
				if !errors.Is(err, ErrFull) || got != pos || a.WrotePos() != pos {
					t.Fatalf("Append past the end: pos %d, err %v, want ErrFull at %d", got, err, pos)
				}
				break
			}
			if err != nil || got != pos+n {
				t.Fatalf("Append(%d) at %d = %d, %v", n, pos, got, err)
			}
			pos += n
			checkInvariants(t, a)
			off := r.Int64N(pos)
			checkRead(t, a, src, off, min(pos-off, 1+r.Int64N(9000)))
			if i%10 == 9 {
				fp, err := a.Flush()
				if err != nil || fp != pos || a.FlushedPos() != pos {
					t.Fatalf("Flush = %d, %v; FlushedPos %d; want %d", fp, err, a.FlushedPos(), pos)
				}
				checkRead(t, a, src, 0, pos)
			}
		}
		// ErrFull wrote nothing: the bytes after pos are still readable as
		// before, and the exact remainder still fits.
		checkRead(t, a, src, 0, pos)
		if got, err := a.Append(src[pos:size]); err != nil || got != size {
			t.Fatalf("Append of the exact remainder = %d, %v", got, err)
		}
		if _, err := a.Append([]byte{1}); !errors.Is(err, ErrFull) {
			t.Fatalf("Append to a full segment: %v", err)
		}
		if got, err := a.Append(nil); err != nil || got != size {
			t.Fatalf("empty Append to a full segment = %d, %v", got, err)
		}
		checkRead(t, a, src, 0, size)
		if fp, err := a.Flush(); err != nil || fp != size {
			t.Fatalf("final Flush = %d, %v", fp, err)
		}
		checkRead(t, a, src, 0, size)
		// Reads at and past WrotePos.
		buf := make([]byte, 10)
		if n, err := a.ReadAt(buf, size-4); n != 4 || err != io.EOF {
			t.Fatalf("short ReadAt at the end = %d, %v", n, err)
		}
		if n, err := a.ReadAt(buf, size); n != 0 || err != io.EOF {
			t.Fatalf("ReadAt at WrotePos = %d, %v", n, err)
		}
		if _, err := a.ReadAt(buf, -1); err == nil {
			t.Fatal("ReadAt at a negative offset succeeded")
		}
		checkFile(t, path, src[:size])
	})
}

func TestReadStopsAtWrotePos(t *testing.T) {
	forEachKind(t, func(t *testing.T, k Kind) {
		a := openOrSkip(t, k, vfs.Default, segPath(t), 64<<10, 0, DefaultConfig())
		defer a.Close()
		src := randomBytes(5, 1000)
		if _, err := a.Append(src); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		n, err := a.ReadAt(buf, 500)
		if n != 500 || err != io.EOF || string(buf[:n]) != string(src[500:]) {
			t.Fatalf("ReadAt across WrotePos = %d, %v", n, err)
		}
	})
}

func TestReopen(t *testing.T) {
	const size = 128 << 10
	forEachKind(t, func(t *testing.T, k Kind) {
		for _, wp := range []int64{0, 3 * 4096, 12345, size - 1, size} {
			for _, flushFirst := range []bool{true, false} {
				path := segPath(t)
				src := randomBytes(uint64(wp), size)
				a := openOrSkip(t, k, vfs.Default, path, size, 0, DefaultConfig())
				appendAll(t, a, src[:wp], 1, 3000)
				if flushFirst {
					if _, err := a.Flush(); err != nil {
						t.Fatal(err)
					}
				}
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				checkFile(t, path, src[:wp])

				a = openOrSkip(t, k, vfs.Default, path, size, wp, DefaultConfig())
				if a.WrotePos() != wp || a.FlushedPos() != wp {
					t.Fatalf("reopened at %d: wrote %d, flushed %d", wp, a.WrotePos(), a.FlushedPos())
				}
				if wp > 0 {
					checkRead(t, a, src, 0, wp)
				}
				more := min(size-wp, 5000)
				appendAll(t, a, src[wp:wp+more], 2, 700)
				checkRead(t, a, src, 0, wp+more)
				if fp, err := a.Flush(); err != nil || fp != wp+more {
					t.Fatalf("Flush after reopen = %d, %v", fp, err)
				}
				checkRead(t, a, src, 0, wp+more)
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				checkFile(t, path, src[:wp+more])
			}
		}
	})
}

func TestConcurrentAppendFlushRead(t *testing.T) {
	const size = 1 << 20
	forEachKind(t, func(t *testing.T, k Kind) {
		cfg := DefaultConfig()
		cfg.CommitInterval = 1e6 // 1ms: exercise the pool's background committer too
		a := openOrSkip(t, k, vfs.Default, segPath(t), size, 0, cfg)
		defer a.Close()
		src := randomBytes(9, size)
		done := make(chan struct{})
		var wg sync.WaitGroup
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
					t.Errorf("Flush: %v", err)
					return
				}
				if fp < w {
					t.Errorf("Flush returned %d < WrotePos %d seen before it", fp, w)
					return
				}
			}
		}()
		for g := 0; g < 3; g++ {
			wg.Add(1)
			go func(seed uint64) { // readers
				defer wg.Done()
				r := rand.New(rand.NewPCG(seed, 1))
				buf := make([]byte, 10000)
				for {
					select {
					case <-done:
						return
					default:
					}
					f := a.FlushedPos()
					w := a.WrotePos()
					if f > w || w > size {
						t.Errorf("invariant broken: flushed %d wrote %d", f, w)
						return
					}
					if w == 0 {
						continue
					}
					off := r.Int64N(w)
					n := min(w-off, 1+r.Int64N(int64(len(buf))))
					m, err := a.ReadAt(buf[:n], off)
					if err != nil || int64(m) != n {
						t.Errorf("ReadAt(%d, %d) = %d, %v", off, n, m, err)
						return
					}
					if string(buf[:n]) != string(src[off:off+n]) {
						t.Errorf("ReadAt(%d, %d) returned bytes that were not appended there", off, n)
						return
					}
				}
			}(uint64(g))
		}
		appendAll(t, a, src, 4, 6000)
		close(done)
		wg.Wait()
		if fp, err := a.Flush(); err != nil || fp != size {
			t.Fatalf("final Flush = %d, %v", fp, err)
		}
		checkRead(t, a, src, 0, size)
	})
}

func TestCloseIdempotent(t *testing.T) {
	forEachKind(t, func(t *testing.T, k Kind) {
		a := openOrSkip(t, k, vfs.Default, segPath(t), 64<<10, 0, DefaultConfig())
		if _, err := a.Append([]byte("abc")); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if _, err := a.Append([]byte("x")); !errors.Is(err, ErrClosed) {
			t.Fatalf("Append after Close: %v", err)
		}
		if _, err := a.Flush(); !errors.Is(err, ErrClosed) {
			t.Fatalf("Flush after Close: %v", err)
		}
		if _, err := a.ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrClosed) {
			t.Fatalf("ReadAt after Close: %v", err)
		}
		if a.WrotePos() != 3 || a.Size() != 64<<10 {
			t.Fatalf("positions after Close: wrote %d size %d", a.WrotePos(), a.Size())
		}
	})
}

// faultOps are the operations whose failure each write path must turn into
// a sticky error: mmap flushes with msync, pool commits with pwrite.
var faultOps = map[Kind][]vfs.Op{
	Mmap:   {vfs.OpMsync},
	Pwrite: {vfs.OpWrite, vfs.OpSync},
	Pool:   {vfs.OpWrite, vfs.OpSync},
	Direct: {vfs.OpWrite, vfs.OpSync},
	// uncached appends with pwritev2, flushes with fdatasync.
	Uncached: {vfs.OpWrite, vfs.OpSync},
}

func TestStickyError(t *testing.T) {
	forEachKind(t, func(t *testing.T, k Kind) {
		ops, ok := faultOps[k]
		if !ok {
			t.Fatalf("no fault ops listed for write path %s", k)
		}
		for _, op := range ops {
			t.Run(string(op), func(t *testing.T) {
				inj := faultfs.NewInjector(1)
				fs := faultfs.Wrap(vfs.Default, inj)
				cfg := DefaultConfig()
				cfg.CommitInterval = 0 // pool: commit only in Flush
				a := openOrSkip(t, k, fs, segPath(t), 256<<10, 0, cfg)
				defer a.Close()
				src := randomBytes(3, 256<<10)
				appendAll(t, a, src[:10000], 1, 999)
				if _, err := a.Flush(); err != nil {
					t.Fatal(err)
				}
				id := inj.Add(faultfs.Rule{Op: op, Err: syscall.EIO})
				var first error
				pos := int64(10000)
				for i := 0; i < 50 && first == nil; i++ {
					if _, err := a.Append(src[pos : pos+3000]); err != nil {
						first = err
						break
					}
					pos += 3000
					_, first = a.Flush()
				}
				if !errors.Is(first, syscall.EIO) || !errors.Is(first, faultfs.ErrInjected) {
					t.Fatalf("injected EIO on %s never surfaced (got %v)", op, first)
				}
				flushed := a.FlushedPos()
				inj.Remove(id)
				if _, err := a.Append([]byte("more")); !errors.Is(err, syscall.EIO) {
					t.Fatalf("Append after the failure: %v, want the sticky EIO", err)
				}
				if _, err := a.Flush(); !errors.Is(err, syscall.EIO) {
					t.Fatalf("Flush after the failure: %v, want the sticky EIO", err)
				}
				if a.FlushedPos() != flushed || flushed < 10000 {
					t.Fatalf("FlushedPos moved to %d after the failure (was %d)", a.FlushedPos(), flushed)
				}
				checkRead(t, a, src, 0, 10000)
				if err := a.Close(); err != nil {
					t.Fatalf("Close after a sticky error: %v", err)
				}
			})
		}
	})
}

func TestPreallocation(t *testing.T) {
	const size = 192 << 10
	forEachKind(t, func(t *testing.T, k Kind) {
		path := segPath(t)
		a := openOrSkip(t, k, vfs.Default, path, size, 0, DefaultConfig())
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() != size {
			t.Fatalf("file size right after open = %d, want %d", fi.Size(), size)
		}
		if got, ok := allocatedBytes(fi); ok && got < size {
			t.Fatalf("st_blocks*512 = %d does not cover the %d-byte segment", got, size)
		}
		a.Close()

		// An existing file of another size is refused, as is an empty one
		// reopened with data expected in it.
		if _, err := Open(k, vfs.Default, path, size*2, 0, DefaultConfig()); !errors.Is(err, ErrSizeMismatch) {
			t.Fatalf("Open with another size: %v", err)
		}
		empty := segPath(t)
		if err := os.WriteFile(empty, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(k, vfs.Default, empty, size, 100, DefaultConfig()); !errors.Is(err, ErrSizeMismatch) {
			t.Fatalf("Open of an empty file at wrotePos 100: %v", err)
		}
		for _, bad := range [][2]int64{{0, 0}, {-1, 0}, {size, -1}, {size, size + 1}} {
			if _, err := Open(k, vfs.Default, segPath(t), bad[0], bad[1], DefaultConfig()); !errors.Is(err, ErrBadSize) {
				t.Fatalf("Open(size %d, wrotePos %d): %v, want ErrBadSize", bad[0], bad[1], err)
			}
		}
	})
}

func TestKnobs(t *testing.T) {
	const size = 128 << 10
	configs := map[string]func(*Config){
		"warm":       func(c *Config) { c.Warm = true },
		"mlock":      func(c *Config) { c.Mlock = true },
		"normal":     func(c *Config) { c.Advice = AdviceNormal },
		"random":     func(c *Config) { c.Advice = AdviceRandom },
		"sequential": func(c *Config) { c.Advice = AdviceSequential },
		"willneed":   func(c *Config) { c.Advice = AdviceWillNeed },
		"all":        func(c *Config) { c.Warm, c.Mlock, c.Advice = true, true, AdviceSequential },
	}
	forEachKind(t, func(t *testing.T, k Kind) {
		for name, set := range configs {
			cfg := DefaultConfig()
			set(&cfg)
			path := segPath(t)
			src := randomBytes(11, size)
			for _, wp := range []int64{0, 5000} { // fresh, and reopened mid-page
				a, err := Open(k, vfs.Default, path, size, wp, cfg)
				if errors.Is(err, ErrMlock) {
					t.Fatalf("%s: mlock refused (RLIMIT_MEMLOCK?): %v", name, err)
				}
				if errors.Is(err, ErrUnsupported) {
					t.Skipf("%s unsupported: %v", k, err)
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				appendAll(t, a, src[wp:wp+5000], 3, 900)
				if _, err := a.Flush(); err != nil {
					t.Fatalf("%s: Flush: %v", name, err)
				}
				checkRead(t, a, src, 0, wp+5000)
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
		cfg := DefaultConfig()
		cfg.Advice = "sideways"
		if _, err := Open(k, vfs.Default, segPath(t), size, 0, cfg); !errors.Is(err, ErrBadAdvice) {
			t.Fatalf("unknown advice: %v", err)
		}
	})
}

// locksMemory says which write paths have memory for Config.Mlock to lock;
// for pwrite the knob is a documented no-op.
var locksMemory = map[Kind]bool{Mmap: true, Pool: true, Direct: true, Pwrite: false}

func TestMlockFailureFailsOpen(t *testing.T) {
	saved := mlock
	defer func() { mlock = saved }()
	mlock = func([]byte) error { return syscall.EPERM } // as under a low RLIMIT_MEMLOCK

	forEachKind(t, func(t *testing.T, k Kind) {
		cfg := DefaultConfig()
		cfg.Mlock = true
		cfg.Pool = NewBufferPool(1, 64<<10)
		defer cfg.Pool.Close()
		path := segPath(t)
		a, err := Open(k, vfs.Default, path, 64<<10, 0, cfg)
		if !locksMemory[k] {
			if err != nil {
				t.Fatalf("Mlock on %s should be a no-op, got %v", k, err)
			}
			a.Close()
			return
		}
		if errors.Is(err, ErrUnsupported) {
			t.Skipf("%s unsupported: %v", k, err)
		}
		if !errors.Is(err, ErrMlock) || !errors.Is(err, syscall.EPERM) {
			t.Fatalf("Open with a failing mlock: %v, want ErrMlock wrapping EPERM", err)
		}
		if cfg.Pool.Available() != 1 {
			t.Fatalf("failed Open kept the pool buffer")
		}
		// Without the knob the same segment opens.
		cfg.Mlock = false
		a = openOrSkip(t, k, vfs.Default, path, 64<<10, 0, cfg)
		a.Close()
	})
}

func TestIOStats(t *testing.T) {
	forEachKind(t, func(t *testing.T, k Kind) {
		a := openOrSkip(t, k, vfs.Default, segPath(t), 256<<10, 0, DefaultConfig())
		defer a.Close()
		s, ok := a.(Stats)
		if !ok {
			t.Fatalf("%s does not implement Stats", k)
		}
		for i := 0; i < 10; i++ {
			if _, err := a.Append(make([]byte, 1000)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.Flush(); err != nil {
			t.Fatal(err)
		}
		st := s.IOStats()
		if st.Appends != 10 || st.AppendBytes != 10000 || st.SyncCalls != 1 {
			t.Fatalf("IOStats = %+v", st)
		}
		if k == Mmap && st.WriteCalls != 0 || k != Mmap && (st.WriteCalls == 0 || st.WriteBytes < 10000) {
			t.Fatalf("IOStats write counters = %+v", st)
		}
		if _, err := a.Flush(); err != nil { // nothing new: no sync
			t.Fatal(err)
		}
		if s.IOStats().SyncCalls != 1 {
			t.Fatalf("a Flush with nothing new synced")
		}
	})
}

func TestAppendFlushAllocationFree(t *testing.T) {
	forEachKind(t, func(t *testing.T, k Kind) {
		a := openOrSkip(t, k, vfs.Default, segPath(t), 1<<20, 0, DefaultConfig())
		defer a.Close()
		p := make([]byte, 100)
		for i := 0; i < 10; i++ { // warm up lazily created state
			a.Append(p)
			a.Flush()
		}
		allocs := testing.AllocsPerRun(50, func() {
			if _, err := a.Append(p); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Flush(); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Fatalf("Append+Flush allocate %.1f times per call", allocs)
		}
	})
}

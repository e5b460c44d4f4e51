package iopath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
)

// TestDirectOnTmpfs opens the direct path on tmpfs. Before Linux 6.6 tmpfs
// refuses O_DIRECT and the error must wrap ErrUnsupported (leaving no file
// behind); since 6.6 it accepts it and the path must work.
func TestDirectOnTmpfs(t *testing.T) {
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
		t.Skip("no /dev/shm tmpfs on this machine")
	}
	dir, err := os.MkdirTemp("/dev/shm", "iopathtest")
	if err != nil {
		t.Skipf("cannot create a directory on /dev/shm: %v", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "seg")
	a, err := Open(Direct, vfs.Default, path, 64<<10, 0, DefaultConfig())
	if err != nil {
		if !errors.Is(err, ErrUnsupported) {
			t.Fatalf("direct on tmpfs: %v does not wrap ErrUnsupported", err)
		}
		if _, serr := os.Stat(path); !errors.Is(serr, os.ErrNotExist) {
			t.Fatalf("refused open left %s behind", path)
		}
		t.Logf("tmpfs refuses O_DIRECT: %v", err)
		return
	}
	t.Log("tmpfs accepts O_DIRECT on this kernel (Linux >= 6.6)")
	defer a.Close()
	src := randomBytes(4, 10000)
	appendAll(t, a, src, 1, 3000)
	if _, err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	checkRead(t, a, src, 0, int64(len(src)))
}

// TestDirectUnsupportedIsReported checks, on any file system, that a file
// system refusing O_DIRECT (simulated with faultfs) yields ErrUnsupported.
func TestDirectUnsupportedIsReported(t *testing.T) {
	inj := faultfs.NewInjector(1)
	inj.Add(faultfs.Rule{Op: vfs.OpOpen, Err: fmt.Errorf("%w: O_DIRECT refused", vfs.ErrUnsupported)})
	_, err := Open(Direct, faultfs.Wrap(vfs.Default, inj), segPath(t), 64<<10, 0, DefaultConfig())
	if !errors.Is(err, ErrUnsupported) || !errors.Is(err, vfs.ErrUnsupported) {
		t.Fatalf("Open = %v, want ErrUnsupported", err)
	}
}

func TestDirectRejectsMisalignedSize(t *testing.T) {
	_, err := Open(Direct, vfs.Default, segPath(t), 64<<10+100, 0, DefaultConfig())
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Open of a segment size that is not a multiple of the alignment: %v", err)
	}
}

// TestDirectTailBlockRewrite checks the on-disk image after each Flush: the
// partial tail block is written padded with zeros and later rewritten.
func TestDirectTailBlockRewrite(t *testing.T) {
	const size = 64 << 10
	path := segPath(t)
	a := openOrSkip(t, Direct, vfs.Default, path, size, 0, DefaultConfig())
	defer a.Close()
	src := randomBytes(8, size)
	var pos int64
	for _, n := range []int64{100, 1, 4000, 5000, 20000, 3} {
		if _, err := a.Append(src[pos : pos+n]); err != nil {
			t.Fatal(err)
		}
		pos += n
		if _, err := a.Flush(); err != nil {
			t.Fatal(err)
		}
		disk, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(disk[:pos]) != string(src[:pos]) {
			t.Fatalf("after Flush at %d the file does not hold the appended bytes", pos)
		}
		for i := pos; i < alignUp(pos, 4096) && i < size; i++ {
			if disk[i] != 0 {
				t.Fatalf("padding byte %d after flushed position %d is %d, want 0", i, pos, disk[i])
			}
		}
	}
	st := a.(Stats).IOStats()
	if st.WriteBytes%512 != 0 {
		t.Fatalf("direct wrote %d bytes: not whole sectors", st.WriteBytes)
	}
}

func TestBlockCacheAPI(t *testing.T) {
	if _, err := NewBlockCache(0, 4096); !errors.Is(err, ErrBadSize) {
		t.Fatalf("zero capacity: %v", err)
	}
	if _, err := NewBlockCache(1<<20, 1000); !errors.Is(err, ErrBadSize) {
		t.Fatalf("block size not a sector multiple: %v", err)
	}
	c, err := NewBlockCache(1<<20, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.BlockSize() != 4096 {
		t.Fatalf("BlockSize = %d", c.BlockSize())
	}
	a, b := FileID{Dev: 1, Ino: 2}, FileID{Dev: 1, Ino: 3}
	blk := make([]byte, 4096)
	blk[0] = 42
	if c.Set(a, 0, blk[:100]) {
		t.Fatal("Set accepted a short block")
	}
	if c.Set(a, -1, blk) || c.Set(a, 1<<32, blk) {
		t.Fatal("Set accepted an out-of-range block index")
	}
	c.Set(a, 7, blk)
	blk[0] = 0 // the cache keeps its own copy
	c.Wait()
	if got, ok := c.Get(a, 7); !ok || got[0] != 42 {
		t.Fatalf("Get(a, 7) = %v", ok)
	}
	if _, ok := c.Get(b, 7); ok {
		t.Fatal("another file's block hit")
	}
	if _, ok := c.Get(a, 8); ok {
		t.Fatal("another block hit")
	}
	c.Invalidate(a)
	if _, ok := c.Get(a, 7); ok {
		t.Fatal("hit after Invalidate")
	}
	if s := c.Stats(); s.Hits != 1 || s.Misses != 3 || s.HitRatio != 0.25 {
		t.Fatalf("Stats = %+v", s)
	}
	f, err := vfs.Default.OpenFile(segPath(t), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if id := FileIDOf(f); id.Ino == 0 && id.Path == "" {
		t.Fatalf("FileIDOf = %+v", id)
	}
}

// TestDirectFlushAfterLastSpan flushes a segment whose last span has just
// been queued. The writer goroutine exits by itself once it has written the
// last span; a Flush that read the written position just before that and
// then queued a job for the writer would wait forever (a commit-log group
// flush then answered FLUSH_DISK_TIMEOUT for every later put). The hook
// holds Flush in that window until the writer has written the last span.
func TestDirectFlushAfterLastSpan(t *testing.T) {
	const size = 64 << 10
	for i := 0; i < 20; i++ {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("%020d", i))
		a := openOrSkip(t, Direct, vfs.Default, path, size, 0, DefaultConfig())
		d := a.(*directAppender)
		directTailHook = func() {
			// The writer's last step before it leaves: it stores the
			// written position, then finds the queue empty.
			for d.written.Load() < size {
				time.Sleep(50 * time.Microsecond)
			}
			time.Sleep(5 * time.Millisecond)
		}
		src := randomBytes(uint64(i), size)
		if _, err := a.Append(src); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-flushAsync(a):
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("segment %d: Flush after the last span did not return in 20 s", i)
		}
		directTailHook = nil
		if got := a.FlushedPos(); got != size {
			t.Fatalf("segment %d: flushed %d after Flush, want %d", i, got, size)
		}
		checkFile(t, path, src)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

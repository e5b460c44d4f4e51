package iopath

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/brokerlab/brokerlab/engine/pagecache"
	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/strictfs"
)

// residentAfterFlush appends 2 MiB with path k, flushes, and returns the
// fraction of the written pages that are in the page cache.
func residentAfterFlush(t *testing.T, k Kind) float64 {
	t.Helper()
	path := segPath(t)
	const n = 2 << 20
	a := openOrSkip(t, k, vfs.Default, path, n, 0, DefaultConfig())
	defer a.Close()
	src := randomBytes(11, n)
	appendAll(t, a, src, 5, 64<<10)
	if _, err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	checkRead(t, a, src, 0, 4096) // a read through the path still works
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Skip the page just read back (pread may bring it in again).
	vec, err := pagecache.ResidencyMap(int(f.Fd()), n)
	if errors.Is(err, pagecache.ErrUnsupported) {
		t.Skipf("no mincore here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	resident := 0
	for _, r := range vec[1:] {
		if r {
			resident++
		}
	}
	return float64(resident) / float64(len(vec)-1)
}

// TestUncachedDropsWrittenPages: once a Flush (fdatasync) returns, the
// pages the uncached path wrote have been written back and dropped, while
// the pwrite path's stay cached.
func TestUncachedDropsWrittenPages(t *testing.T) {
	unc := residentAfterFlush(t, Uncached)
	pw := residentAfterFlush(t, Pwrite)
	t.Logf("resident after flush: uncached %.0f %%, pwrite %.0f %%", 100*unc, 100*pw)
	if pw < 0.9 {
		t.Skipf("pwrite's pages are not cached after a flush (%.0f %%): memory pressure, cannot compare", 100*pw)
	}
	if unc > 0.5 {
		t.Fatalf("uncached left %.0f %% of its written pages in the page cache after fdatasync", 100*unc)
	}
}

// TestUncachedUnsupported: a file whose File has no uncached write (and a
// kernel refusing the flag looks the same) makes Open fail with
// ErrUnsupported and leaves no file behind.
func TestUncachedUnsupported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "00000000000000000000")
	_, err := Open(Uncached, plainFS{vfs.Default}, path, 64<<10, 0, DefaultConfig())
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Open over a file system without RWF_DONTCACHE: %v, want ErrUnsupported", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused Open left %s behind (%v)", path, err)
	}
}

// TestUncachedOverStrictFS: the uncached path's writes are durable after
// Flush and not before, like pwrite's.
func TestUncachedOverStrictFS(t *testing.T) {
	fs := strictfs.New()
	if err := fs.MkdirAllDurable("/d"); err != nil {
		t.Fatal(err)
	}
	a, err := Open(Uncached, fs, "/d/seg", 64<<10, 0, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	src := randomBytes(4, 20000)
	appendAll(t, a, src[:10000], 1, 500)
	if _, err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	appendAll(t, a, src[10000:], 2, 500)
	fs.Cut(strictfs.CutOptions{})
	a.Close()
	after := fs.AfterCut()
	b, err := Open(Uncached, after, "/d/seg", 64<<10, 10000, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	checkRead(t, b, src, 0, 10000)
	got := make([]byte, 100)
	f, _ := after.OpenFile("/d/seg", os.O_RDONLY, 0)
	defer f.Close()
	f.ReadAt(got, 10000)
	for _, c := range got {
		if c != 0 {
			t.Fatalf("unflushed bytes survived the power cut")
		}
	}
}

// plainFS hides the OS file's uncached write.
type plainFS struct{ vfs.FS }

type plainFile struct{ vfs.File }

func (p plainFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := p.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return plainFile{f}, nil
}

package iopath

import (
	"bytes"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
	"github.com/brokerlab/brokerlab/engine/vfs/strictfs"
)

// dsyncKinds are the write paths with a durable write.
var dsyncKinds = []Kind{Pwrite, Uncached, Direct}

// dsyncSeg is a strictfs (power cuts) behind a faultfs (stalls, errors)
// with the root made durable, and the segment path in it.
func dsyncSeg(t *testing.T) (*strictfs.FS, *faultfs.Injector, vfs.FS, string) {
	t.Helper()
	sfs := strictfs.New()
	if err := sfs.MkdirAllDurable("/d"); err != nil {
		t.Fatal(err)
	}
	inj := faultfs.NewInjector(1)
	return sfs, inj, faultfs.Wrap(sfs, inj), "/d/00000000000000000000"
}

func dsyncConfig() Config {
	cfg := DefaultConfig()
	cfg.DSync = true
	cfg.CommitInterval = 0
	return cfg
}

// mmap and pool have no durable write: Open refuses DSync with ErrNoDSync
// and creates nothing; SupportsDSync says which paths have one.
func TestDSyncRefusedWithoutDurableWrite(t *testing.T) {
	for _, k := range Kinds() {
		want := k == Pwrite || k == Uncached || k == Direct
		if SupportsDSync(k) != want {
			t.Fatalf("SupportsDSync(%s) = %v, want %v", k, !want, want)
		}
		if want {
			continue
		}
		path := segPath(t)
		_, err := Open(k, vfs.Default, path, 1<<16, 0, dsyncConfig())
		if !errors.Is(err, ErrNoDSync) {
			t.Fatalf("Open(%s) with DSync: %v, want ErrNoDSync", k, err)
		}
		if _, serr := os.Stat(path); !errors.Is(serr, os.ErrNotExist) {
			t.Fatalf("Open(%s) with DSync refused but left %s: %v", k, path, serr)
		}
	}
}

// Under DSync every append is durable once written, with no fdatasync but
// the one that makes the preallocated size durable at open: after Flush a
// power cut keeps exactly what was appended.
func TestDSyncDurableWithoutFdatasync(t *testing.T) {
	for _, k := range dsyncKinds {
		t.Run(string(k), func(t *testing.T) {
			sfs, _, fs, path := dsyncSeg(t)
			const size = 64 << 10
			a := openOrSkip(t, k, fs, path, size, 0, dsyncConfig())
			defer a.Close()
			if err := fs.SyncDir("/d"); err != nil { // the segment's name, as the segment queue does
				t.Fatal(err)
			}
			src := randomBytes(7, 20000)
			appendAll(t, a, src, 3, 700)
			fp, err := a.Flush()
			if err != nil || fp != int64(len(src)) || a.FlushedPos() != fp {
				t.Fatalf("Flush = %d, %v (FlushedPos %d), want %d", fp, err, a.FlushedPos(), len(src))
			}
			st := sfs.Stats()
			if st.Syncs != 1 || st.DSyncWrites == 0 {
				t.Fatalf("%d fdatasyncs and %d durable writes, want 1 (the size at open) and > 0", st.Syncs, st.DSyncWrites)
			}
			sfs.Cut(strictfs.CutOptions{Tear: strictfs.TearNone})
			after := sfs.AfterCut()
			f, err := after.OpenFile(path, os.O_RDONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil || fi.Size() != size {
				t.Fatalf("after the cut the segment is %v bytes (%v), want its preallocated %d", fi.Size(), err, size)
			}
			got := make([]byte, len(src))
			if _, err := f.ReadAt(got, 0); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, src) {
				t.Fatalf("after the cut the appended bytes differ")
			}
		})
	}
}

// Several durable writes are in flight at once on pwrite and uncached:
// with every write stalled, DSyncWriters of them have started. Meanwhile
// Append goes on, ReadAt serves the queued bytes, and neither FlushedPos
// nor CommittedPos moves; once released, Flush covers everything.
func TestDSyncWritesOverlap(t *testing.T) {
	for _, k := range []Kind{Pwrite, Uncached} {
		t.Run(string(k), func(t *testing.T) {
			_, inj, fs, path := dsyncSeg(t)
			cfg := dsyncConfig()
			cfg.DSyncWriters = 3
			a := openOrSkip(t, k, fs, path, 1<<16, 0, cfg)
			defer a.Close()
			stall := make(chan struct{})
			defer func() {
				select {
				case <-stall:
				default:
					close(stall)
				}
			}()
			id := inj.Add(faultfs.Rule{Op: vfs.OpWrite, Hold: stall})
			src := randomBytes(9, 8*100)
			for i := 0; i < 8; i++ {
				if _, err := a.Append(src[i*100 : (i+1)*100]); err != nil {
					t.Fatal(err)
				}
				if i < 3 {
					// One append per idle writer, so none coalesces two.
					waitFor(t, "the append's write to start", func() bool { return inj.Fired(id) == uint64(i+1) })
				}
			}
			if n := inj.Fired(id); n != 3 {
				t.Fatalf("%d writes started, want DSyncWriters = 3", n)
			}
			got := make([]byte, len(src))
			if n, err := a.ReadAt(got, 0); err != nil || n != len(src) || !bytes.Equal(got, src) {
				t.Fatalf("ReadAt of queued bytes: %d, %v, equal %v", n, err, bytes.Equal(got, src))
			}
			if a.FlushedPos() != 0 || CommittedPos(a) != 0 {
				t.Fatalf("FlushedPos %d, CommittedPos %d while every write is stalled, want 0", a.FlushedPos(), CommittedPos(a))
			}
			close(stall)
			if fp, err := a.Flush(); err != nil || fp != int64(len(src)) {
				t.Fatalf("Flush = %d, %v, want %d", fp, err, len(src))
			}
			if CommittedPos(a) != int64(len(src)) {
				t.Fatalf("CommittedPos %d after Flush, want %d", CommittedPos(a), len(src))
			}
		})
	}
}

// holdFirstFS hands out files whose durable write at offset 0 waits until
// release is closed; the others proceed.
type holdFirstFS struct {
	vfs.FS
	release chan struct{}
	held    chan struct{} // closed when the write at 0 has started waiting
}

type holdFirstFile struct {
	vfs.File
	fs *holdFirstFS
}

func (h *holdFirstFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := h.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return holdFirstFile{File: f, fs: h}, nil
}

func (f holdFirstFile) WriteAtDSync(p []byte, off int64, uncached bool) (int, error) {
	if off == 0 {
		close(f.fs.held)
		<-f.fs.release
	}
	return vfs.WriteAtDSync(f.File, p, off, uncached)
}

// The flushed position advances only over a contiguous completed prefix:
// while the first write stalls, the later ones complete and FlushedPos
// stays at the start; it jumps to the end when the first completes.
func TestDSyncFlushedPosIsContiguousPrefix(t *testing.T) {
	_, _, fs, path := dsyncSeg(t)
	hfs := &holdFirstFS{FS: fs, release: make(chan struct{}), held: make(chan struct{})}
	a := openOrSkip(t, Pwrite, hfs, path, 1<<16, 0, dsyncConfig())
	released := false
	defer func() {
		if !released {
			close(hfs.release) // a failed check must not leave Close waiting for the writer
		}
		a.Close()
	}()
	src := randomBytes(11, 4*64)
	for i := 0; i < 4; i++ {
		if _, err := a.Append(src[i*64 : (i+1)*64]); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			<-hfs.held // the first append's write waits alone
		}
	}
	// The three later appends are written (in one to three calls) while
	// the first waits.
	waitFor(t, "the later writes to complete", func() bool { return a.(Stats).IOStats().WriteBytes == 3*64 })
	if fp := a.FlushedPos(); fp != 0 {
		t.Fatalf("FlushedPos %d with the first write stalled, want 0", fp)
	}
	close(hfs.release)
	released = true
	if fp, err := a.Flush(); err != nil || fp != int64(len(src)) {
		t.Fatalf("Flush = %d, %v, want %d", fp, err, len(src))
	}
}

// A failed durable write is sticky: Flush returns it and so does every
// later Append, also once the fault is gone; the flushed position stays
// below the failed write.
func TestDSyncWriteErrorSticky(t *testing.T) {
	for _, k := range dsyncKinds {
		t.Run(string(k), func(t *testing.T) {
			_, inj, fs, path := dsyncSeg(t)
			a := openOrSkip(t, k, fs, path, 1<<16, 0, dsyncConfig())
			defer a.Close()
			if _, err := a.Append(randomBytes(1, 4096)); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Flush(); err != nil {
				t.Fatal(err)
			}
			id := inj.Add(faultfs.Rule{Op: vfs.OpWrite, Err: syscall.EIO})
			if _, err := a.Append(randomBytes(2, 4096)); err != nil && !errors.Is(err, syscall.EIO) {
				t.Fatal(err)
			}
			if _, err := a.Flush(); !errors.Is(err, syscall.EIO) {
				t.Fatalf("Flush after a failed durable write: %v, want EIO", err)
			}
			inj.Remove(id)
			if _, err := a.Append([]byte("x")); !errors.Is(err, syscall.EIO) {
				t.Fatalf("Append after the fault cleared: %v, want sticky EIO", err)
			}
			if fp := a.FlushedPos(); fp != 4096 {
				t.Fatalf("FlushedPos %d, want 4096 (below the failed write)", fp)
			}
		})
	}
}

package strictfs

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

func mustOpen(t *testing.T, fs *FS, name string, flag int) *file {
	t.Helper()
	f, err := fs.OpenFile(name, flag, 0o644)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	return f.(*file)
}

func readAll(t *testing.T, fs *FS, name string) []byte {
	t.Helper()
	f, err := fs.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return b
}

func exists(fs *FS, name string) bool {
	_, err := fs.Stat(name)
	return err == nil
}

func newRoot(t *testing.T) *FS {
	fs := New()
	if err := fs.MkdirAllDurable("/data"); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestStrictUnsyncedWritesAreLost(t *testing.T) {
	fs := newRoot(t)
	f := mustOpen(t, fs, "/data/a", os.O_RDWR|os.O_CREATE)
	if err := fs.SyncDir("/data"); err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("durable"), 0)
	if err := f.Datasync(); err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("volatile"), 7)
	if got := readAll(t, fs, "/data/a"); string(got) != "durablevolatile" {
		t.Fatalf("before the cut: %q", got)
	}
	fs.Cut(CutOptions{})
	if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, ErrPowerCut) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("write after the cut: %v", err)
	}
	if err := f.Datasync(); !errors.Is(err, ErrPowerCut) {
		t.Fatalf("sync after the cut: %v", err)
	}
	if err := fs.SyncDir("/data"); !errors.Is(err, ErrPowerCut) {
		t.Fatalf("syncdir after the cut: %v", err)
	}
	after := fs.AfterCut()
	if got := readAll(t, after, "/data/a"); string(got) != "durable" {
		t.Fatalf("after the cut: %q, want %q", got, "durable")
	}
	if st := after.Stats(); st.LostBytes != int64(len("volatile")) {
		t.Fatalf("lost %d bytes, want %d", st.LostBytes, len("volatile"))
	}
}

func TestStrictDirectoryEntriesNeedDirSync(t *testing.T) {
	fs := newRoot(t)
	// A synced file whose directory entry never was.
	f := mustOpen(t, fs, "/data/new", os.O_RDWR|os.O_CREATE)
	f.WriteAt([]byte("x"), 0)
	f.Datasync()
	// A directory made but its parent never synced, with a synced file and
	// a synced directory entry in it.
	fs.MkdirAll("/data/sub/deeper", 0o755)
	g := mustOpen(t, fs, "/data/sub/deeper/f", os.O_RDWR|os.O_CREATE)
	g.WriteAt([]byte("y"), 0)
	g.Datasync()
	fs.SyncDir("/data/sub/deeper")
	fs.Cut(CutOptions{})
	after := fs.AfterCut()
	if exists(after, "/data/new") {
		t.Fatalf("a file whose creation was not dir-synced survived")
	}
	if exists(after, "/data/sub") {
		t.Fatalf("a directory whose parent was not synced survived")
	}

	fs = newRoot(t)
	fs.MkdirAll("/data/sub", 0o755)
	fs.SyncDir("/data")
	g = mustOpen(t, fs, "/data/sub/f", os.O_RDWR|os.O_CREATE)
	g.WriteAt([]byte("y"), 0)
	g.Datasync()
	fs.SyncDir("/data/sub")
	fs.Cut(CutOptions{})
	if got := readAll(t, fs.AfterCut(), "/data/sub/f"); string(got) != "y" {
		t.Fatalf("durable file in a durable directory: %q", got)
	}
}

func TestStrictRenameIsOldOrNew(t *testing.T) {
	write := func(fs *FS, name, s string) {
		f := mustOpen(t, fs, name, os.O_RDWR|os.O_CREATE|os.O_TRUNC)
		f.WriteAt([]byte(s), 0)
		f.Datasync()
		f.Close()
	}
	for _, syncDir := range []bool{false, true} {
		fs := newRoot(t)
		write(fs, "/data/cfg", "old")
		fs.SyncDir("/data")
		write(fs, "/data/cfg.tmp", "new")
		if err := fs.Rename("/data/cfg.tmp", "/data/cfg"); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, fs, "/data/cfg"); string(got) != "new" {
			t.Fatalf("volatile view after rename: %q", got)
		}
		if syncDir {
			fs.SyncDir("/data")
		}
		fs.Cut(CutOptions{})
		after := fs.AfterCut()
		want := "old"
		if syncDir {
			want = "new"
		}
		if got := readAll(t, after, "/data/cfg"); string(got) != want {
			t.Fatalf("dir synced %v: %q, want %q", syncDir, got, want)
		}
		if exists(after, "/data/cfg.tmp") {
			t.Fatalf("dir synced %v: tmp file present after the cut", syncDir)
		}
	}
}

func TestStrictTearPrefixOfDirectoryOps(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(0); seed < 64; seed++ {
		fs := newRoot(t)
		for _, n := range []string{"a", "b", "c"} {
			mustOpen(t, fs, "/data/"+n, os.O_RDWR|os.O_CREATE).Close()
		}
		fs.Cut(CutOptions{Tear: TearPrefix, Rand: rand.New(rand.NewPCG(seed, 0))})
		after := fs.AfterCut()
		state := ""
		for _, n := range []string{"a", "b", "c"} {
			if exists(after, "/data/"+n) {
				state += n
			}
		}
		if state != "" && state != "a" && state != "ab" && state != "abc" {
			t.Fatalf("directory ops survived out of order: %q", state)
		}
		seen[state] = true
	}
	if len(seen) < 3 {
		t.Fatalf("TearPrefix kept too few distinct prefixes: %v", seen)
	}
}

func TestStrictTearIsSectorAligned(t *testing.T) {
	const size = 8 * SectorSize
	newData := bytes.Repeat([]byte{0xAB}, size-100)
	for _, tear := range []Tear{TearLast, TearPrefix} {
		kept := map[int]bool{}
		for seed := uint64(0); seed < 64; seed++ {
			fs := newRoot(t)
			f := mustOpen(t, fs, "/data/log", os.O_RDWR|os.O_CREATE)
			f.Allocate(size)
			f.Datasync()
			fs.SyncDir("/data")
			f.WriteAt(newData, 100) // unsynced, starts mid-sector
			fs.Cut(CutOptions{Tear: tear, Rand: rand.New(rand.NewPCG(seed, 1))})
			got := readAll(t, fs.AfterCut(), "/data/log")
			if len(got) != size {
				t.Fatalf("%v: size %d, want %d", tear, len(got), size)
			}
			n := bytes.LastIndexByte(got, 0xAB) + 1
			if n > 0 && n%SectorSize != 0 && n != size {
				t.Fatalf("%v: torn at %d, not a sector boundary", tear, n)
			}
			if n > 0 && !bytes.Equal(got[100:n], newData[:n-100]) {
				t.Fatalf("%v: kept bytes are not a prefix of the write", tear)
			}
			if n > 0 && bytes.Count(got[:100], []byte{0}) != 100 {
				t.Fatalf("%v: bytes before the write changed", tear)
			}
			kept[n] = true
		}
		if len(kept) < 4 {
			t.Fatalf("%v: only %d distinct tear points in 64 cuts", tear, len(kept))
		}
	}
}

func TestStrictTearLastDropsEarlierUnsyncedWrites(t *testing.T) {
	holes := 0
	for seed := uint64(0); seed < 32; seed++ {
		fs := newRoot(t)
		f := mustOpen(t, fs, "/data/log", os.O_RDWR|os.O_CREATE)
		f.Allocate(4 * SectorSize)
		f.Datasync()
		fs.SyncDir("/data")
		f.WriteAt(bytes.Repeat([]byte{1}, SectorSize), 0)
		f.WriteAt(bytes.Repeat([]byte{2}, SectorSize), SectorSize)
		fs.Cut(CutOptions{Tear: TearLast, Rand: rand.New(rand.NewPCG(seed, 2))})
		got := readAll(t, fs.AfterCut(), "/data/log")
		if got[0] != 0 {
			t.Fatalf("an earlier unsynced write survived under TearLast")
		}
		if got[SectorSize] == 2 {
			holes++
		}
	}
	if holes == 0 {
		t.Fatalf("the last write never survived in 32 cuts")
	}
}

func TestStrictMsyncMakesMappedRangeDurable(t *testing.T) {
	fs := newRoot(t)
	f := mustOpen(t, fs, "/data/m", os.O_RDWR|os.O_CREATE)
	fs.SyncDir("/data")
	f.Allocate(3 * pageSize)
	m, err := f.Map(3 * pageSize)
	if err != nil {
		t.Fatal(err)
	}
	copy(m[10:], "synced")
	copy(m[pageSize+10:], "not synced")
	if got := make([]byte, 6); func() bool { f.ReadAt(got, 10); return string(got) != "synced" }() {
		t.Fatalf("the mapping is not the page cache")
	}
	if err := f.Msync(m[:pageSize]); err != nil {
		t.Fatal(err)
	}
	if err := f.Msync(make([]byte, 8)); err == nil {
		t.Fatalf("msync of memory outside the mapping succeeded")
	}
	f.Unmap(m)
	fs.Cut(CutOptions{})
	got := readAll(t, fs.AfterCut(), "/data/m")
	if len(got) != 3*pageSize || string(got[10:16]) != "synced" {
		t.Fatalf("msynced range lost (size %d)", len(got))
	}
	if bytes.Contains(got, []byte("not synced")) {
		t.Fatalf("an unsynced mapped page survived TearNone")
	}
}

func TestStrictDirectAlignment(t *testing.T) {
	if directFlag == 0 {
		t.Skip("no O_DIRECT on this OS")
	}
	fs := newRoot(t)
	f := mustOpen(t, fs, "/data/d", os.O_RDWR|os.O_CREATE|directFlag)
	if _, err := f.WriteAt(make([]byte, 100), 0); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("unaligned O_DIRECT write: %v", err)
	}
	if _, err := f.WriteAt(make([]byte, SectorSize), SectorSize); err != nil {
		t.Fatalf("aligned O_DIRECT write: %v", err)
	}
}

func TestStrictFileSystemBasics(t *testing.T) {
	fs := newRoot(t)
	if _, err := fs.OpenFile("/data/missing", os.O_RDONLY, 0); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	mustOpen(t, fs, "/data/x", os.O_RDWR|os.O_CREATE).Close()
	if _, err := fs.OpenFile("/data/x", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0); !errors.Is(err, os.ErrExist) {
		t.Fatalf("O_EXCL on an existing file: %v", err)
	}
	mustOpen(t, fs, "/data/b", os.O_RDWR|os.O_CREATE).Close()
	ents, err := fs.ReadDir("/data")
	if err != nil || len(ents) != 2 || ents[0].Name() != "b" || ents[1].Name() != "x" {
		t.Fatalf("ReadDir: %v %v", ents, err)
	}
	if err := fs.Remove("/data/x"); err != nil || exists(fs, "/data/x") {
		t.Fatalf("remove: %v", err)
	}
	if err := fs.Remove("/data"); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Fatalf("remove of a non-empty directory: %v", err)
	}
	f := mustOpen(t, fs, "/data/b", os.O_RDWR)
	f.WriteAt([]byte("hello"), 0)
	f.Truncate(2)
	if got := readAll(t, fs, "/data/b"); string(got) != "he" {
		t.Fatalf("truncate: %q", got)
	}
	f.Truncate(4)
	if got := readAll(t, fs, "/data/b"); !bytes.Equal(got, []byte{'h', 'e', 0, 0}) {
		t.Fatalf("truncate up: %q", got)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
}

// TestStrictMkdirAllDurable: vfs.MkdirAllDurable's directories survive a
// cut, MkdirAll's do not.
func TestStrictMkdirAllDurable(t *testing.T) {
	fs := newRoot(t)
	if err := vfs.MkdirAllDurable(fs, "/data/a/b/c", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fs.MkdirAll("/data/x/y", 0o755); err != nil {
		t.Fatal(err)
	}
	before := fs.Stats().DirSyncs
	if err := vfs.MkdirAllDurable(fs, "/data/a/b/c", 0o755); err != nil {
		t.Fatal(err)
	}
	if fs.Stats().DirSyncs != before {
		t.Fatalf("MkdirAllDurable of an existing directory synced")
	}
	fs.Cut(CutOptions{})
	after := fs.AfterCut()
	if !exists(after, "/data/a/b/c") {
		t.Fatalf("a directory made with MkdirAllDurable was lost")
	}
	if exists(after, "/data/x") {
		t.Fatalf("a directory made with MkdirAll survived without a parent sync")
	}
}

// A WriteAtDSync range survives a power cut on its own: the bytes written
// with it are durable, the plain writes around it are not.
func TestWriteAtDSyncDurableOnCompletion(t *testing.T) {
	fs := New()
	f, err := fs.OpenFile("/d", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Allocate(3 * SectorSize); err != nil {
		t.Fatal(err)
	}
	if err := f.Datasync(); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	plain := bytes.Repeat([]byte{'p'}, SectorSize)
	durable := bytes.Repeat([]byte{'d'}, SectorSize)
	if _, err := f.WriteAt(plain, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := vfs.WriteAtDSync(f, durable, SectorSize, false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(plain, 2*SectorSize); err != nil {
		t.Fatal(err)
	}
	fs.Cut(CutOptions{Tear: TearNone})
	after := fs.AfterCut()
	g, err := after.OpenFile("/d", os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 3*SectorSize)
	if _, err := g.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	want := append(append(make([]byte, SectorSize), durable...), make([]byte, SectorSize)...)
	if !bytes.Equal(got, want) {
		t.Fatalf("after the cut the file holds %q..., want only the RWF_DSYNC sector", got[:16])
	}
	if st := fs.Stats(); st.DSyncWrites != 1 {
		t.Fatalf("DSyncWrites = %d, want 1", st.DSyncWrites)
	}
}

//go:build linux

package pagecache

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

const tmpfsMagic = 0x01021994

// writeFile writes size bytes of non-zero data and returns the open file.
func writeFile(t *testing.T, path string, size int) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(bytes.Repeat([]byte{0xA5}, size)); err != nil {
		t.Fatal(err)
	}
	return f
}

func skipOnTmpfs(t *testing.T, dir string) {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type == tmpfsMagic {
		t.Skip("tmpfs: page-cache pages are the file itself, FADV_DONTNEED cannot drop them")
	}
}

func TestResidencyAfterWriteAndDrop(t *testing.T) {
	dir := t.TempDir()
	skipOnTmpfs(t, dir)
	const size = 4<<20 + 100 // not a page multiple
	f := writeFile(t, filepath.Join(dir, "seg"), size)

	res, total, err := Residency(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != Pages(size) {
		t.Fatalf("total = %d, want %d", total, Pages(size))
	}
	if res != total {
		t.Fatalf("just-written file: resident %d of %d, want all", res, total)
	}

	if err := SyncAndDrop(f); err != nil {
		t.Fatal(err)
	}
	res, _, err = Residency(f, size)
	if err != nil {
		t.Fatal(err)
	}
	if res != 0 {
		t.Fatalf("after fdatasync + DONTNEED on a clean file: resident %d, want 0", res)
	}

	// Reading the first 8 pages brings at least those back.
	buf := make([]byte, 8*PageSize())
	if _, err := f.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	m, err := ResidencyMap(int(f.Fd()), size)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		if !m[i] {
			t.Fatalf("page %d not resident after reading it", i)
		}
	}
}

func TestDropFileLeavesDirtyPages(t *testing.T) {
	dir := t.TempDir()
	skipOnTmpfs(t, dir)
	f := writeFile(t, filepath.Join(dir, "seg"), 1<<20)
	// Drop without syncing, then sync and drop: only the second is guaranteed
	// to empty the cache, but neither may fail.
	if err := DropFile(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	if err := DropFile(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	if res, _, err := Residency(f, 0); err != nil || res != 0 {
		t.Fatalf("resident %d err %v, want 0 <nil>", res, err)
	}
}

func TestMappedResidency(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(dir, "seg"), 64<<10)
	m, err := unix.Mmap(int(f.Fd()), 0, 64<<10, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	res, total, err := MappedResidency(m)
	if err != nil {
		t.Fatal(err)
	}
	if total != Pages(64<<10) || res != total {
		t.Fatalf("resident %d/%d, want %d/%d", res, total, Pages(64<<10), Pages(64<<10))
	}
	if _, _, err := MappedResidency(m[1:]); !errors.Is(err, ErrUnaligned) {
		t.Fatalf("unaligned slice: err %v, want ErrUnaligned", err)
	}
	if res, total, err := MappedResidency(nil); res != 0 || total != 0 || err != nil {
		t.Fatalf("empty slice: %d %d %v", res, total, err)
	}
}

func TestResidencyWriteOnlyFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wo")
	if err := os.WriteFile(path, make([]byte, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, _, err := Residency(f, 0); !errors.Is(err, unix.EACCES) {
		t.Fatalf("write-only descriptor: err %v, want EACCES", err)
	}
}

func TestResidencyDir(t *testing.T) {
	dir := t.TempDir()
	skipOnTmpfs(t, dir)
	writeFile(t, filepath.Join(dir, "00000000000000000000"), 256<<10)
	writeFile(t, filepath.Join(dir, "00000000000000262144"), 128<<10)
	if err := os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	rs, err := ResidencyDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("got %d files, want 3 (directories skipped): %+v", len(rs), rs)
	}
	if rs[0].Name != "00000000000000000000" || rs[0].Total != Pages(256<<10) || rs[0].Fraction() != 1 {
		t.Fatalf("first: %+v", rs[0])
	}
	if rs[2].Name != "empty" || rs[2].Total != 0 || rs[2].Fraction() != 0 {
		t.Fatalf("empty: %+v", rs[2])
	}
	if err := DropDir(dir); err != nil {
		t.Fatal(err)
	}
	rs, err = ResidencyDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Resident != 0 {
			t.Fatalf("after DropDir: %+v", r)
		}
	}
}

func TestResidencyDirMissing(t *testing.T) {
	if _, err := ResidencyDir(filepath.Join(t.TempDir(), "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err %v, want ErrNotExist", err)
	}
}

package vfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestOSFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "seg")
	f, err := Default.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Name() != name {
		t.Fatalf("Name = %q, want %q", f.Name(), name)
	}
	const size = 64 << 10
	if err := f.Allocate(size); err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != size {
		t.Fatalf("size after Allocate = %d, want %d", fi.Size(), size)
	}
	if got, ok := allocatedBytes(fi); ok && got < size {
		t.Fatalf("st_blocks*512 = %d < %d after fallocate", got, size)
	}
	// Allocate never shrinks.
	if err := f.Allocate(4096); err != nil {
		t.Fatal(err)
	}
	if fi, _ := f.Stat(); fi.Size() != size {
		t.Fatalf("Allocate shrank the file to %d", fi.Size())
	}

	msg := []byte("hello, segment")
	if _, err := f.WriteAt(msg, 100); err != nil {
		t.Fatal(err)
	}
	if err := f.Datasync(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := f.ReadAt(got, 100); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("ReadAt = %q, %v", got, err)
	}

	m, err := f.Map(size)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m[100:100+len(msg)], msg) {
		t.Fatalf("mapping does not show written bytes")
	}
	copy(m[8192:], "through the map")
	if err := f.Msync(m[8192 : 8192+4096]); err != nil {
		t.Fatal(err)
	}
	if err := f.Unmap(m); err != nil {
		t.Fatal(err)
	}
	got = make([]byte, 15)
	if _, err := f.ReadAt(got, 8192); err != nil || string(got) != "through the map" {
		t.Fatalf("ReadAt after msync = %q, %v", got, err)
	}
	if err := f.Truncate(8192); err != nil {
		t.Fatal(err)
	}
	if fi, _ := f.Stat(); fi.Size() != 8192 {
		t.Fatalf("Truncate: size %d", fi.Size())
	}
}

func TestOSFSDirOps(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a", "b")
	if err := Default.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := Default.OpenFile(filepath.Join(sub, "x"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := Default.Rename(filepath.Join(sub, "x"), filepath.Join(sub, "y")); err != nil {
		t.Fatal(err)
	}
	if err := Default.SyncDir(sub); err != nil {
		t.Fatal(err)
	}
	ents, err := Default.ReadDir(sub)
	if err != nil || len(ents) != 1 || ents[0].Name() != "y" {
		t.Fatalf("ReadDir = %v, %v", ents, err)
	}
	if _, err := Default.Stat(filepath.Join(sub, "y")); err != nil {
		t.Fatal(err)
	}
	if err := Default.Remove(filepath.Join(sub, "y")); err != nil {
		t.Fatal(err)
	}
	if _, err := Default.Stat(filepath.Join(sub, "y")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Stat after Remove: %v", err)
	}
	if err := Default.SyncDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("SyncDir of a missing directory succeeded")
	}
}

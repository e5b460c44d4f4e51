package vfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestODirect opens with O_DIRECT on the test's temporary directory (ext4
// here: must work) and on tmpfs, which refuses O_DIRECT before Linux 6.6
// (the error must then wrap ErrUnsupported) and accepts it since.
func TestODirect(t *testing.T) {
	f, err := Default.OpenFile(filepath.Join(t.TempDir(), "d"), os.O_RDWR|os.O_CREATE|unix.O_DIRECT, 0o644)
	if err != nil {
		if errors.Is(err, ErrUnsupported) {
			t.Skipf("temporary directory refuses O_DIRECT: %v", err)
		}
		t.Fatal(err)
	}
	f.Close()

	if _, err := os.Stat("/dev/shm"); err != nil {
		t.Skip("no /dev/shm tmpfs to try O_DIRECT on")
	}
	shm, err := os.MkdirTemp("/dev/shm", "vfstest")
	if err != nil {
		t.Skipf("cannot use /dev/shm: %v", err)
	}
	defer os.RemoveAll(shm)
	f, err = Default.OpenFile(filepath.Join(shm, "d"), os.O_RDWR|os.O_CREATE|unix.O_DIRECT, 0o644)
	switch {
	case err == nil:
		t.Log("tmpfs accepts O_DIRECT on this kernel")
		f.Close()
	case errors.Is(err, ErrUnsupported):
		t.Logf("tmpfs refuses O_DIRECT: %v", err)
	default:
		t.Fatalf("O_DIRECT on tmpfs: error %v does not wrap ErrUnsupported", err)
	}
}

func TestOSWriteAtUncached(t *testing.T) {
	name := filepath.Join(t.TempDir(), "u")
	f, err := Default.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msg := bytes.Repeat([]byte("dontcache"), 1000)
	n, err := WriteAtUncached(f, msg, 4096)
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("RWF_DONTCACHE refused here: %v", err)
	}
	if err != nil || n != len(msg) {
		t.Fatalf("WriteAtUncached = %d, %v", n, err)
	}
	got := make([]byte, len(msg))
	if _, err := f.ReadAt(got, 4096); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("read back: %v", err)
	}
}

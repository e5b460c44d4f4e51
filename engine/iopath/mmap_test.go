package iopath

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

func TestMmapSlice(t *testing.T) {
	a := openOrSkip(t, Mmap, vfs.Default, segPath(t), 64<<10, 0, DefaultConfig())
	s, ok := a.(Slicer)
	if !ok {
		t.Fatal("mmap does not implement Slicer")
	}
	src := randomBytes(1, 5000)
	appendAll(t, a, src, 1, 1000)
	b, err := s.Slice(100, 900)
	if err != nil || string(b) != string(src[100:1000]) || cap(b) != 900 {
		t.Fatalf("Slice = %d bytes (cap %d), %v", len(b), cap(b), err)
	}
	if _, err := s.Slice(4000, 1001); !errors.Is(err, ErrBadSize) {
		t.Fatalf("Slice past WrotePos: %v", err)
	}
	if _, err := s.Slice(-1, 1); !errors.Is(err, ErrBadSize) {
		t.Fatalf("Slice at a negative offset: %v", err)
	}
	a.Close()
	if _, err := s.Slice(0, 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Slice after Close: %v", err)
	}
}

// TestMmapFlushRange checks that a Flush starting mid-page msyncs from the
// page start (msync needs an aligned address) and succeeds.
func TestMmapFlushRange(t *testing.T) {
	a := openOrSkip(t, Mmap, vfs.Default, segPath(t), 64<<10, 0, DefaultConfig())
	defer a.Close()
	for _, n := range []int{10, 5000, 3, 9000} {
		if _, err := a.Append(make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		if fp, err := a.Flush(); err != nil || fp != a.WrotePos() {
			t.Fatalf("Flush = %d, %v", fp, err)
		}
	}
}

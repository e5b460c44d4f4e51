package iopath

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// forEachKind runs fn as a subtest for every registered write path.
func forEachKind(t *testing.T, fn func(t *testing.T, k Kind)) {
	t.Helper()
	kinds := Kinds()
	if len(kinds) < 4 {
		t.Fatalf("Kinds() = %v, want at least mmap, pool, pwrite, direct", kinds)
	}
	for _, k := range kinds {
		t.Run(string(k), func(t *testing.T) { fn(t, k) })
	}
}

// openOrSkip opens a segment, skipping only when the write path cannot work
// on this OS or file system (ErrUnsupported, e.g. no O_DIRECT).
func openOrSkip(t *testing.T, k Kind, fs vfs.FS, path string, size, wrotePos int64, cfg Config) Appender {
	t.Helper()
	a, err := Open(k, fs, path, size, wrotePos, cfg)
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("%s unsupported here: %v", k, err)
	}
	if err != nil {
		t.Fatalf("Open(%s, %s, size %d, wrotePos %d): %v", k, path, size, wrotePos, err)
	}
	return a
}

func segPath(t *testing.T) string { return filepath.Join(t.TempDir(), "00000000000000000000") }

// randomBytes returns n deterministic pseudo-random bytes.
func randomBytes(seed uint64, n int) []byte {
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	b := make([]byte, n)
	rand.NewChaCha8(key).Read(b)
	return b
}

// appendAll appends src in chunks of 1..maxChunk bytes and fails the test
// on any error.
func appendAll(t *testing.T, a Appender, src []byte, seed uint64, maxChunk int) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	for len(src) > 0 {
		n := min(len(src), 1+r.IntN(maxChunk))
		if _, err := a.Append(src[:n]); err != nil {
			t.Fatalf("Append(%d bytes) at %d: %v", n, a.WrotePos(), err)
		}
		src = src[n:]
	}
}

func checkInvariants(t *testing.T, a Appender) {
	t.Helper()
	f, w := a.FlushedPos(), a.WrotePos()
	if f < 0 || f > w || w > a.Size() {
		t.Fatalf("invariant broken: flushed %d, wrote %d, size %d", f, w, a.Size())
	}
}

// checkRead compares a.ReadAt(off, n) with want[off:off+n].
func checkRead(t *testing.T, a Appender, want []byte, off, n int64) {
	t.Helper()
	got := make([]byte, n)
	m, err := a.ReadAt(got, off)
	if err != nil || int64(m) != n {
		t.Fatalf("ReadAt(%d, %d) = %d, %v", off, n, m, err)
	}
	if !bytes.Equal(got, want[off:off+n]) {
		t.Fatalf("ReadAt(%d, %d): content differs from what was appended", off, n)
	}
}

// checkFile reads the segment file directly and compares its first
// len(want) bytes.
func checkFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < len(want) || !bytes.Equal(got[:len(want)], want) {
		t.Fatalf("file %s does not hold the %d appended bytes", path, len(want))
	}
}

// flushAsync runs a.Flush in a goroutine; its error arrives on the channel.
func flushAsync(a Appender) <-chan error {
	ch := make(chan error, 1)
	go func() {
		_, err := a.Flush()
		ch <- err
	}()
	return ch
}

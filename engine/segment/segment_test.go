package segment

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/vfs"
)

func TestNames(t *testing.T) {
	if n := Name(1073741824); n != "00000000001073741824" {
		t.Fatalf("Name = %s", n)
	}
	for in, want := range map[string]int64{"00000000000000000000": 0, "00000000001073741824": 1 << 30} {
		if got, ok := ParseName(in); !ok || got != want {
			t.Fatalf("ParseName(%s) = %d, %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "0000000000000000000", "0000000000000000000x", "abc", "000000000000000000000"} {
		if _, ok := ParseName(bad); ok {
			t.Fatalf("ParseName(%q) accepted", bad)
		}
	}
}

func newQueue(t *testing.T, dir string, prealloc bool) *Queue {
	t.Helper()
	q, err := Open(Config{FS: vfs.Default, Dir: dir, Size: 64 << 10, Path: iopath.Pwrite, IO: iopath.DefaultConfig(), PreallocateNext: prealloc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// Rolls find the next segment prepared in the background; Find maps offsets
// to segments; Close removes the unused spare; reopen finds the rest.
func TestRollPreallocFindReopen(t *testing.T) {
	dir := t.TempDir()
	q := newQueue(t, dir, true)
	for i := int64(0); i < 4; i++ {
		s, err := q.Roll(i * 64 << 10)
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(s.Path()); err != nil || fi.Size() != 64<<10 {
			t.Fatalf("segment %s not preallocated: %v", s.Path(), err)
		}
		// Give the allocator time to prepare the next one.
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(dir, Name((i+1)*64<<10))); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	st := q.Stats()
	if st.Rolls != 4 || st.Prepared < 3 {
		t.Fatalf("stats %+v: want 4 rolls, >= 3 served by the allocator", st)
	}
	for _, off := range []int64{0, 70000, 3*64<<10 + 5} {
		s, err := q.Find(off)
		if err != nil || !s.Contains(off) {
			t.Fatalf("Find(%d) = %v, %v", off, s, err)
		}
	}
	if _, err := q.Find(4 * 64 << 10); err == nil {
		t.Fatal("Find past the end succeeded")
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, Name(4*64<<10))); !os.IsNotExist(err) {
		t.Fatalf("the unused prepared segment survived Close: %v", err)
	}
	q2 := newQueue(t, dir, false)
	defer q2.Close()
	if n := len(q2.Segments()); n != 4 {
		t.Fatalf("reopen found %d segments", n)
	}
	if _, err := q2.RemoveFirst(); err != nil || q2.First().Start() != 64<<10 {
		t.Fatalf("RemoveFirst: %v, first now %d", err, q2.First().Start())
	}
	if err := q2.RemoveAfter(2 * 64 << 10); err != nil || len(q2.Segments()) != 1 {
		t.Fatalf("RemoveAfter: %v, %d left", err, len(q2.Segments()))
	}
}

func TestLoadRules(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, Name(0)), make([]byte, 64<<10), 0o644)
	os.WriteFile(filepath.Join(dir, Name(64<<10)), nil, 0o644) // empty last file: deleted
	os.WriteFile(filepath.Join(dir, "not-a-segment"), []byte("x"), 0o644)
	q := newQueue(t, dir, false)
	if n := len(q.Segments()); n != 1 {
		t.Fatalf("%d segments", n)
	}
	q.Close()
	if _, err := os.Stat(filepath.Join(dir, Name(64<<10))); !os.IsNotExist(err) {
		t.Fatal("empty last segment not deleted")
	}
	os.WriteFile(filepath.Join(dir, Name(64<<10)), make([]byte, 100), 0o644)
	if _, err := Open(Config{FS: vfs.Default, Dir: dir, Size: 64 << 10, Path: iopath.Pwrite, IO: iopath.DefaultConfig()}, nil); err == nil {
		t.Fatal("a segment of the wrong size was accepted")
	}
}

// A roll made while the cleaner is detaching the oldest segment must stay in
// the list, and the detached segment must not come back: the two changes are
// serialised. Before they were, the roll's new segment vanished from the
// list (readers got ErrNotFound for offsets in it, and the writer rolled to
// the same offset again over its own records). The hook holds the detach
// between its load and its store; the roll either finishes inside that
// window (the lost update) or waits for the detach.
func TestRollDuringDetach(t *testing.T) {
	q := newQueue(t, t.TempDir(), false)
	defer q.Close()
	size := q.SegmentSize()
	for i := int64(0); i < 3; i++ {
		if _, err := q.Roll(i * size); err != nil {
			t.Fatal(err)
		}
	}
	rolled := make(chan error, 1)
	detachHook = func() {
		go func() {
			_, err := q.Roll(3 * size)
			rolled <- err
		}()
		select {
		case err := <-rolled:
			rolled <- err // finished inside the window
		case <-time.After(200 * time.Millisecond): // waiting for the detach
		}
	}
	first := q.DetachFirst()
	detachHook = nil
	if err := <-rolled; err != nil {
		t.Fatal(err)
	}
	if first == nil || first.Start() != 0 {
		t.Fatalf("detached %v, want the segment at 0", first)
	}
	if err := q.Delete(first); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, s := range q.Segments() {
		got = append(got, s.Start())
	}
	if want := []int64{size, 2 * size, 3 * size}; !slices.Equal(got, want) {
		t.Fatalf("segments start at %v after a roll during a detach, want %v", got, want)
	}
	if s, err := q.Find(3*size + 1); err != nil || s.Start() != 3*size {
		t.Fatalf("Find in the rolled segment: %v, %v", s, err)
	}
}

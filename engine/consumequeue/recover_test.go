package consumequeue

import (
	"bytes"
	"os"
	"reflect"
	"testing"
)

func TestRecoverTruncatesTornTail(t *testing.T) {
	root := t.TempDir()
	q := openTestQueue(t, root, 10)
	putRange(t, q, 0, 13)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	path := segPath(q, 200)
	// Unit 13 torn: only its phyOffset reached the disk (size 0).
	var unit [UnitSize]byte
	unitFor(13).Encode(unit[:])
	writeFileAt(t, path, 3*UnitSize, unit[:8])
	// Garbage after it, and a stale valid-looking unit further on.
	writeFileAt(t, path, 4*UnitSize, bytes.Repeat([]byte{0xff}, 13))
	unitFor(99).Encode(unit[:])
	writeFileAt(t, path, 6*UnitSize, unit[:])

	q2 := openTestQueue(t, root, 10)
	if q2.MaxOffset() != 13 || q2.MaxPhyOffset() != 1300 {
		t.Fatalf("max/maxPhy = %d/%d, want 13/1300", q2.MaxOffset(), q2.MaxPhyOffset())
	}
	b := readFileBytes(t, path)
	if !bytes.Equal(b[3*UnitSize:], make([]byte, len(b)-3*UnitSize)) {
		t.Fatalf("tail not zeroed: %x", b[3*UnitSize:])
	}
	putRange(t, q2, 13, 15)
	if u, err := q2.Get(14); err != nil || u != unitFor(14) {
		t.Fatalf("Get(14) = %+v, %v", u, err)
	}
}

func TestRecoverStopsAtFirstInvalidFile(t *testing.T) {
	root := t.TempDir()
	q := openTestQueue(t, root, 10)
	putRange(t, q, 0, 25)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	// Unit 17 never reached the disk, but unit 18.. and file 400 did.
	writeFileAt(t, segPath(q, 200), 7*UnitSize, make([]byte, UnitSize))

	q2 := openTestQueue(t, root, 10)
	if q2.MaxOffset() != 17 || q2.MaxPhyOffset() != 1700 || q2.Files() != 2 {
		t.Fatalf("max/maxPhy/files = %d/%d/%d", q2.MaxOffset(), q2.MaxPhyOffset(), q2.Files())
	}
	if got := listFiles(t, q2.Dir()); !reflect.DeepEqual(got, []string{"00000000000000000000", "00000000000000000200"}) {
		t.Fatalf("files = %v", got)
	}
	if u, _ := q2.Get(16); u != unitFor(16) {
		t.Fatalf("Get(16) = %+v", u)
	}
}

func TestRecoverScansFromThirdFromLastFile(t *testing.T) {
	root := t.TempDir()
	q := openTestQueue(t, root, 10)
	putRange(t, q, 0, 45)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	// Damage in the first file is outside the scanned window (files 200.. are
	// scanned), so it does not truncate anything.
	writeFileAt(t, segPath(q, 0), 3*UnitSize, make([]byte, UnitSize))
	q2 := openTestQueue(t, root, 10)
	if q2.MaxOffset() != 45 || q2.Files() != 5 {
		t.Fatalf("max/files = %d/%d", q2.MaxOffset(), q2.Files())
	}
}

func TestRecoverEmptyLastFile(t *testing.T) {
	root := t.TempDir()
	q := openTestQueue(t, root, 10)
	putRange(t, q, 0, 10) // file 0 full
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	// A preallocated next file with nothing in it.
	if err := os.WriteFile(segPath(q, 200), make([]byte, 200), 0o644); err != nil {
		t.Fatal(err)
	}
	q2 := openTestQueue(t, root, 10)
	if q2.MaxOffset() != 10 || q2.Files() != 2 {
		t.Fatalf("max/files = %d/%d", q2.MaxOffset(), q2.Files())
	}
	putRange(t, q2, 10, 12)
	if u, _ := q2.Get(11); u != unitFor(11) {
		t.Fatalf("Get(11) = %+v", u)
	}
}

func TestTruncateFromPhy(t *testing.T) {
	root := t.TempDir()
	q := openTestQueue(t, root, 10)
	putRange(t, q, 0, 25) // unit i references [i*100, i*100+100)

	if err := q.TruncateFromPhy(5000); err != nil || q.MaxOffset() != 25 {
		t.Fatalf("no-op truncate: max %d, %v", q.MaxOffset(), err)
	}
	if err := q.TruncateFromPhy(1500); err != nil {
		t.Fatal(err)
	}
	if q.MaxOffset() != 15 || q.MaxPhyOffset() != 1500 || q.Files() != 2 {
		t.Fatalf("max/maxPhy/files = %d/%d/%d", q.MaxOffset(), q.MaxPhyOffset(), q.Files())
	}
	if got := listFiles(t, q.Dir()); len(got) != 2 {
		t.Fatalf("files on disk = %v", got)
	}
	b := readFileBytes(t, segPath(q, 200))
	if !bytes.Equal(b[5*UnitSize:], make([]byte, 5*UnitSize)) {
		t.Fatal("cut units not zeroed")
	}
	// A cut that lands on a file's first unit deletes the file.
	if err := q.TruncateFromPhy(1000); err != nil {
		t.Fatal(err)
	}
	if q.MaxOffset() != 10 || q.MaxPhyOffset() != 1000 || q.Files() != 1 {
		t.Fatalf("max/maxPhy/files = %d/%d/%d", q.MaxOffset(), q.MaxPhyOffset(), q.Files())
	}
	// Re-dispatch rebuilds from there.
	putRange(t, q, 10, 13)
	if u, err := q.Get(12); err != nil || u != unitFor(12) {
		t.Fatalf("Get(12) = %+v, %v", u, err)
	}
	// Mid-record cut: a unit whose record starts before phyEnd is kept.
	if err := q.TruncateFromPhy(1150); err != nil {
		t.Fatal(err)
	}
	if q.MaxOffset() != 12 || q.MaxPhyOffset() != 1200 {
		t.Fatalf("max/maxPhy = %d/%d", q.MaxOffset(), q.MaxPhyOffset())
	}
	// An empty commit log empties the queue.
	if err := q.TruncateFromPhy(0); err != nil {
		t.Fatal(err)
	}
	if q.MaxOffset() != 0 || q.MinOffset() != 0 || q.MaxPhyOffset() != -1 || q.Files() != 0 {
		t.Fatalf("after truncate(0) min/max/maxPhy/files = %d/%d/%d/%d", q.MinOffset(), q.MaxOffset(), q.MaxPhyOffset(), q.Files())
	}
	// The next put starts a fresh first file with pre-fill.
	if err := q.Put(7, unitFor(7)); err != nil {
		t.Fatal(err)
	}
	if q.MinOffset() != 7 || q.MaxOffset() != 8 {
		t.Fatalf("after restart min/max = %d/%d", q.MinOffset(), q.MaxOffset())
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	q2 := openTestQueue(t, root, 10)
	if q2.MinOffset() != 7 || q2.MaxOffset() != 8 || q2.MaxPhyOffset() != 800 {
		t.Fatalf("reopen min/max/maxPhy = %d/%d/%d", q2.MinOffset(), q2.MaxOffset(), q2.MaxPhyOffset())
	}
}

package consumequeue

import (
	"bytes"
	"path/filepath"
	"testing"
)

// PutRun leaves exactly the files, positions and answers that the same
// units put one by one leave: runs at the write position inside a file
// (one write), runs across a file boundary, repeats, a gap and a run into
// an empty queue.
func TestPutRunMatchesPut(t *testing.T) {
	runs := []struct{ first, n int64 }{
		{0, 5},   // empty queue: creates the first file
		{5, 7},   // fast path
		{12, 9},  // crosses the 16-unit file boundary
		{10, 4},  // repeats, partly overlapping the end
		{21, 1},  // a single unit
		{25, 6},  // a gap of 3
		{31, 33}, // spans three files
	}
	rootA, rootB := t.TempDir(), t.TempDir()
	a := openTestQueue(t, rootA, 16)
	b := openTestQueue(t, rootB, 16)
	for _, r := range runs {
		units := make([]Unit, r.n)
		for i := range units {
			units[i] = unitFor(r.first + int64(i))
		}
		if err := a.PutRun(r.first, units); err != nil {
			t.Fatalf("PutRun(%d, %d units): %v", r.first, r.n, err)
		}
		putRange(t, b, r.first, r.first+r.n)
		if a.MaxOffset() != b.MaxOffset() || a.MaxPhyOffset() != b.MaxPhyOffset() || a.MinOffset() != b.MinOffset() {
			t.Fatalf("after run %+v: max %d/%d, max phy %d/%d, min %d/%d", r, a.MaxOffset(), b.MaxOffset(), a.MaxPhyOffset(), b.MaxPhyOffset(), a.MinOffset(), b.MinOffset())
		}
	}
	for off := a.MinOffset(); off < a.MaxOffset(); off++ {
		ua, ea := a.Get(off)
		ub, eb := b.Get(off)
		if ua != ub || (ea == nil) != (eb == nil) {
			t.Fatalf("offset %d: %+v %v vs %+v %v", off, ua, ea, ub, eb)
		}
	}
	dirA := QueueDir(rootA, testTopic, 3)
	dirB := QueueDir(rootB, testTopic, 3)
	namesA, namesB := listFiles(t, dirA), listFiles(t, dirB)
	if len(namesA) != len(namesB) {
		t.Fatalf("files %v vs %v", namesA, namesB)
	}
	for i := range namesA {
		if namesA[i] != namesB[i] || !bytes.Equal(readFileBytes(t, filepath.Join(dirA, namesA[i])), readFileBytes(t, filepath.Join(dirB, namesB[i]))) {
			t.Fatalf("file %s differs from one-by-one puts", namesA[i])
		}
	}
}

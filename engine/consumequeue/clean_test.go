package consumequeue

import (
	"errors"
	"testing"
)

func TestDeleteBelowPhy(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 10)
	putRange(t, q, 0, 35) // files 0, 200, 400, 600; unit i at phy i*100

	n, err := q.DeleteBelowPhy(1000) // file 0's last unit (900) is below
	if err != nil || n != 1 {
		t.Fatalf("DeleteBelowPhy(1000) = %d, %v", n, err)
	}
	if q.MinOffset() != 10 || q.Files() != 3 || len(listFiles(t, q.Dir())) != 3 {
		t.Fatalf("min/files = %d/%d", q.MinOffset(), q.Files())
	}
	if _, err := q.Read(5, 5, nil); !errors.Is(err, ErrRemoved) {
		t.Fatalf("Read(5) err = %v", err)
	}

	// No file is wholly below; the min offset moves inside file 200.
	n, err = q.DeleteBelowPhy(1250)
	if err != nil || n != 0 || q.MinOffset() != 13 {
		t.Fatalf("DeleteBelowPhy(1250) = %d, %v; min %d", n, err, q.MinOffset())
	}
	if _, err := q.Get(12); !errors.Is(err, ErrRemoved) {
		t.Fatalf("Get(12) err = %v", err)
	}
	if u, err := q.Get(13); err != nil || u != unitFor(13) {
		t.Fatalf("Get(13) = %+v, %v", u, err)
	}
	// The min offset never goes back.
	if err := q.SetMinPhy(0); err != nil || q.MinOffset() != 13 {
		t.Fatalf("SetMinPhy(0): min %d, %v", q.MinOffset(), err)
	}

	// Everything below: all files but the last go; the queue is logically empty.
	n, err = q.DeleteBelowPhy(100000)
	if err != nil || n != 2 || q.Files() != 1 {
		t.Fatalf("DeleteBelowPhy(100000) = %d, %v; files %d", n, err, q.Files())
	}
	if q.MinOffset() != 35 || q.MaxOffset() != 35 {
		t.Fatalf("min/max = %d/%d", q.MinOffset(), q.MaxOffset())
	}
	putRange(t, q, 35, 37)
	if u, err := q.Get(36); err != nil || u != unitFor(36) {
		t.Fatalf("Get(36) = %+v, %v", u, err)
	}
}

func TestSetMinPhySkipsWhollyOldFirstFile(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 10)
	putRange(t, q, 0, 25)
	// SetMinPhy alone removes nothing but finds the first live unit in a
	// later file.
	if err := q.SetMinPhy(1720); err != nil {
		t.Fatal(err)
	}
	if q.MinOffset() != 18 || q.Files() != 3 {
		t.Fatalf("min/files = %d/%d", q.MinOffset(), q.Files())
	}
}

func TestSetMinPhySkipsPreFill(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 10)
	putRange(t, q, 4, 8)
	if err := q.SetMinPhy(0); err != nil || q.MinOffset() != 4 {
		t.Fatalf("min %d, %v", q.MinOffset(), err)
	}
}

func TestDeleteBelowPhyKeepsFileWithBlankTail(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 10)
	putRange(t, q, 0, 5)
	putRange(t, q, 12, 25) // units 5..11 blank-filled
	n, err := q.DeleteBelowPhy(300)
	if err != nil || n != 0 || q.MinOffset() != 3 {
		t.Fatalf("DeleteBelowPhy(300) = %d, %v; min %d", n, err, q.MinOffset())
	}
	n, err = q.DeleteBelowPhy(450)
	if err != nil || n != 1 || q.MinOffset() != 12 {
		t.Fatalf("DeleteBelowPhy(450) = %d, %v; min %d", n, err, q.MinOffset())
	}
}

package consumequeue

import (
	"errors"
	"testing"
)

// storeTimes gives unit i (phy i*100) the store time 1000 + (i/2)*10, so
// units come in pairs with equal timestamps.
func storeTimes(calls *int) StoreTimeFunc {
	return func(phy int64, size int32) (int64, error) {
		if calls != nil {
			*calls++
		}
		if size != 100 || phy%100 != 0 {
			return 0, errors.New("no such record")
		}
		return 1000 + (phy/100/2)*10, nil
	}
}

func TestSearchByTime(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 10)
	putRange(t, q, 0, 25) // times 1000,1000,1010,1010,...,1120 (unit 24)
	for _, tc := range []struct {
		ts           int64
		lower, upper int64
	}{
		{1020, 4, 5},    // exact, in the first file
		{1050, 10, 11},  // exact, first units of the second file
		{1055, 12, 11},  // between 1050 and 1060
		{1045, 10, 9},   // between files
		{900, 0, 0},     // before everything
		{1000, 0, 1},    // the very first timestamp
		{1120, 24, 24},  // the last unit
		{99999, 25, 24}, // after everything
	} {
		lo, err := q.SearchByTime(tc.ts, Lower, storeTimes(nil))
		if err != nil || lo != tc.lower {
			t.Errorf("Lower(%d) = %d, %v; want %d", tc.ts, lo, err, tc.lower)
		}
		up, err := q.SearchByTime(tc.ts, Upper, storeTimes(nil))
		if err != nil || up != tc.upper {
			t.Errorf("Upper(%d) = %d, %v; want %d", tc.ts, up, err, tc.upper)
		}
	}
}

func TestSearchByTimeCachesFileTimes(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 10)
	putRange(t, q, 0, 25)
	var first, second int
	if _, err := q.SearchByTime(1055, Lower, storeTimes(&first)); err != nil {
		t.Fatal(err)
	}
	if _, err := q.SearchByTime(1055, Lower, storeTimes(&second)); err != nil {
		t.Fatal(err)
	}
	if second >= first {
		t.Fatalf("second search made %d store-time calls, first %d: file times not cached", second, first)
	}
}

func TestSearchByTimeRespectsMinOffset(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 10)
	putRange(t, q, 0, 25)
	if _, err := q.DeleteBelowPhy(1250); err != nil { // min offset 13, file 0 removed
		t.Fatal(err)
	}
	if lo, err := q.SearchByTime(900, Lower, storeTimes(nil)); err != nil || lo != 13 {
		t.Fatalf("Lower(900) = %d, %v; want 13", lo, err)
	}
	if up, err := q.SearchByTime(1020, Upper, storeTimes(nil)); err != nil || up != 0 {
		t.Fatalf("Upper(1020) = %d, %v; want 0", up, err)
	}
}

func TestSearchByTimeEmptyAndErrors(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 10)
	if off, err := q.SearchByTime(1, Lower, storeTimes(nil)); err != nil || off != 0 {
		t.Fatalf("empty queue = %d, %v", off, err)
	}
	putRange(t, q, 0, 5)
	failing := func(int64, int32) (int64, error) { return 0, errors.New("boom") }
	if _, err := q.SearchByTime(1, Lower, failing); err == nil {
		t.Fatal("storeTime error not returned")
	}
}

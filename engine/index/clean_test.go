package index

import (
	"reflect"
	"testing"
)

// fillThreeFiles puts 10 one-key messages, 4 entries per file.
func fillThreeFiles(t *testing.T) *Service {
	s := openService(t, t.TempDir(), Config{MaxHashSlots: 4, MaxIndexNum: 5, MaxQueryNum: 64})
	for i := int64(0); i < 10; i++ {
		mustPut(t, s, "T", []string{"k"}, i*100, t0+i*1000)
	}
	return s
}

func TestDeleteBelowPhy(t *testing.T) {
	s := fillThreeFiles(t) // file ends: phy 300, 700, 900
	if n, err := s.DeleteBelowPhy(300); err != nil || n != 0 {
		t.Fatalf("DeleteBelowPhy(300) = %d, %v", n, err)
	}
	if n, err := s.DeleteBelowPhy(301); err != nil || n != 1 {
		t.Fatalf("DeleteBelowPhy(301) = %d, %v", n, err)
	}
	if got := mustQuery(t, s, "T", "k", 64, 0, t0+100000); !reflect.DeepEqual(got, []int64{900, 800, 700, 600, 500, 400}) {
		t.Fatalf("query = %v", got)
	}
	// The last file is never removed.
	if n, err := s.DeleteBelowPhy(1 << 40); err != nil || n != 1 || len(s.Files()) != 1 {
		t.Fatalf("DeleteBelowPhy(max) = %d, %v, files %d", n, err, len(s.Files()))
	}
	if got := mustQuery(t, s, "T", "k", 64, 0, t0+100000); !reflect.DeepEqual(got, []int64{900, 800}) {
		t.Fatalf("query = %v", got)
	}
}

func TestDeleteNewerThan(t *testing.T) {
	s := fillThreeFiles(t) // file end times: t0+3s, t0+7s, t0+9s
	if n, err := s.DeleteNewerThan(t0 + 7000); err != nil || n != 1 {
		t.Fatalf("DeleteNewerThan = %d, %v", n, err)
	}
	if files := s.Files(); len(files) != 2 || files[1].EndPhyOffset != 700 {
		t.Fatalf("files = %+v", files)
	}
	// Re-dispatch after recovery re-indexes the lost records.
	mustPut(t, s, "T", []string{"k"}, 800, t0+8000)
	if got := mustQuery(t, s, "T", "k", 2, 0, t0+100000); !reflect.DeepEqual(got, []int64{800, 700}) {
		t.Fatalf("query = %v", got)
	}
	if n, err := s.DeleteNewerThan(0); err != nil || n != 3 || len(s.Files()) != 0 {
		t.Fatalf("DeleteNewerThan(0) = %d, %v", n, err)
	}
	mustPut(t, s, "T", []string{"k"}, 0, t0)
	if got := mustQuery(t, s, "T", "k", 64, 0, t0+100000); !reflect.DeepEqual(got, []int64{0}) {
		t.Fatalf("query after emptying = %v", got)
	}
}

func TestTruncateFromPhy(t *testing.T) {
	s := openService(t, t.TempDir(), Config{MaxHashSlots: 64, MaxIndexNum: 64, MaxQueryNum: 64})
	for i := int64(0); i < 10; i++ {
		mustPut(t, s, "T", []string{"common", "only" + string(rune('0'+i))}, i*100, t0+i*1000)
	}
	slotsBefore := s.Files()[0].HashSlotCount
	if err := s.TruncateFromPhy(650); err != nil { // cut messages 7, 8, 9
		t.Fatal(err)
	}
	f := s.Files()[0]
	if f.IndexCount != 15 || f.EndPhyOffset != 600 || f.EndTimestamp != t0+6000 {
		t.Fatalf("header after truncate = %+v", f)
	}
	if f.HashSlotCount > slotsBefore-1 { // the "only7..9" buckets emptied (unless they shared a slot)
		t.Fatalf("slot count %d, before %d", f.HashSlotCount, slotsBefore)
	}
	if got := mustQuery(t, s, "T", "common", 64, 0, t0+100000); !reflect.DeepEqual(got, []int64{600, 500, 400, 300, 200, 100, 0}) {
		t.Fatalf("query common = %v", got)
	}
	if got := mustQuery(t, s, "T", "only8", 64, 0, t0+100000); len(got) != 0 {
		t.Fatalf("query only8 = %v", got)
	}
	// The cut records are re-indexed, not skipped.
	mustPut(t, s, "T", []string{"common", "only7"}, 700, t0+7000)
	if got := mustQuery(t, s, "T", "only7", 64, 0, t0+100000); !reflect.DeepEqual(got, []int64{700}) {
		t.Fatalf("query only7 = %v", got)
	}
	if got := mustQuery(t, s, "T", "common", 2, 0, t0+100000); !reflect.DeepEqual(got, []int64{700, 600}) {
		t.Fatalf("query common = %v", got)
	}
}

func TestTruncateFromPhyRemovesNewerFiles(t *testing.T) {
	s := fillThreeFiles(t) // files hold messages 0-3, 4-7, 8-9
	if err := s.TruncateFromPhy(400); err != nil {
		t.Fatal(err)
	}
	files := s.Files()
	if len(files) != 1 || files[0].EndPhyOffset != 300 || files[0].IndexCount != 5 {
		t.Fatalf("files = %+v", files)
	}
	if err := s.TruncateFromPhy(250); err != nil {
		t.Fatal(err)
	}
	if got := mustQuery(t, s, "T", "k", 64, 0, t0+100000); !reflect.DeepEqual(got, []int64{200, 100, 0}) {
		t.Fatalf("query = %v", got)
	}
	// Truncating before everything removes the last file too.
	if err := s.TruncateFromPhy(0); err != nil || len(s.Files()) != 0 {
		t.Fatalf("truncate(0): files %d, %v", len(s.Files()), err)
	}
}

// TestRedispatchBoundaryRecord: a record whose keys straddle a roll, with
// the newer file lost (recovery drops an active file that is not full):
// dispatching it again adds the keys the index lacks and repeats none.
func TestRedispatchBoundaryRecord(t *testing.T) {
	s := openService(t, t.TempDir(), Config{MaxHashSlots: 4, MaxIndexNum: 5, MaxQueryNum: 64})
	mustPut(t, s, "T", []string{"a"}, 0, t0)
	mustPut(t, s, "T", []string{"b"}, 100, t0+1000)
	mustPut(t, s, "T", []string{"c"}, 200, t0+2000)
	// Three keys of the record at 300: u fills the first file, k and all
	// go to the second.
	mustPut(t, s, "T", []string{"u", "k", "all"}, 300, t0+3000)
	if files := s.Files(); len(files) != 2 || !files[0].Full || files[0].EndPhyOffset != 300 {
		t.Fatalf("files = %+v", files)
	}
	// The second file is lost: recovery removes the active file.
	if n, err := s.DeleteUnsafe(t0 + 3000); err != nil || n != 1 {
		t.Fatalf("DeleteUnsafe = %d, %v", n, err)
	}
	if got := mustQuery(t, s, "T", "k", 64, 0, t0+100000); len(got) != 0 {
		t.Fatalf("k before re-dispatch = %v", got)
	}
	mustPut(t, s, "T", []string{"u", "k", "all"}, 300, t0+3000)
	for _, key := range []string{"u", "k", "all"} {
		if got := mustQuery(t, s, "T", key, 64, 0, t0+100000); !reflect.DeepEqual(got, []int64{300}) {
			t.Errorf("%s after re-dispatch = %v, want [300]", key, got)
		}
	}
	// A record below the end is still skipped.
	mustPut(t, s, "T", []string{"x"}, 200, t0+2000)
	if got := mustQuery(t, s, "T", "x", 64, 0, t0+100000); len(got) != 0 {
		t.Errorf("x = %v, want nothing (below the index's end)", got)
	}
}

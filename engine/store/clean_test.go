package store

import (
	"context"
	"errors"
	"math"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
)

// cleanStore is a store with ~6 commit-log segments, 5 consume-queue files
// and several index files for topic T queue 0, and a settable disk usage.
func cleanStore(t *testing.T) (*Store, *atomic.Uint64) {
	t.Helper()
	cfg := testConfig(t, t.TempDir(), iopath.Pwrite, flush.Async)
	usage := new(atomic.Uint64)
	usage.Store(math.Float64bits(0.10))
	cfg.DiskUsage = func(string) (float64, error) { return math.Float64frombits(usage.Load()), nil }
	cfg.Index.MaxIndexNum = 64
	s := openStore(t, cfg)
	for i := 0; i < 300; i++ {
		mustPut(t, s, fixedMsg("T", 0, 1200, ""))
	}
	waitDispatched(t, s)
	if n := len(s.CommitLog().Segments()); n < 6 {
		t.Fatalf("%d segments", n)
	}
	return s, usage
}

func setUsage(u *atomic.Uint64, v float64) { u.Store(math.Float64bits(v)) }

// ageSegments sets the mtime of the first n segments to 100 hours ago.
func ageSegments(t *testing.T, s *Store, n int) {
	t.Helper()
	old := time.Now().Add(-100 * time.Hour)
	for _, seg := range s.CommitLog().Segments()[:n] {
		if err := os.Chtimes(seg.Path(), old, old); err != nil {
			t.Fatal(err)
		}
	}
}

func at(hour int) time.Time {
	n := time.Now()
	return time.Date(n.Year(), n.Month(), n.Day(), hour, 30, 0, 0, time.Local)
}

// Segments older than 72 h go at the DeleteWhen hour only (with low disk
// use); consume-queue and index files below the new min offset follow, and
// the queue's min offset moves (OFFSET_TOO_SMALL below it).
func TestCleanByTime(t *testing.T) {
	s, _ := cleanStore(t)
	defer mustClose(t, s)
	ageSegments(t, s, 3)
	q, _ := s.cq.Queue("T", 0, false)
	cqFiles, idxFiles := q.Files(), len(s.idx.Files())

	rep, err := s.CleanOnce(at(10))
	if err != nil || rep.SegmentsDeleted != 0 || rep.TimeToDelete || rep.SpaceToDelete {
		t.Fatalf("at 10:30 with 10%% use: %+v %v", rep, err)
	}
	rep, err = s.CleanOnce(at(4))
	if err != nil || !rep.TimeToDelete || rep.SegmentsDeleted != 3 {
		t.Fatalf("at 04:30: %+v %v", rep, err)
	}
	minOff := s.CommitLog().MinOffset()
	if rep.MinOffset != minOff || minOff != 3*s.CommitLog().SegmentSize() {
		t.Fatalf("min offset %d (report %d)", minOff, rep.MinOffset)
	}
	if rep.ConsumeQueueFilesDeleted == 0 || q.Files() >= cqFiles {
		t.Fatalf("consume-queue files %d → %d (report %d)", cqFiles, q.Files(), rep.ConsumeQueueFilesDeleted)
	}
	if rep.IndexFilesDeleted == 0 || len(s.idx.Files()) >= idxFiles {
		t.Fatalf("index files %d → %d (report %d)", idxFiles, len(s.idx.Files()), rep.IndexFilesDeleted)
	}
	for _, f := range s.idx.Files()[:len(s.idx.Files())-1] {
		if f.EndPhyOffset < minOff {
			t.Fatalf("index file %s ends at %d, below the min offset %d", f.Name, f.EndPhyOffset, minOff)
		}
	}
	qmin := s.GetMinOffsetInQueue("T", 0)
	if qmin <= 0 {
		t.Fatalf("queue min offset %d", qmin)
	}
	expectStatus(t, get(t, s, "T", 0, 0, 32, 1<<20, nil), OffsetTooSmall, qmin)
	res := get(t, s, "T", 0, qmin, 32, 1<<20, nil)
	if res.Status != Found || res.Messages[0].PhysOffset < minOff {
		t.Fatalf("at the new min: %v", res.Status)
	}
	// The young segments stay, and so does the last one.
	rep, _ = s.CleanOnce(at(4))
	if rep.SegmentsDeleted != 0 {
		t.Fatalf("young segments deleted: %+v", rep)
	}
}

// Above 75 % use old segments go at any hour; above 85 % any segment but the
// active one goes, DeleteFilesBatchMax per pass.
func TestCleanByDiskRatio(t *testing.T) {
	s, usage := cleanStore(t)
	defer mustClose(t, s)
	s.cfg.DeleteFilesBatchMax = 2
	ageSegments(t, s, 1)
	setUsage(usage, 0.80)
	rep, err := s.CleanOnce(at(10))
	if err != nil || !rep.SpaceToDelete || rep.CleanImmediately || rep.SegmentsDeleted != 1 {
		t.Fatalf("80%%: %+v %v", rep, err)
	}
	setUsage(usage, 0.86)
	segs := len(s.CommitLog().Segments())
	rep, err = s.CleanOnce(at(10))
	if err != nil || !rep.CleanImmediately || rep.SegmentsDeleted != 2 || rep.DiskFull {
		t.Fatalf("86%%: %+v %v", rep, err)
	}
	for i := 0; i < 10; i++ {
		if _, err := s.CleanOnce(at(10)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.CommitLog().Segments()); n != 1 {
		t.Fatalf("%d segments left of %d, want only the active one", n, segs)
	}
	// Only the active segment's messages are left in the queue.
	qmin := s.GetMinOffsetInQueue("T", 0)
	expectStatus(t, get(t, s, "T", 0, 0, 32, 1<<20, nil), OffsetTooSmall, qmin)
	if res := get(t, s, "T", 0, qmin, 32, 1<<20, nil); res.Status != Found || res.Messages[0].PhysOffset < s.CommitLog().MinOffset() {
		t.Fatalf("at the min offset %d: %v", qmin, res.Status)
	}
}

// Above 90 % puts are refused with SERVICE_NOT_AVAILABLE / ErrDiskFull
// until use is back at or below 85 %.
func TestDiskFullRefusesPuts(t *testing.T) {
	s, usage := cleanStore(t)
	defer mustClose(t, s)
	setUsage(usage, 0.91)
	rep, err := s.CleanOnce(at(10))
	if err != nil || !rep.DiskFull || !s.IsDiskFull() {
		t.Fatalf("91%%: %+v %v", rep, err)
	}
	_, err = s.Put(context.Background(), fixedMsg("T", 0, 10, ""))
	if StatusOf(err) != ServiceNotAvailable || !errors.Is(err, ErrDiskFull) {
		t.Fatalf("put on a full disk: %v", err)
	}
	if _, err := s.PutBatch(context.Background(), nil); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("batch on a full disk: %v", err)
	}
	if !s.Stats().DiskFull {
		t.Fatalf("stats do not show the full disk")
	}
	setUsage(usage, 0.88)
	if rep, _ := s.CleanOnce(at(10)); !rep.DiskFull {
		t.Fatalf("88%%: no longer full")
	}
	setUsage(usage, 0.50)
	if rep, _ := s.CleanOnce(at(10)); rep.DiskFull || s.IsDiskFull() {
		t.Fatalf("50%%: still full")
	}
	mustPut(t, s, fixedMsg("T", 0, 10, ""))
}

func TestDefaultDiskUsage(t *testing.T) {
	u, err := diskUsage(t.TempDir())
	if err != nil || u <= 0 || u > 1 {
		t.Fatalf("disk usage %v %v", u, err)
	}
	if m := totalMemory(); m <= 0 {
		t.Fatalf("total memory %d", m)
	}
}

// RetainBytes deletes, at any hour and with low disk use, exactly the
// segments wholly more than RetainBytes behind the max offset; the active
// segment stays, and consume-queue files follow the new min offset.
func TestCleanRetainBytes(t *testing.T) {
	s, _ := cleanStore(t)
	defer mustClose(t, s)
	segSize := s.CommitLog().SegmentSize()
	s.cfg.RetainBytes = 2 * segSize
	segs := s.CommitLog().Segments()
	maxOff := s.CommitLog().MaxOffset()
	want := 0
	for _, seg := range segs[:len(segs)-1] {
		if maxOff-seg.End() >= s.cfg.RetainBytes {
			want++
		}
	}
	if want < 2 {
		t.Fatalf("fixture: only %d of %d segments beyond retention", want, len(segs))
	}
	q, _ := s.cq.Queue("T", 0, false)
	cqFiles := q.Files()

	rep, err := s.CleanOnce(at(10))
	if err != nil || rep.TimeToDelete || rep.SpaceToDelete {
		t.Fatalf("at 10:30 with 10%% use: %+v %v", rep, err)
	}
	if rep.RetainedDeleted != want || rep.SegmentsDeleted != want {
		t.Fatalf("deleted %d (retained %d), want %d", rep.SegmentsDeleted, rep.RetainedDeleted, want)
	}
	left := s.CommitLog().Segments()
	if len(left) != len(segs)-want || left[0].Start() != segs[want].Start() {
		t.Fatalf("%d segments left starting at %d", len(left), left[0].Start())
	}
	if kept := s.CommitLog().MaxOffset() - s.CommitLog().MinOffset(); kept < s.cfg.RetainBytes || kept >= s.cfg.RetainBytes+segSize {
		t.Fatalf("kept %d bytes with RetainBytes %d, segments of %d", kept, s.cfg.RetainBytes, segSize)
	}
	if q.Files() >= cqFiles {
		t.Fatalf("consume-queue files %d → %d", cqFiles, q.Files())
	}
	if rep, err := s.CleanOnce(at(10)); err != nil || rep.SegmentsDeleted != 0 {
		t.Fatalf("second pass: %+v %v", rep, err)
	}
}

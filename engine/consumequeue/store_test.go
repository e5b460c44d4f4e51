package consumequeue

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

func TestStore(t *testing.T) {
	root := t.TempDir()
	cfg := smallConfig(10)
	s, err := OpenStore(vfs.Default, root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.MaxPhyOffset(); got != -1 {
		t.Fatalf("empty store MaxPhyOffset = %d", got)
	}
	if _, err := s.Queue("A", 0, false); !errors.Is(err, ErrNoQueue) {
		t.Fatalf("missing queue err = %v", err)
	}
	if _, err := s.Queue("a/b", 0, true); !errors.Is(err, ErrInvalidTopic) {
		t.Fatalf("bad topic err = %v", err)
	}
	// Three queues; records interleaved in the commit log as a dispatcher would.
	qa0, _ := s.Queue("A", 0, true)
	qa1, _ := s.Queue("A", 1, true)
	qb0, _ := s.Queue("B", 0, true)
	again, _ := s.Queue("A", 0, true)
	if again != qa0 {
		t.Fatal("Queue(create) returned a second instance")
	}
	qs := []*Queue{qa0, qa1, qb0}
	for i := int64(0); i < 30; i++ {
		q := qs[i%3]
		if err := q.Put(i/3, Unit{PhyOffset: i * 100, Size: 100}); err != nil {
			t.Fatal(err)
		}
	}
	if s.MaxPhyOffset() != 3000 {
		t.Fatalf("MaxPhyOffset = %d", s.MaxPhyOffset())
	}
	if err := s.FlushAll(0); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Queue("C", 0, true); !errors.Is(err, ErrClosed) {
		t.Fatalf("Queue after Close err = %v", err)
	}

	// Stray entries in the tree are ignored.
	if err := os.MkdirAll(filepath.Join(root, "consumequeue", "A", "notanid"), 0o755); err != nil {
		t.Fatal(err)
	}
	s2, err := OpenStore(vfs.Default, root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.Recover(); err != nil {
		t.Fatal(err)
	}
	got := s2.Queues()
	if len(got) != 3 || got[0].Topic() != "A" || got[0].QueueID() != 0 || got[1].QueueID() != 1 || got[2].Topic() != "B" {
		t.Fatalf("queues = %v", got)
	}
	if s2.MaxPhyOffset() != 3000 {
		t.Fatalf("reopened MaxPhyOffset = %d", s2.MaxPhyOffset())
	}
	// Commit log recovered only up to 2050: units of records 21.. are cut.
	if err := s2.TruncateFromPhy(2050); err != nil {
		t.Fatal(err)
	}
	a0, _ := s2.Queue("A", 0, false) // records 0,3,...,27 → 21,24,27 cut
	b0, _ := s2.Queue("B", 0, false) // records 2,5,...,29 → 23,26,29 cut
	if a0.MaxOffset() != 7 || b0.MaxOffset() != 7 || s2.MaxPhyOffset() != 2100 {
		t.Fatalf("after truncate A0 max %d, B0 max %d, store maxPhy %d", a0.MaxOffset(), b0.MaxOffset(), s2.MaxPhyOffset())
	}
	n, err := s2.DeleteBelowPhy(1000)
	if err != nil || n != 0 {
		t.Fatalf("DeleteBelowPhy = %d, %v", n, err)
	}
	if a0.MinOffset() != 4 { // record 12 is A0's unit 4
		t.Fatalf("A0 min = %d", a0.MinOffset())
	}
	if err := s2.SetMinPhy(1500); err != nil || a0.MinOffset() != 5 {
		t.Fatalf("SetMinPhy: A0 min %d, %v", a0.MinOffset(), err)
	}
}

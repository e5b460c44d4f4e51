package experiments

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/workloads"
)

// engine.retain bounds a cell's commit log while it runs: the store's
// cleaner deletes the segments wholly behind the newest Retain bytes, so
// the segment directory stops growing however long the cell writes.
func TestRetainBoundsTheLog(t *testing.T) {
	const seg, retain = 256 << 10, 1 << 20
	en := Engine{Path: "pwrite", Flush: "async", SegmentSize: seg, Retain: retain}
	sys, err := openStoreSystem(en, t.TempDir(), sysHooks{})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if sys.cfg.RetainBytes != retain || sys.cfg.CleanInterval != time.Second {
		t.Fatalf("store config: retain %d, clean every %v", sys.cfg.RetainBytes, sys.cfg.CleanInterval)
	}
	d := sys.Driver()
	body := make([]byte, 4000)
	for i := 0; i < 2000; i++ { // ~8 MB: 31 segments without retention
		if err := d.Send(context.Background(), &workloads.Message{Topic: "T", Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	// Whole segments more than 1 MiB behind go; the active one and up to
	// five behind it (1 MiB + one partly covered) stay.
	deadline := time.Now().Add(10 * time.Second)
	for {
		ents, err := os.ReadDir(sys.SegmentDir())
		if err != nil {
			t.Fatal(err)
		}
		if n := len(ents); n <= retain/seg+2 {
			if min := sys.st.CommitLog().MinOffset(); min == 0 {
				t.Fatalf("%d segment files but min offset 0", n)
			}
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("%d segment files after 10 s with retain %d and segments of %d", n, retain, seg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

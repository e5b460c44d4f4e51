package admin

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/store"
)

// The runtime info's disk ratios are the store's own DiskUsage (what its
// cleaner acts on), per path; GET_BROKER_CONFIG's store keys are the
// store's config in RocketMQ's units.
func TestStoreDiskRatiosAndConfigKeys(t *testing.T) {
	cfg := store.DefaultConfig(t.TempDir())
	cfg.CommitLog.SegmentSize = 1 << 20
	cfg.CleanInterval = 0
	cfg.DeleteWhen = "01;02"
	cfg.FileReservedTime = 6 * time.Hour
	asked := map[string]bool{}
	cfg.DiskUsage = func(p string) (float64, error) {
		asked[p] = true
		return 0.42, nil
	}
	s, err := store.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := map[string]string{"commitLogDiskRatio_" + cfg.Root: "0.1"}
	addStoreDiskRatios(m, s)
	clDir := filepath.Join(cfg.Root, "commitlog")
	if m["commitLogDiskRatio"] != "0.42" || m["commitLogDiskRatio_"+clDir] != "0.42" || m["consumeQueueDiskRatio"] != "0.42" {
		t.Fatalf("ratios %v", m)
	}
	if _, ok := m["commitLogDiskRatio_"+cfg.Root]; ok || !asked[clDir] {
		t.Fatalf("per-path key: %v (asked %v)", m, asked)
	}
	p := storeConfigProperties(s.Config())
	for k, want := range map[string]string{"mappedFileSizeCommitLog": "1048576", "deleteWhen": "01;02", "fileReservedTime": "6",
		"diskMaxUsedSpaceRatio": "75", "diskSpaceCleanForciblyRatio": "85", "diskSpaceWarningLevelRatio": "90", "flushDiskType": "ASYNC_FLUSH",
		"storePathCommitLog": clDir} {
		if p[k] != want {
			t.Errorf("%s = %q, want %q", k, p[k], want)
		}
	}
}

package admin

import (
	"path/filepath"
	"strconv"
	"time"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/store"
)

// addStoreDiskRatios puts GET_BROKER_RUNTIME_INFO's disk ratios as the
// store's cleaner sees them (its Config.DiskUsage: whole percent rounded
// up, UtilAll.getDiskPartitionSpaceUsedPercent): commitLogDiskRatio and
// commitLogDiskRatio_<commit-log dir> for the commit log's partition,
// consumeQueueDiskRatio for the consume queues' (the store root's before
// the first queue exists). A path whose usage cannot
// be read reports -1.0, as Java does for a missing path.
func addStoreDiskRatios(m map[string]string, s *store.Store) {
	cfg := s.Config()
	if cfg.DiskUsage == nil {
		return
	}
	ratio := func(path string) string {
		r, err := cfg.DiskUsage(path)
		if err != nil {
			r = -1
		}
		return javaDouble(r)
	}
	clDir := commitlog.SegmentDir(cfg.Root)
	delete(m, "commitLogDiskRatio_"+cfg.Root) // the per-path key names the commit-log directory
	m["commitLogDiskRatio"] = ratio(clDir)
	m["commitLogDiskRatio_"+clDir] = m["commitLogDiskRatio"]
	cqDir := filepath.Join(cfg.Root, "consumequeue")
	if _, err := cfg.FS.Stat(cqDir); err != nil {
		cqDir = cfg.Root // no queue yet: the partition it will be on
	}
	m["consumeQueueDiskRatio"] = ratio(cqDir)
}

// storeConfigProperties are GET_BROKER_CONFIG's MessageStoreConfig keys
// an operator sets in broker.conf, in RocketMQ's names and units.
func storeConfigProperties(cfg store.Config) map[string]string {
	pct := func(r float64) string { return strconv.Itoa(int(r*100 + 0.5)) }
	flushType := "ASYNC_FLUSH"
	if cfg.CommitLog.Flush.Kind == "sync" {
		flushType = "SYNC_FLUSH"
	}
	return map[string]string{
		"storePathCommitLog":          commitlog.SegmentDir(cfg.Root),
		"mappedFileSizeCommitLog":     strconv.FormatInt(cfg.CommitLog.SegmentSize, 10),
		"flushDiskType":               flushType,
		"flushPolicy":                 string(cfg.CommitLog.Flush.Kind),
		"writePath":                   string(cfg.CommitLog.Path),
		"flushIntervalCommitLog":      strconv.FormatInt(cfg.CommitLog.Flush.Interval.Milliseconds(), 10),
		"flushCommitLogLeastPages":    strconv.Itoa(cfg.CommitLog.Flush.LeastPages),
		"deleteWhen":                  cfg.DeleteWhen,
		"fileReservedTime":            strconv.FormatInt(int64(cfg.FileReservedTime/time.Hour), 10),
		"diskMaxUsedSpaceRatio":       pct(cfg.DiskMaxUsedSpaceRatio),
		"diskSpaceCleanForciblyRatio": pct(cfg.DiskSpaceCleanForciblyRatio),
		"diskSpaceWarningLevelRatio":  pct(cfg.DiskSpaceWarningLevelRatio),
		"cleanResourceInterval":       strconv.FormatInt(cfg.CleanInterval.Milliseconds(), 10),
	}
}

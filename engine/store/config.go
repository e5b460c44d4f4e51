package store

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/vfs"
)

// Config configures a Store (RocketMQ MessageStoreConfig plus the broker's
// config-file and offset-persistence knobs). Start from DefaultConfig.
type Config struct {
	// Root is storePathRootDir: the commit log, consume queues, index,
	// checkpoint, abort/lock files and config/ live under it.
	Root string
	// CommitLog configures the commit log: write path (Path, IO), flush
	// policy (Flush), segment size, body limit, store host, CRC check on
	// recovery. Its Dir and FS are set from Root and FS.
	CommitLog commitlog.Config
	// ConsumeQueue sizes consume-queue files.
	ConsumeQueue consumequeue.Config
	// Index sizes index files (its OnFileFull is the store's own).
	Index index.Config
	// FS is the file system every file operation goes through.
	FS vfs.FS

	// MessageIndexEnable builds the key index while dispatching
	// (messageIndexEnable, true).
	MessageIndexEnable bool
	// MessageIndexSafe makes abnormal recovery start no later than the
	// checkpoint's indexMsgTimestamp, so index entries lost with deleted
	// index files are rebuilt (messageIndexSafe, false).
	MessageIndexSafe bool

	// RecoveryTimeMargin is subtracted from the checkpoint's
	// min(physicMsgTimestamp, logicsMsgTimestamp) when abnormal recovery picks
	// the segment to scan from (RocketMQ: 3 s).
	RecoveryTimeMargin time.Duration

	// ReputInterval is how often the dispatcher polls the commit log when
	// no put woke it (ReputMessageService sleeps 1 ms).
	ReputInterval time.Duration

	// Pull caps (getMessage). A message is "in memory" when
	// maxPhyOffset − its offset <= TotalMemoryBytes × AccessMessageInMemoryMaxRatio%.
	MaxTransferBytesOnMessageInMemory int // 256 KiB
	MaxTransferCountOnMessageInMemory int // 32
	MaxTransferBytesOnMessageInDisk   int // 64 KiB
	MaxTransferCountOnMessageInDisk   int // 8
	AccessMessageInMemoryMaxRatio     int // 40 (percent)
	// TotalMemoryBytes is the machine's physical memory for the in-memory
	// estimate; 0 reads MemTotal from /proc/meminfo at Open.
	TotalMemoryBytes int64
	// MaxFilterMessageSize bounds the consume-queue bytes one pull scans
	// (maxFilterMessageSize, 16000).
	MaxFilterMessageSize int
	// VerifyCRCOnGet re-checks each record's body CRC (and that it is the
	// record the consume queue names) before serving it; a failing record is
	// reported as corruption and never served. RocketMQ leaves this to the
	// client; brokerlab checks by default (true).
	VerifyCRCOnGet bool

	// ReadCacheBytes sizes the ristretto block cache created for the direct
	// write path's O_DIRECT reads when CommitLog.IO.Cache is nil (256 MiB;
	// 0 disables it). ReadCacheBlockSize is its block size (64 KiB; a
	// multiple of the O_DIRECT alignment).
	ReadCacheBytes     int64
	ReadCacheBlockSize int
	// ReadAdvice, when set, is the page-cache hint applied to every commit-log
	// segment (madvise on the mmap path, posix_fadvise on the others); it
	// overrides CommitLog.IO.Advice.
	ReadAdvice iopath.Advice

	// CheckpointInterval is how often the checkpoint file is rewritten and
	// synced (1 s).
	CheckpointInterval time.Duration
	// FlushConsumeQueueInterval / LeastPages / ThoroughInterval drive
	// FlushConsumeQueueService (1 s, 2 pages, 60 s). The checkpoint's
	// logicsMsgTimestamp advances only at a thorough (complete) flush.
	FlushConsumeQueueInterval         time.Duration
	FlushConsumeQueueLeastPages       int
	FlushConsumeQueueThoroughInterval time.Duration

	// Cleaning (CleanCommitLogService / CleanConsumeQueueService).
	// CleanInterval <= 0 disables the background cleaner (CleanOnce still
	// works).
	CleanInterval time.Duration // cleanResourceInterval, 10 s
	// FileReservedTime is how long a commit-log segment is kept after its
	// last modification (fileReservedTime, 72 h).
	FileReservedTime time.Duration
	// DeleteWhen lists the hours (local time, "04;05") at which expired
	// segments are deleted (deleteWhen, "04").
	DeleteWhen string
	// Disk-usage thresholds as fractions of the partition (0.75, 0.85, 0.90):
	// above DiskMaxUsedSpaceRatio expired segments are deleted at any hour;
	// above DiskSpaceCleanForciblyRatio segments are deleted regardless of
	// age; above DiskSpaceWarningLevelRatio the store also refuses puts
	// (SERVICE_NOT_AVAILABLE, ErrDiskFull) until usage is back at or below
	// DiskSpaceCleanForciblyRatio.
	DiskMaxUsedSpaceRatio       float64
	DiskSpaceCleanForciblyRatio float64
	DiskSpaceWarningLevelRatio  float64
	// DeleteFilesBatchMax bounds the segments one pass deletes (10);
	// DeleteFileInterval is the pause between two deletions (100 ms).
	DeleteFilesBatchMax int
	DeleteFileInterval  time.Duration
	// RetainBytes, when > 0, bounds the commit log by size as well (Kafka's
	// retention.bytes; RocketMQ retains by age and disk ratio only): every
	// cleaning pass deletes, oldest first and at any hour, each segment whose
	// records all lie more than RetainBytes behind the log's max offset,
	// never the active one, without DeleteFilesBatchMax or DeleteFileInterval
	// (the bound must keep up with the append rate). Long benchmark runs
	// use it to stay in a steady state on a bounded disk.
	RetainBytes int64
	// DiskUsage returns the used fraction (0..1) of the partition holding
	// path; nil means statfs of the store root.
	DiskUsage func(path string) (float64, error)

	// MessageDelayLevel is the delay-level table ("1s 5s 10s ... 2h"): a
	// SCHEDULE_TOPIC_XXXX unit's tags code is its delivery time.
	MessageDelayLevel string

	// OnMessageArriving, if set, is called by the dispatcher for every unit it
	// adds to a consume queue, with the queue's new max offset (the broker's
	// long polling: messageArrivingListener). It must not block.
	OnMessageArriving func(topic string, queueID int32, maxOffset int64)

	// Logger receives recovery, corruption and cleaning reports; nil means
	// slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns RocketMQ's defaults for a store rooted at root:
// the commit log's defaults (mmap write path, async flush, 1 GiB segments),
// 300,000-unit consume-queue files and 5,000,000-slot index files.
func DefaultConfig(root string) Config {
	return Config{
		Root:                              root,
		CommitLog:                         commitlog.DefaultConfig(root),
		ConsumeQueue:                      consumequeue.DefaultConfig(),
		Index:                             index.DefaultConfig(),
		FS:                                vfs.Default,
		MessageIndexEnable:                true,
		RecoveryTimeMargin:                3 * time.Second,
		ReputInterval:                     time.Millisecond,
		MaxTransferBytesOnMessageInMemory: 256 << 10,
		MaxTransferCountOnMessageInMemory: 32,
		MaxTransferBytesOnMessageInDisk:   64 << 10,
		MaxTransferCountOnMessageInDisk:   8,
		AccessMessageInMemoryMaxRatio:     40,
		MaxFilterMessageSize:              16000,
		VerifyCRCOnGet:                    true,
		ReadCacheBytes:                    256 << 20,
		ReadCacheBlockSize:                64 << 10,
		CheckpointInterval:                time.Second,
		FlushConsumeQueueInterval:         time.Second,
		FlushConsumeQueueLeastPages:       2,
		FlushConsumeQueueThoroughInterval: 60 * time.Second,
		CleanInterval:                     10 * time.Second,
		FileReservedTime:                  72 * time.Hour,
		DeleteWhen:                        "04",
		DiskMaxUsedSpaceRatio:             0.75,
		DiskSpaceCleanForciblyRatio:       0.85,
		DiskSpaceWarningLevelRatio:        0.90,
		DeleteFilesBatchMax:               10,
		DeleteFileInterval:                100 * time.Millisecond,
		MessageDelayLevel:                 "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h",
	}
}

// maxPullMsgSize is MAX_PULL_MSG_SIZE (128 MiB).
const maxPullMsgSize = 128 << 20

// normalize fills unset fields from the defaults and checks the rest.
func (c *Config) normalize() error {
	if c.Root == "" {
		return fmt.Errorf("%w: Root is empty", ErrInvalidConfig)
	}
	d := DefaultConfig(c.Root)
	if c.FS == nil {
		c.FS = d.FS
	}
	c.CommitLog.Dir = c.Root
	if c.CommitLog.Flush.Kind == "" {
		c.CommitLog.Flush = flush.DefaultConfig(flush.Async)
	}
	c.CommitLog.FS = c.FS
	if c.ReadAdvice != iopath.AdviceNone {
		c.CommitLog.IO.Advice = c.ReadAdvice
	}
	if c.ConsumeQueue.UnitsPerFile == 0 {
		c.ConsumeQueue = d.ConsumeQueue
	}
	if c.Index.MaxHashSlots == 0 && c.Index.MaxIndexNum == 0 {
		c.Index.MaxHashSlots, c.Index.MaxIndexNum = d.Index.MaxHashSlots, d.Index.MaxIndexNum
	}
	if c.Index.MaxQueryNum == 0 {
		c.Index.MaxQueryNum = d.Index.MaxQueryNum
	}
	pos := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	posD := func(p *time.Duration, v time.Duration) {
		if *p <= 0 {
			*p = v
		}
	}
	pos(&c.MaxTransferBytesOnMessageInMemory, d.MaxTransferBytesOnMessageInMemory)
	pos(&c.MaxTransferCountOnMessageInMemory, d.MaxTransferCountOnMessageInMemory)
	pos(&c.MaxTransferBytesOnMessageInDisk, d.MaxTransferBytesOnMessageInDisk)
	pos(&c.MaxTransferCountOnMessageInDisk, d.MaxTransferCountOnMessageInDisk)
	pos(&c.AccessMessageInMemoryMaxRatio, d.AccessMessageInMemoryMaxRatio)
	pos(&c.MaxFilterMessageSize, d.MaxFilterMessageSize)
	pos(&c.ReadCacheBlockSize, d.ReadCacheBlockSize)
	pos(&c.FlushConsumeQueueLeastPages, d.FlushConsumeQueueLeastPages)
	pos(&c.DeleteFilesBatchMax, d.DeleteFilesBatchMax)
	posD(&c.ReputInterval, d.ReputInterval)
	posD(&c.RecoveryTimeMargin, d.RecoveryTimeMargin)
	posD(&c.CheckpointInterval, d.CheckpointInterval)
	posD(&c.FlushConsumeQueueInterval, d.FlushConsumeQueueInterval)
	posD(&c.FlushConsumeQueueThoroughInterval, d.FlushConsumeQueueThoroughInterval)
	posD(&c.FileReservedTime, d.FileReservedTime)
	if c.DeleteFileInterval < 0 {
		c.DeleteFileInterval = 0
	}
	if c.DiskMaxUsedSpaceRatio <= 0 {
		c.DiskMaxUsedSpaceRatio = d.DiskMaxUsedSpaceRatio
	}
	if c.DiskSpaceCleanForciblyRatio <= 0 {
		c.DiskSpaceCleanForciblyRatio = d.DiskSpaceCleanForciblyRatio
	}
	if c.DiskSpaceWarningLevelRatio <= 0 {
		c.DiskSpaceWarningLevelRatio = d.DiskSpaceWarningLevelRatio
	}
	if c.DiskSpaceCleanForciblyRatio > c.DiskSpaceWarningLevelRatio {
		return fmt.Errorf("%w: DiskSpaceCleanForciblyRatio %.2f above DiskSpaceWarningLevelRatio %.2f",
			ErrInvalidConfig, c.DiskSpaceCleanForciblyRatio, c.DiskSpaceWarningLevelRatio)
	}
	if c.MessageDelayLevel == "" {
		c.MessageDelayLevel = d.MessageDelayLevel
	}
	if _, err := parseDelayLevels(c.MessageDelayLevel); err != nil {
		return err
	}
	if _, err := parseDeleteWhen(c.DeleteWhen); err != nil {
		return err
	}
	if c.DiskUsage == nil {
		c.DiskUsage = diskUsage
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// parseDelayLevels parses "1s 5s 1m 2h 1d" into durations; level L is
// element L−1.
func parseDelayLevels(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Fields(s) {
		if len(f) < 2 {
			return nil, fmt.Errorf("%w: delay level %q", ErrInvalidConfig, f)
		}
		unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}[f[len(f)-1]]
		var n int64
		for _, ch := range f[:len(f)-1] {
			if ch < '0' || ch > '9' {
				unit = 0
				break
			}
			n = n*10 + int64(ch-'0')
		}
		if unit == 0 {
			return nil, fmt.Errorf("%w: delay level %q", ErrInvalidConfig, f)
		}
		out = append(out, time.Duration(n)*unit)
	}
	return out, nil
}

// parseDeleteWhen parses "04;05" into a set of hours.
func parseDeleteWhen(s string) (map[int]bool, error) {
	hours := map[int]bool{}
	for _, f := range strings.Split(s, ";") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		h := 0
		for _, ch := range f {
			if ch < '0' || ch > '9' {
				return nil, fmt.Errorf("%w: DeleteWhen %q", ErrInvalidConfig, s)
			}
			h = h*10 + int(ch-'0')
		}
		if h > 23 {
			return nil, fmt.Errorf("%w: DeleteWhen %q", ErrInvalidConfig, s)
		}
		hours[h] = true
	}
	return hours, nil
}

// CheckDeleteWhen reports whether s is a valid DeleteWhen ("04", "01;02;03":
// hours 0-23, ';'-separated); the error wraps ErrInvalidConfig.
func CheckDeleteWhen(s string) error {
	_, err := parseDeleteWhen(s)
	return err
}

package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/segment"
)

// RecoveryReport describes what Open found and repaired.
type RecoveryReport struct {
	// Abnormal is true when the abort file was present (the previous
	// process did not close the store cleanly).
	Abnormal bool
	// Checkpoint is the checkpoint file as found.
	Checkpoint Checkpoint
	// ScanFrom is the segment start the commit-log scan began at (abnormal
	// recovery); -1 for the normal scan of the last two segments.
	ScanFrom int64
	// CommitLog is the commit log's own report (end, zeroed bytes, removed
	// segments, corruption).
	CommitLog commitlog.OpenReport
	// Corruption is the invalid record the scan stopped at, naming segment
	// file and offset (nil for a clean tail). Everything from it on was cut.
	Corruption *CorruptionError
	// IndexFilesDeleted counts index files dropped as newer than the
	// checkpoint (abnormal recovery).
	IndexFilesDeleted int
	// Redispatched counts records dispatched during recovery (the abnormal
	// scan plus the catch-up from the consume queues' end).
	Redispatched int64
	// DispatchFrom is where the catch-up dispatch started.
	DispatchFrom int64
	// End is the recovered end of the commit log.
	End      int64
	Duration time.Duration
}

// recover loads consume queues and index, opens the commit log finding its
// end (rocketmq-store.md §7.2), cuts consume-queue units and index entries
// past it, dispatches what the consume queues lack, and rebuilds the queue
// offset table.
func (s *Store) recover() error {
	t0 := time.Now()
	cfg := s.cfg
	rep := &s.recovery
	rep.ScanFrom = -1
	if _, err := cfg.FS.Stat(AbortPath(cfg.Root)); err == nil {
		rep.Abnormal = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: stat abort file: %w", err)
	}
	cp, err := ReadCheckpoint(cfg.FS, cfg.Root)
	if err != nil {
		return err
	}
	rep.Checkpoint = cp
	if s.ckpt, err = openCheckpointFile(cfg.FS, cfg.Root); err != nil {
		return err
	}
	s.physicTS.Store(cp.PhysicMsgTimestamp)
	s.logicsTS.Store(cp.LogicsMsgTimestamp)
	s.indexTS.Store(cp.IndexMsgTimestamp)

	if s.cq, err = consumequeue.OpenStore(cfg.FS, cfg.Root, cfg.ConsumeQueue); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := s.cq.Recover(); err != nil {
		return fmt.Errorf("store: recover consume queues: %w", err)
	}
	if cfg.MessageIndexEnable {
		ic := cfg.Index
		ic.OnFileFull = s.onIndexFileFull
		if s.idx, err = index.Open(cfg.FS, cfg.Root, ic); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		if rep.Abnormal {
			// Index files are msynced only when full or at shutdown: newer
			// ones may be incomplete on disk.
			if rep.IndexFilesDeleted, err = s.idx.DeleteNewerThan(cp.IndexMsgTimestamp); err != nil {
				return fmt.Errorf("store: drop index files newer than the checkpoint: %w", err)
			}
			if cfg.MessageIndexSafe {
				// Files ending at the checkpoint's index time but the
				// oldest, and the active (not full) file, may be on disk
				// only in part; the scan below starts before their records.
				dropped, err := s.idx.DeleteUnsafe(cp.IndexMsgTimestamp)
				if err != nil {
					return fmt.Errorf("store: drop index files not known durable: %w", err)
				}
				rep.IndexFilesDeleted += dropped
			}
		}
	}
	s.disp.indexSkipUpTo = s.indexedEnd()

	logCfg := s.logConfig()
	opts := commitlog.OpenOptions{ScanFrom: -1}
	if rep.Abnormal {
		minTS := cp.minTimestamp(cfg.RecoveryTimeMargin.Milliseconds())
		if cfg.MessageIndexEnable && cfg.MessageIndexSafe {
			// Strictly before the index time: records stored in that
			// millisecond may belong to files DeleteUnsafe removed.
			minTS = min(minTS, cp.IndexMsgTimestamp-1)
		}
		if opts.ScanFrom, err = chooseScanStart(logCfg, minTS); err != nil {
			return err
		}
		rep.ScanFrom = opts.ScanFrom
		opts.OnRecord = func(off int64, rec record.Record) error {
			if err := s.dispatchRecord(off, &rec, false); err != nil {
				return err
			}
			rep.Redispatched++
			return nil
		}
	}
	s.log, err = commitlog.OpenWith(logCfg, opts)
	if ferr := s.flushUnits(false); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("store: open commit log: %w", err)
	}
	s.host = s.log.Config().StoreHost
	rep.CommitLog = s.log.Report()
	rep.Corruption = rep.CommitLog.Corruption
	end := s.log.MaxOffset()
	rep.End = end
	s.settleRecoveredVouches(end)
	if c := rep.Corruption; c != nil {
		cfg.Logger.Error("store: corrupt commit-log record; the log was truncated before it",
			"segment", c.Path, "offset", c.Offset, "cause", c.Err, "end", end)
	}
	// Steps 6–8: nothing may reference bytes past the recovered end.
	if err := s.cq.TruncateFromPhy(end); err != nil {
		return fmt.Errorf("store: truncate consume queues at %d: %w", end, err)
	}
	indexCut := false
	if s.idx != nil {
		before := s.idx.Files()
		if err := s.idx.TruncateFromPhy(end); err != nil {
			return fmt.Errorf("store: truncate index at %d: %w", end, err)
		}
		s.disp.indexSkipUpTo = min(s.disp.indexSkipUpTo, s.indexedEnd())
		if after := s.idx.Files(); !slices.Equal(before, after) {
			// Entries past the end were cut, in memory only: the file
			// on disk may still be full and vouched for by the
			// checkpoint's index time. Lower that time to the last file
			// still full, so a cut before the truncation is durable
			// drops the stale file instead of trusting it.
			indexCut = true
			s.indexTS.Store(lastFullIndexEnd(after))
		}
	}
	minOff := s.log.MinOffset()
	if err := s.cq.SetMinPhy(minOff); err != nil {
		return fmt.Errorf("store: correct consume-queue min offsets: %w", err)
	}
	// Dispatch whatever the consume queues lack (normal recovery's
	// "dispatch records past dispatchFromPhyOffset"; a consume queue whose
	// files were lost is rebuilt as far as the commit log goes).
	from := max(s.cq.MaxPhyOffset(), minOff)
	from = min(from, end)
	rep.DispatchFrom = from
	s.disp.from.Store(from)
	if indexCut {
		// Checkpoint first, then the truncated file: in the other order
		// a cut between them would leave a truncated (not full) file that
		// recovery drops while the checkpoint's old index time starts the
		// scan after the records it held.
		if err := s.writeCheckpoint(); err != nil {
			return fmt.Errorf("store: checkpoint after index truncation: %w", err)
		}
		if err := s.idx.Flush(); err != nil {
			return fmt.Errorf("store: flush truncated index: %w", err)
		}
	}
	n, err := s.reputUntil(end, false)
	rep.Redispatched += n
	if err != nil {
		return fmt.Errorf("store: dispatch after recovery: %w", err)
	}
	if rep.Redispatched > 0 {
		// Make the re-dispatched units durable before new ones follow them:
		// consume-queue recovery scans only the last three files and
		// trusts the earlier ones, which holds only while files become
		// durable in order. A recovery can write several files' worth of
		// units; a power cut soon after could keep a later file's units
		// and lose these, leaving a hole no later recovery finds.
		for _, q := range s.cq.Queues() {
			if err := q.FlushAll(); err != nil {
				return fmt.Errorf("store: flush re-dispatched consume-queue units: %w", err)
			}
		}
	}
	s.rebuildQueueTable()
	rep.Duration = time.Since(t0)
	if rep.Abnormal || rep.Corruption != nil {
		cfg.Logger.Info("store: recovered", "abnormal", rep.Abnormal, "scanFrom", rep.ScanFrom,
			"end", end, "redispatched", rep.Redispatched, "zeroed", rep.CommitLog.ZeroedBytes,
			"removedSegments", rep.CommitLog.RemovedSegments, "indexFilesDeleted", rep.IndexFilesDeleted,
			"took", rep.Duration)
	}
	return nil
}

// lastFullIndexEnd is the end time of the newest full index file (0 when
// none is full): the index time a checkpoint may vouch for.
func lastFullIndexEnd(files []index.FileInfo) int64 {
	for i := len(files) - 1; i >= 0; i-- {
		if files[i].Full {
			return files[i].EndTimestamp
		}
	}
	return 0
}

// indexedEnd is the commit-log offset of the last record the index holds
// entries for (-1 when it has none): re-dispatched records below it are
// not indexed again, and the one at it only under the keys it lacks.
func (s *Store) indexedEnd() int64 {
	if s.idx == nil {
		return -1
	}
	files := s.idx.Files()
	has := false
	for _, f := range files {
		if f.IndexCount > 1 {
			has = true
		}
	}
	if !has {
		return -1
	}
	return files[len(files)-1].EndPhyOffset
}

// chooseScanStart picks the segment abnormal recovery scans from, newest to
// oldest: the first whose first record is valid, has a non-zero store
// timestamp and was stored at or before minTS (RocketMQ
// isMappedFileMatchedRecover); the oldest segment if none qualifies.
func chooseScanStart(cfg commitlog.Config, minTS int64) (int64, error) {
	dir := commitlog.SegmentDir(cfg.Dir)
	ents, err := cfg.FS.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: list %s: %w", dir, err)
	}
	var starts []int64
	for _, e := range ents {
		if st, ok := segment.ParseName(e.Name()); ok && !e.IsDir() {
			starts = append(starts, st)
		}
	}
	if len(starts) == 0 {
		return 0, nil
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	maxRec := cfg.MaxBodySize + 64<<10
	if cfg.MaxBodySize <= 0 {
		maxRec = record.DefaultMaxBodySize + 64<<10
	}
	for i := len(starts) - 1; i >= 0; i-- {
		ts, ok := firstRecordTimestamp(cfg, filepath.Join(dir, segment.Name(starts[i])), starts[i], maxRec)
		if ok && ts != 0 && ts <= minTS {
			return starts[i], nil
		}
	}
	return starts[0], nil
}

// firstRecordTimestamp returns the store timestamp of a segment's first
// record if that record is valid (body CRC checked when cfg.CheckCRC).
func firstRecordTimestamp(cfg commitlog.Config, path string, start int64, maxRec int) (int64, bool) {
	f, err := cfg.FS.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var hdr [8]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return 0, false
	}
	size := int32(binary.BigEndian.Uint32(hdr[:4]))
	if _, magic, err := record.PeekSize(hdr[:]); err != nil || magic == record.MagicBlank || int(size) > maxRec {
		return 0, false
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return 0, false
	}
	rec, err := record.Decode(b, cfg.CheckCRC)
	if err != nil || rec.PhysicalOffset != start {
		return 0, false
	}
	return rec.StoreTimestamp, true
}

// rebuildQueueTable sets every queue's next offset from its consume queue
// (recoverTopicQueueTable).
func (s *Store) rebuildQueueTable() {
	for _, q := range s.cq.Queues() {
		k := queueKey{q.Topic(), q.QueueID()}
		st := s.stripeFor(k.topic, k.id)
		st.mu.Lock()
		st.next[k] = q.MaxOffset()
		st.mu.Unlock()
	}
}

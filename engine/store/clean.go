package store

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/brokerlab/brokerlab/engine/segment"
)

// CleanReport describes one cleaning pass.
type CleanReport struct {
	// DiskUsage is the used fraction of the store's partition.
	DiskUsage float64
	// DiskFull is the state after the pass (puts refused).
	DiskFull bool
	// TimeToDelete: the hour is in DeleteWhen. SpaceToDelete: usage above
	// DiskMaxUsedSpaceRatio (or above the forcible ratios).
	// CleanImmediately: usage above DiskSpaceCleanForciblyRatio, so
	// segments went regardless of age.
	TimeToDelete, SpaceToDelete, CleanImmediately bool
	// SegmentsDeleted, ConsumeQueueFilesDeleted and IndexFilesDeleted
	// count the files removed; RetainedDeleted is the part of
	// SegmentsDeleted that RetainBytes removed.
	SegmentsDeleted          int
	RetainedDeleted          int
	ConsumeQueueFilesDeleted int
	IndexFilesDeleted        int
	// MinOffset is the commit log's min offset after the pass.
	MinOffset int64
	// WaitedForDispatch: a segment due for deletion (by age, disk use or
	// RetainBytes) ends past DispatchedOffset, so it and every later
	// segment stayed until the dispatcher has built its consume-queue
	// units and index entries. DispatchedOffset is the dispatcher's
	// position when the pass ended.
	WaitedForDispatch bool
	DispatchedOffset  int64
}

// CleanOnce runs one pass of CleanCommitLogService and
// CleanConsumeQueueService (rocketmq-store.md §9) as of now:
//
//   - usage above DiskSpaceWarningLevelRatio marks the disk full (puts get
//     SERVICE_NOT_AVAILABLE / ErrDiskFull) and cleans immediately; above
//     DiskSpaceCleanForciblyRatio it cleans immediately; at or below it the
//     disk is marked OK again;
//   - when now's hour is in DeleteWhen, usage is above DiskMaxUsedSpaceRatio,
//     or cleaning is immediate, up to DeleteFilesBatchMax segments are deleted
//     oldest first while their file mtime is older than FileReservedTime
//     (any age when immediate), never the active one, stopping at the first
//     that stays;
//   - with RetainBytes set, every segment wholly more than RetainBytes
//     behind the max offset is deleted too, at any hour and age;
//   - consume-queue files and index files wholly below the commit log's new
//     min offset are removed and the queues' min offsets corrected.
//
// Every path deletes only segments the dispatcher has passed: a segment
// goes only if its end is at or below DispatchedOffset, i.e. every record
// in it has its consume-queue unit written to its queue (flushUnits, a
// reader finds it; durability follows the queue's own flush) and its index
// entries put in the index, which is what DispatchedOffset promises. The
// first segment that is due but not yet dispatched stops the pass (oldest
// first, as always): the pass deletes what it may, sets
// CleanReport.WaitedForDispatch, counts Stats.CleanWaitsForDispatch and
// logs it at most once per cleanWaitLogEvery. Nothing is dropped: a later
// pass deletes the segment once dispatch has passed it, even on a full
// disk (a dispatcher stuck on an error keeps its segments until it is
// unstuck). Java's deleteExpiredFileByTime has no such check; without it a
// dispatcher behind retention skips the deleted bytes and acknowledged
// messages never reach a consume queue.
//
// The background cleaner calls it every CleanInterval; tests call it.
func (s *Store) CleanOnce(now time.Time) (CleanReport, error) {
	s.life.RLock()
	defer s.life.RUnlock()
	var rep CleanReport
	if s.closed.Load() {
		return rep, ErrClosed
	}
	s.cleanMu.Lock()
	defer s.cleanMu.Unlock()

	usage, uerr := s.cfg.DiskUsage(s.cfg.Root)
	if uerr != nil {
		uerr = fmt.Errorf("store: disk usage: %w", uerr)
		usage = -1 // RocketMQ treats an unknown ratio as "space to delete"
	}
	rep.DiskUsage = usage
	switch {
	case usage > s.cfg.DiskSpaceWarningLevelRatio:
		if !s.diskFull.Swap(true) {
			s.cfg.Logger.Error("store: disk maybe full soon; refusing puts", "usage", usage, "root", s.cfg.Root)
		}
		rep.CleanImmediately = true
	case usage > s.cfg.DiskSpaceCleanForciblyRatio:
		rep.CleanImmediately = true
	default:
		if s.diskFull.Swap(false) {
			s.cfg.Logger.Info("store: disk space OK; accepting puts", "usage", usage)
		}
	}
	rep.SpaceToDelete = rep.CleanImmediately || usage < 0 || usage > s.cfg.DiskMaxUsedSpaceRatio
	rep.TimeToDelete = s.deleteHours[now.Hour()]
	rep.DiskFull = s.diskFull.Load()

	var errs []error
	if uerr != nil {
		errs = append(errs, uerr)
	}
	var held *segment.Segment
	if rep.TimeToDelete || rep.SpaceToDelete {
		n, err := s.deleteExpiredSegments(now, rep.CleanImmediately, &held)
		rep.SegmentsDeleted = n
		if err != nil {
			errs = append(errs, err)
		}
		if n > 0 {
			s.st.segmentsCleaned.Add(uint64(n))
			s.cfg.Logger.Info("store: deleted expired commit-log segments", "count", n,
				"immediately", rep.CleanImmediately, "usage", usage, "minOffset", s.log.MinOffset())
		}
	}
	if s.cfg.RetainBytes > 0 {
		n, err := s.deleteBeyondRetention(&held)
		rep.RetainedDeleted = n
		rep.SegmentsDeleted += n
		if err != nil {
			errs = append(errs, err)
		}
		if n > 0 {
			s.st.segmentsCleaned.Add(uint64(n))
		}
	}
	rep.MinOffset = s.log.MinOffset()
	rep.DispatchedOffset = s.disp.from.Load()
	if held != nil {
		rep.WaitedForDispatch = true
		s.noteCleanWait(held, rep.DispatchedOffset)
	}
	if rep.MinOffset > s.lastCleanMin {
		ok := true
		n, err := s.cq.DeleteBelowPhy(rep.MinOffset)
		rep.ConsumeQueueFilesDeleted = n
		if err != nil {
			ok = false
			errs = append(errs, fmt.Errorf("store: clean consume queues: %w", err))
		}
		if s.idx != nil {
			m, err := s.idx.DeleteBelowPhy(rep.MinOffset)
			rep.IndexFilesDeleted = m
			if err != nil {
				ok = false
				errs = append(errs, fmt.Errorf("store: clean index: %w", err))
			}
		}
		if ok {
			s.lastCleanMin = rep.MinOffset
		}
	}
	return rep, errors.Join(errs...)
}

// cleanWaitLogEvery is the least time between two "cleaning waits for
// dispatch" log lines; the passes in between are counted only.
const cleanWaitLogEvery = 10 * time.Second

// dispatchedOrHeld wraps a deletion rule: a segment goes only if due and
// wholly below the dispatcher's position; a due segment that is not is
// noted in *held if it is nil (the caller's DeleteOldest then stops at it).
func (s *Store) dispatchedOrHeld(due func(*segment.Segment) bool, held **segment.Segment) func(*segment.Segment) bool {
	return func(seg *segment.Segment) bool {
		if !due(seg) {
			return false
		}
		if seg.End() > s.disp.from.Load() {
			if *held == nil {
				*held = seg
			}
			return false
		}
		return true
	}
}

// noteCleanWait counts a pass that waited for the dispatcher and logs it,
// at most once per cleanWaitLogEvery (wall clock, not the pass's now),
// with the number of waiting passes not logged since.
// REQUIRES: s.cleanMu held.
func (s *Store) noteCleanWait(held *segment.Segment, dispatched int64) {
	n := s.st.cleanDispatchWaits.Add(1)
	t := time.Now().UnixNano()
	if last := s.st.cleanWaitLoggedAt.Load(); last != 0 && t-last < int64(cleanWaitLogEvery) {
		return
	}
	s.st.cleanWaitLoggedAt.Store(t)
	prev := s.st.cleanWaitLoggedN.Swap(n)
	s.cfg.Logger.Warn("store: cleaning waits for dispatch: a segment due for deletion holds records not yet in the consume queues",
		"segment", held.Path(), "segmentEnd", held.End(), "dispatched", dispatched,
		"behindBytes", held.End()-dispatched, "waitsNotLogged", n-prev-1)
}

// deleteBeyondRetention deletes, oldest first, the dispatched segments
// whose end is more than RetainBytes behind the log's max offset.
func (s *Store) deleteBeyondRetention(held **segment.Segment) (int, error) {
	beyond := func(seg *segment.Segment) bool {
		return s.log.MaxOffset()-seg.End() >= s.cfg.RetainBytes
	}
	return s.log.DeleteOldest(math.MaxInt, s.dispatchedOrHeld(beyond, held))
}

// deleteExpiredSegments is deleteExpiredFileByTime, for dispatched
// segments only.
func (s *Store) deleteExpiredSegments(now time.Time, cleanAtOnce bool, held **segment.Segment) (int, error) {
	expired := func(seg *segment.Segment) bool {
		if cleanAtOnce {
			return true
		}
		fi, err := s.cfg.FS.Stat(seg.Path())
		if err != nil {
			return false
		}
		return !now.Before(fi.ModTime().Add(s.cfg.FileReservedTime))
	}
	expired = s.dispatchedOrHeld(expired, held)
	deleted := 0
	for deleted < s.cfg.DeleteFilesBatchMax {
		if deleted > 0 && s.cfg.DeleteFileInterval > 0 {
			time.Sleep(s.cfg.DeleteFileInterval)
		}
		n, err := s.log.DeleteOldest(1, expired)
		deleted += n
		if err != nil {
			return deleted, err
		}
		if n == 0 {
			break
		}
	}
	return deleted, nil
}

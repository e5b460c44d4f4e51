package consumequeue

import "errors"

// DeleteBelowPhy removes the oldest files whose every unit references
// commit-log bytes below minPhy, the commit log's new minimum offset
// (RocketMQ deleteExpiredFileByOffset): for each file but the last, oldest
// first, its last unit is read; the file is removed if that unit's phyOffset
// < minPhy, otherwise the scan stops. The last file is never removed. It
// then corrects MinOffset as SetMinPhy does and returns the number of files
// removed.
func (q *Queue) DeleteBelowPhy(minPhy int64) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.checkWritable(); err != nil {
		return 0, err
	}
	segs := q.snapshot()
	n := 0
	var readErr error
	for ; n < len(segs)-1; n++ {
		// The last unit that references a record (a gap-filled tail is
		// blank); a file of blanks only references nothing.
		u, _, ok, err := lastRealUnit(segs[n], segs[n].start, segs[n].start+q.fileSize)
		if err != nil {
			readErr = err
			break
		}
		if ok && u.PhyOffset >= minPhy {
			break
		}
	}
	if n > 0 {
		kept := make([]*segment, len(segs)-n)
		copy(kept, segs[n:])
		q.setSegments(kept)
		if q.minLogic.Load() < kept[0].start {
			q.minLogic.Store(kept[0].start)
		}
		readErr = errors.Join(readErr, q.destroy(segs[:n]))
	}
	return n, errors.Join(readErr, q.setMinPhyLocked(minPhy))
}

// SetMinPhy corrects MinOffset after the commit log's minimum offset became
// minPhy (RocketMQ correctMinOffset): if the queue's last unit references
// bytes below minPhy the queue is logically empty (MinOffset = MaxOffset);
// otherwise MinOffset becomes the first unit, at or after the current
// MinOffset, that is not blank and has phyOffset >= minPhy (binary search in
// the first file that holds one). MinOffset never decreases. minPhy is also
// remembered for SearchByTime.
func (q *Queue) SetMinPhy(minPhy int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.checkWritable(); err != nil {
		return err
	}
	return q.setMinPhyLocked(minPhy)
}

// setMinPhyLocked implements SetMinPhy. REQUIRES: q.mu held.
func (q *Queue) setMinPhyLocked(minPhy int64) error {
	q.minPhy.Store(minPhy)
	segs := q.snapshot()
	if len(segs) == 0 {
		q.minLogic.Store(0)
		q.maxPhy.Store(-1)
		return nil
	}
	wp := q.writePos.Load()
	ml := max(q.minLogic.Load(), segs[0].start)
	if ml >= wp {
		return nil
	}
	lastSeg := findSegment(segs, wp-UnitSize, q.fileSize)
	if lastSeg == nil {
		return nil
	}
	last, err := readUnitAt(lastSeg, wp-UnitSize)
	if err != nil {
		return err
	}
	if last.PhyOffset < minPhy {
		q.minLogic.Store(wp)
		return nil
	}
	live := func(u Unit) bool { return !u.IsBlank() && u.PhyOffset >= minPhy }
	for _, seg := range segs {
		lo := max(ml, seg.start)
		hi := min(wp, seg.start+q.fileSize)
		if lo >= hi {
			continue
		}
		u, upos, ok, err := lastRealUnit(seg, lo, hi)
		if err != nil {
			return err
		}
		if !ok || !live(u) {
			continue
		}
		// Search up to the last real unit: a blank-filled tail follows it.
		// Blanks before it (pre-fill, earlier gaps) count as below minPhy.
		pos, err := searchUnits(seg, lo, upos+UnitSize, live)
		if err != nil {
			return err
		}
		q.minLogic.Store(pos)
		return nil
	}
	q.minLogic.Store(wp)
	return nil
}

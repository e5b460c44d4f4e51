package consumequeue

import "fmt"

// blankRunUnits bounds the buffer used to write runs of blank units.
const blankRunUnits = 4096

// Put records that the message at queueOffset is the commit-log record
// described by u (RocketMQ putMessagePositionInfo):
//
//   - a record ending at or below MaxPhyOffset is a repeat of dispatched data
//     and is ignored;
//   - the unit's place is queueOffset×20; if that is below the write position
//     the put is a repeat and is ignored;
//   - if the queue has no file yet, the first file is created at the file
//     boundary below that place and blank units fill its front (fillPreBlank);
//     MinOffset becomes queueOffset;
//   - if the place is beyond the write position (RocketMQ "[BUG]logic queue
//     order maybe wrong"), blank units fill the gap — the rest of the current
//     file and the front of the target file; wholly skipped files are not
//     created — so the unit still lands at queueOffset.
//
// Ignored puts return nil and are counted in Stats.
func (q *Queue) Put(queueOffset int64, u Unit) error {
	if queueOffset < 0 || u.PhyOffset < 0 || u.Size <= 0 {
		return fmt.Errorf("%w: offset %d unit %+v", ErrInvalidUnit, queueOffset, u)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.checkWritable(); err != nil {
		return err
	}
	if u.End() <= q.maxPhy.Load() {
		q.dupPuts.Add(1)
		return nil
	}
	expected := queueOffset * UnitSize
	if len(q.snapshot()) == 0 {
		if err := q.startQueueLocked(expected); err != nil {
			return err
		}
	}
	cur := q.writePos.Load()
	if expected < cur {
		q.dupPuts.Add(1)
		return nil
	}
	if expected > cur {
		q.gapPuts.Add(1)
		if err := q.fillGapLocked(cur, expected); err != nil {
			return err
		}
	}
	seg, err := q.segmentForWriteLocked(expected)
	if err != nil {
		return err
	}
	u.Encode(q.scratch[:])
	if _, err := seg.f.WriteAt(q.scratch[:], expected-seg.start); err != nil {
		return fmt.Errorf("consumequeue: write %s at %d: %w", seg.path, expected-seg.start, err)
	}
	q.writePos.Store(expected + UnitSize)
	if !u.IsBlank() {
		q.maxPhy.Store(u.End())
	}
	return nil
}

// startQueueLocked creates the first file of an empty queue for a unit at
// logical byte expected, pre-filling blanks in front of it.
// REQUIRES: q.mu held, no segments.
func (q *Queue) startQueueLocked(expected int64) error {
	start := expected - expected%q.fileSize
	seg, err := q.createLocked(start)
	if err != nil {
		return err
	}
	q.writePos.Store(start)
	q.flushedPos.Store(start)
	q.minLogic.Store(expected)
	if expected > start {
		if err := q.writeBlanksLocked(seg, start, expected); err != nil {
			return err
		}
		q.writePos.Store(expected)
	}
	return nil
}

// fillGapLocked writes blank units over [cur, expected), creating the file
// that holds expected if needed. REQUIRES: q.mu held, cur < expected.
func (q *Queue) fillGapLocked(cur, expected int64) error {
	segs := q.snapshot()
	last := segs[len(segs)-1]
	lastEnd := last.start + q.fileSize
	if expected < lastEnd {
		if err := q.writeBlanksLocked(last, cur, expected); err != nil {
			return err
		}
		q.writePos.Store(expected)
		return nil
	}
	if cur < lastEnd {
		if err := q.writeBlanksLocked(last, cur, lastEnd); err != nil {
			return err
		}
		q.writePos.Store(lastEnd)
	}
	target := expected - expected%q.fileSize
	seg, err := q.createLocked(target)
	if err != nil {
		return err
	}
	if target > lastEnd {
		// Whole files skipped: the write position jumps over the hole.
		q.writePos.Store(target)
	}
	if expected > target {
		if err := q.writeBlanksLocked(seg, target, expected); err != nil {
			return err
		}
	}
	q.writePos.Store(expected)
	return nil
}

// segmentForWriteLocked returns the file that holds logical byte pos, which
// is the write position: the last file, or a new one when it is full.
// REQUIRES: q.mu held, segments non-empty.
func (q *Queue) segmentForWriteLocked(pos int64) (*segment, error) {
	segs := q.snapshot()
	last := segs[len(segs)-1]
	if pos < last.start+q.fileSize {
		return last, nil
	}
	return q.createLocked(last.start + q.fileSize)
}

// createLocked creates the file starting at start and appends it to the
// segment list. REQUIRES: q.mu held, start beyond every existing file.
func (q *Queue) createLocked(start int64) (*segment, error) {
	seg, err := createSegment(q.fsys, q.dir, start, q.fileSize)
	if err != nil {
		return nil, err
	}
	old := q.snapshot()
	segs := make([]*segment, len(old), len(old)+1)
	copy(segs, old)
	q.setSegments(append(segs, seg))
	return seg, nil
}

// writeBlanksLocked writes blank units over the logical range [from, to) of
// seg. REQUIRES: q.mu held.
func (q *Queue) writeBlanksLocked(seg *segment, from, to int64) error {
	if q.blanks == nil {
		n := min(int64(blankRunUnits), q.units)
		q.blanks = make([]byte, n*UnitSize)
		for i := int64(0); i < n; i++ {
			BlankUnit.Encode(q.blanks[i*UnitSize:])
		}
	}
	for pos := from; pos < to; {
		n := min(to-pos, int64(len(q.blanks)))
		if _, err := seg.f.WriteAt(q.blanks[:n], pos-seg.start); err != nil {
			return fmt.Errorf("consumequeue: write blanks %s at %d: %w", seg.path, pos-seg.start, err)
		}
		pos += n
	}
	return nil
}

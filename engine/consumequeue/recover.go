package consumequeue

import (
	"errors"
	"fmt"
)

// Recover finds the end of valid data after Open (RocketMQ
// ConsumeQueue.recover): it scans units from the third-from-last file while
// phyOffset >= 0 && size > 0, continuing into the next file only when the
// current one was entirely valid. The write and flushed positions become the
// end of the last valid unit, later files are deleted, and the rest of the
// last kept file is zeroed so torn or stale units cannot reappear. MaxPhyOffset
// becomes the end of the last non-blank unit scanned; MinOffset skips a
// leading run of pre-fill blanks in the first file.
func (q *Queue) Recover() error {
	q.flushMu.Lock()
	defer q.flushMu.Unlock()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	segs := q.snapshot()
	if len(segs) == 0 {
		q.writePos.Store(0)
		q.flushedPos.Store(0)
		q.minLogic.Store(0)
		q.recovered = true
		return nil
	}
	idx := max(len(segs)-3, 0)
	maxPhy := int64(-1)
	var valid int64
	for {
		n, lastEnd, err := scanUnits(segs[idx], q.fileSize, func(u Unit) bool { return !u.valid() })
		if err != nil {
			return err
		}
		if lastEnd >= 0 {
			maxPhy = lastEnd
		}
		valid = n
		if n == q.fileSize && idx+1 < len(segs) {
			idx++
			continue
		}
		break
	}
	keep := segs[idx]
	if err := q.removeTailLocked(idx + 1); err != nil {
		return err
	}
	if err := zeroRange(keep, valid, q.fileSize); err != nil {
		return err
	}
	end := keep.start + valid
	q.writePos.Store(end)
	q.flushedPos.Store(end)
	q.maxPhy.Store(maxPhy)
	if first := q.snapshot()[0]; q.minLogic.Load() < first.start {
		q.minLogic.Store(first.start)
	}
	if err := q.skipBlankPrefixLocked(); err != nil {
		return err
	}
	q.recovered = true
	return nil
}

// TruncateFromPhy cuts every unit that references commit-log bytes at or
// beyond phyEnd (RocketMQ truncateDirtyLogicFiles, recovery step 6): the last
// file is scanned from its start and cut at the first unit with
// phyOffset >= phyEnd (or an invalid unit); a file whose first unit is cut is
// deleted and the previous file examined. Cut bytes are zeroed. A queue whose
// MaxPhyOffset is <= phyEnd is left alone (unless phyEnd is 0: an empty
// commit log empties every queue).
func (q *Queue) TruncateFromPhy(phyEnd int64) error {
	q.flushMu.Lock()
	defer q.flushMu.Unlock()
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.checkWritable(); err != nil {
		return err
	}
	if phyEnd > 0 && q.maxPhy.Load() <= phyEnd {
		return nil
	}
	wp := q.writePos.Load()
	for {
		segs := q.snapshot()
		if len(segs) == 0 {
			wp = 0
			q.minLogic.Store(0)
			break
		}
		last := segs[len(segs)-1]
		limit := min(max(wp-last.start, 0), q.fileSize)
		n, _, err := scanUnits(last, limit, func(u Unit) bool { return !u.valid() || u.PhyOffset >= phyEnd })
		if err != nil {
			return err
		}
		if n == 0 {
			if err := q.removeTailLocked(len(segs) - 1); err != nil {
				return err
			}
			wp = last.start
			continue
		}
		if err := zeroRange(last, n, limit); err != nil {
			return err
		}
		last.startTS.Store(-1)
		last.stopTS.Store(-1)
		wp = last.start + n
		break
	}
	q.writePos.Store(wp)
	if q.flushedPos.Load() > wp {
		q.flushedPos.Store(wp)
	}
	if q.minLogic.Load() > wp {
		q.minLogic.Store(wp)
	}
	end, err := q.lastUnitEndLocked()
	if err != nil {
		return err
	}
	q.maxPhy.Store(end)
	return nil
}

// removeTailLocked deletes the files segs[from:]. REQUIRES: q.mu held.
func (q *Queue) removeTailLocked(from int) error {
	segs := q.snapshot()
	if from >= len(segs) {
		return nil
	}
	kept := make([]*segment, from)
	copy(kept, segs[:from])
	q.setSegments(kept)
	return q.destroy(segs[from:])
}

// destroy unlinks files already taken out of the segment list and drops the
// owner references (readers holding one keep the file open until done).
func (q *Queue) destroy(segs []*segment) error {
	var errs []error
	for _, s := range segs {
		if err := q.fsys.Remove(s.path); err != nil {
			errs = append(errs, fmt.Errorf("consumequeue: remove %s: %w", s.path, err))
		}
		errs = append(errs, s.release())
	}
	if len(segs) > 0 {
		errs = append(errs, q.fsys.SyncDir(q.dir))
	}
	return errors.Join(errs...)
}

// scanUnits reads seg's units in [0, limit) (file-relative bytes) until stop
// returns true, returning the byte length of the accepted prefix and the
// record end of its last non-blank unit (-1 if none).
// REQUIRES: seg not removable concurrently (q.mu held).
func scanUnits(seg *segment, limit int64, stop func(Unit) bool) (n, lastEnd int64, err error) {
	bp := readBufPool.Get().(*[]byte)
	defer readBufPool.Put(bp)
	chunk := *bp
	lastEnd = -1
	for pos := int64(0); pos < limit; {
		c := min(limit-pos, int64(len(chunk)))
		if _, err := seg.f.ReadAt(chunk[:c], pos); err != nil {
			return pos, lastEnd, fmt.Errorf("consumequeue: read %s at %d: %w", seg.path, pos, err)
		}
		for i := int64(0); i+UnitSize <= c; i += UnitSize {
			u := DecodeUnit(chunk[i : i+UnitSize])
			if stop(u) {
				return pos + i, lastEnd, nil
			}
			if !u.IsBlank() {
				lastEnd = u.End()
			}
		}
		pos += c
	}
	return limit, lastEnd, nil
}

// zeroRange overwrites with zeros every chunk of seg's file-relative byte
// range [from, to) that is not already zero, then fdatasyncs if it wrote.
func zeroRange(seg *segment, from, to int64) error {
	bp := readBufPool.Get().(*[]byte)
	defer readBufPool.Put(bp)
	chunk := *bp
	var zeros []byte
	for pos := from; pos < to; {
		c := min(to-pos, int64(len(chunk)))
		if _, err := seg.f.ReadAt(chunk[:c], pos); err != nil {
			return fmt.Errorf("consumequeue: read %s at %d: %w", seg.path, pos, err)
		}
		if !allZero(chunk[:c]) {
			if zeros == nil {
				zeros = make([]byte, len(chunk))
			}
			if _, err := seg.f.WriteAt(zeros[:c], pos); err != nil {
				return fmt.Errorf("consumequeue: zero %s at %d: %w", seg.path, pos, err)
			}
		}
		pos += c
	}
	if zeros != nil {
		if err := seg.f.Datasync(); err != nil {
			return fmt.Errorf("consumequeue: datasync %s: %w", seg.path, err)
		}
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// lastUnitEndLocked returns the record end of the last non-blank unit below
// the write position, or -1. REQUIRES: q.mu held.
func (q *Queue) lastUnitEndLocked() (int64, error) {
	wp := q.writePos.Load()
	segs := q.snapshot()
	for i := len(segs) - 1; i >= 0; i-- {
		seg := segs[i]
		u, _, ok, err := lastRealUnit(seg, seg.start, min(wp, seg.start+q.fileSize))
		if err != nil || ok {
			return u.End(), err
		}
	}
	return -1, nil
}

// lastRealUnit returns the last valid, non-blank unit in the logical byte
// range [lo, hi) of seg and its position, reading backwards; ok is false if
// there is none. REQUIRES: a reference on seg or q.mu held.
func lastRealUnit(seg *segment, lo, hi int64) (u Unit, pos int64, ok bool, err error) {
	bp := readBufPool.Get().(*[]byte)
	defer readBufPool.Put(bp)
	chunk := *bp
	for hi > lo {
		from := max(hi-int64(len(chunk)), lo)
		if _, err := seg.f.ReadAt(chunk[:hi-from], from-seg.start); err != nil {
			return Unit{}, 0, false, fmt.Errorf("consumequeue: read %s at %d: %w", seg.path, from-seg.start, err)
		}
		for p := hi - from - UnitSize; p >= 0; p -= UnitSize {
			if u := DecodeUnit(chunk[p : p+UnitSize]); u.valid() && !u.IsBlank() {
				return u, from + p, true, nil
			}
		}
		hi = from
	}
	return Unit{}, 0, false, nil
}

// skipBlankPrefixLocked moves the min offset past a leading run of pre-fill
// blank units in the first file. REQUIRES: q.mu held.
func (q *Queue) skipBlankPrefixLocked() error {
	segs := q.snapshot()
	if len(segs) == 0 {
		return nil
	}
	first := segs[0]
	lo := q.minLogic.Load()
	hi := min(q.writePos.Load(), first.start+q.fileSize)
	if lo < first.start || lo >= hi {
		return nil
	}
	pos, err := searchUnits(first, lo, hi, func(u Unit) bool { return !u.IsBlank() })
	if err != nil {
		return err
	}
	q.minLogic.Store(pos)
	return nil
}

// searchUnits returns the first logical byte position p in [lo, hi) (a
// multiple of UnitSize) whose unit satisfies pred, assuming pred is false then
// true along the range; hi if none.
func searchUnits(seg *segment, lo, hi int64, pred func(Unit) bool) (int64, error) {
	n := (hi - lo) / UnitSize
	i, j := int64(0), n
	for i < j {
		h := int64(uint64(i+j) >> 1)
		u, err := readUnitAt(seg, lo+h*UnitSize)
		if err != nil {
			return hi, err
		}
		if pred(u) {
			j = h
		} else {
			i = h + 1
		}
	}
	return lo + i*UnitSize, nil
}

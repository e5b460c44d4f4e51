package consumequeue

import "fmt"

// PutRun records a run of units for consecutive queue offsets starting at
// first, with the semantics of calling Put for each in order. The common
// case — the run continues the queue at its write position, inside the
// current file, after every dispatched record — is one write of
// len(units)×20 bytes instead of one per unit; anything else (repeats,
// gaps, a file boundary, an empty queue) falls back to Put per unit.
//
// Concurrency: as Put.
func (q *Queue) PutRun(first int64, units []Unit) error {
	if len(units) == 0 {
		return nil
	}
	if len(units) > 1 {
		done, err := q.putRunFast(first, units)
		if done || err != nil {
			return err
		}
	}
	for i, u := range units {
		if err := q.Put(first+int64(i), u); err != nil {
			return err
		}
	}
	return nil
}

// putRunFast writes the run in one write when it can; false (and no error)
// means nothing was written and the caller falls back to Put.
func (q *Queue) putRunFast(first int64, units []Unit) (bool, error) {
	for _, u := range units {
		if u.PhyOffset < 0 || u.Size <= 0 {
			return false, nil // Put reports the invalid unit
		}
	}
	if first < 0 {
		return false, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.checkWritable() != nil || len(q.snapshot()) == 0 {
		return false, nil
	}
	if units[0].End() <= q.maxPhy.Load() {
		return false, nil // repeats: Put ignores them one by one
	}
	expected := first * UnitSize
	if expected != q.writePos.Load() {
		return false, nil
	}
	segs := q.snapshot()
	seg := segs[len(segs)-1]
	end := expected + int64(len(units))*UnitSize
	if expected < seg.start || end > seg.start+q.fileSize {
		return false, nil
	}
	n := len(units) * UnitSize
	if cap(q.runBuf) < n {
		q.runBuf = make([]byte, n)
	}
	buf := q.runBuf[:n]
	var maxPhy int64 = -1
	for i, u := range units {
		u.Encode(buf[i*UnitSize:])
		if !u.IsBlank() {
			maxPhy = u.End()
		}
	}
	if _, err := seg.f.WriteAt(buf, expected-seg.start); err != nil {
		return false, fmt.Errorf("consumequeue: write %s at %d: %w", seg.path, expected-seg.start, err)
	}
	q.writePos.Store(end)
	if maxPhy >= 0 {
		q.maxPhy.Store(maxPhy)
	}
	return true, nil
}

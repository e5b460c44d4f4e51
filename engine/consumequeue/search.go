package consumequeue

import "fmt"

// StoreTimeFunc returns the STORETIMESTAMP of the commit-log record at
// phyOffset with the given size (RocketMQ CommitLog.pickupStoreTimestamp).
type StoreTimeFunc func(phyOffset int64, size int32) (int64, error)

type searchRange struct {
	seg    *segment
	lo, hi int64 // logical byte range of readable units [lo, hi)
	last   bool
}

// SearchByTime returns the queue offset for a store timestamp (RocketMQ
// getOffsetInQueueByTime):
//
//  1. choose a file: Lower takes the first non-last file whose last unit was
//     stored at or after ts, else the last file; Upper takes the newest file
//     whose first unit was stored at or before ts (none: 0). Per-file first
//     and last store times are cached.
//  2. binary search in that file. If the file's last unit is older than ts,
//     Lower returns the offset after it and Upper its offset; if the first
//     unit is newer, Lower returns the first unit's offset and Upper 0.
//     Units that are blank or reference bytes below the commit-log minimum
//     (last SetMinPhy) count as older. On an exact hit Lower returns the
//     first and Upper the last unit with that timestamp (within the file);
//     otherwise Lower returns the first newer unit and Upper the last older
//     one.
//
// An empty queue returns 0. An error from storeTime is returned wrapped.
func (q *Queue) SearchByTime(ts int64, boundary Boundary, storeTime StoreTimeFunc) (int64, error) {
	wp := q.writePos.Load()
	segs := q.snapshot()
	ml := q.minLogic.Load()
	var ranges []searchRange
	defer func() {
		for _, r := range ranges {
			_ = r.seg.release()
		}
	}()
	for _, s := range segs {
		lo, hi := max(ml, s.start), min(wp, s.start+q.fileSize)
		if lo < hi && s.acquire() {
			ranges = append(ranges, searchRange{seg: s, lo: lo, hi: hi})
		}
	}
	if len(ranges) == 0 {
		return 0, nil
	}
	ranges[len(ranges)-1].last = true
	q.cacheTimes(ranges, storeTime)

	var chosen *searchRange
	switch boundary {
	case Lower:
		chosen = &ranges[len(ranges)-1]
		for i := range ranges[:len(ranges)-1] {
			if t := ranges[i].seg.stopTS.Load(); t >= 0 && t >= ts {
				chosen = &ranges[i]
				break
			}
		}
	case Upper:
		for i := len(ranges) - 1; i >= 0; i-- {
			if t := ranges[i].seg.startTS.Load(); t >= 0 && t <= ts {
				chosen = &ranges[i]
				break
			}
		}
		if chosen == nil {
			return 0, nil
		}
	default:
		return 0, fmt.Errorf("consumequeue: unknown boundary %d", boundary)
	}
	return q.searchInFile(*chosen, ts, boundary, storeTime)
}

// cacheTimes fills the per-file first/last store-time caches where unknown.
// Failures leave them unknown.
func (q *Queue) cacheTimes(ranges []searchRange, storeTime StoreTimeFunc) {
	timeOf := func(u Unit, err error) int64 {
		if err != nil || !u.valid() || u.IsBlank() {
			return -1
		}
		t, err := storeTime(u.PhyOffset, u.Size)
		if err != nil || t <= 0 {
			return -1
		}
		return t
	}
	for _, r := range ranges {
		if r.seg.startTS.Load() < 0 {
			if t := timeOf(readUnitAt(r.seg, r.lo)); t > 0 {
				r.seg.startTS.Store(t)
			}
		}
		if !r.last && r.seg.stopTS.Load() < 0 && r.hi == r.seg.start+q.fileSize {
			u, _, ok, err := lastRealUnit(r.seg, r.lo, r.hi)
			if !ok {
				u = Unit{}
			}
			if t := timeOf(u, err); t > 0 {
				r.seg.stopTS.Store(t)
			}
		}
	}
}

func (q *Queue) searchInFile(r searchRange, ts int64, boundary Boundary, storeTime StoreTimeFunc) (int64, error) {
	minPhy := q.minPhy.Load()
	// timeAt reports the store time at pos; skip means the unit references
	// no live record (blank or below the commit-log minimum).
	timeAt := func(pos int64) (t int64, skip bool, err error) {
		u, err := readUnitAt(r.seg, pos)
		if err != nil {
			return 0, false, err
		}
		if !u.valid() || u.IsBlank() || u.PhyOffset < minPhy {
			return 0, true, nil
		}
		t, err = storeTime(u.PhyOffset, u.Size)
		if err != nil {
			return 0, false, fmt.Errorf("consumequeue: store time of record at %d: %w", u.PhyOffset, err)
		}
		return t, false, nil
	}
	floor, ceiling := r.lo, r.hi-UnitSize

	t, skip, err := timeAt(ceiling)
	if err != nil {
		return 0, err
	}
	if !skip && t < ts {
		if boundary == Lower {
			return (ceiling + UnitSize) / UnitSize, nil
		}
		return ceiling / UnitSize, nil
	}
	t, skip, err = timeAt(floor)
	if err != nil {
		return 0, err
	}
	if !skip && t > ts {
		if boundary == Lower {
			return floor / UnitSize, nil
		}
		return 0, nil
	}

	low, high := floor, ceiling
	left, right, target := int64(-1), int64(-1), int64(-1)
	for high >= low {
		mid := low + (high-low)/(2*UnitSize)*UnitSize
		t, skip, err := timeAt(mid)
		if err != nil {
			return 0, err
		}
		if skip || t < ts {
			low, left = mid+UnitSize, mid
			continue
		}
		if t > ts {
			high, right = mid-UnitSize, mid
			continue
		}
		target = mid
		break
	}
	if target >= 0 {
		step := int64(-UnitSize)
		if boundary == Upper {
			step = UnitSize
		}
		for {
			next := target + step
			if next < floor || next > ceiling {
				break
			}
			t, skip, err := timeAt(next)
			if err != nil {
				return 0, err
			}
			if skip || t != ts {
				break
			}
			target = next
		}
		return target / UnitSize, nil
	}
	if boundary == Lower {
		if right < 0 {
			return (ceiling + UnitSize) / UnitSize, nil
		}
		return right / UnitSize, nil
	}
	if left < 0 {
		return 0, nil
	}
	return left / UnitSize, nil
}

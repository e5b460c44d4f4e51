package delay

import (
	"math"
	"slices"
)

// farIndex remembers where in queue 0 the timer messages due after the
// window end lie, so that loading the next window reads only the parts of
// the queue that hold messages due in it. Messages are bucketed by slot into
// buckets of width ms (half the load window); a bucket keeps the smallest
// and largest queue offset of its far messages. A bucket is dropped once the
// window end passed its last millisecond (all its messages are loaded by
// then).
//
// Memory: one map entry (about 40 bytes) per bucket holding far messages:
// at most min(far messages, TimerMaxDelay / width + 2) entries, 8642 with
// the defaults (3 days, 30 s), whatever the backlog. Owned by the service
// goroutine.
type farIndex struct {
	width   int64
	buckets map[int64]offRange
	count   int64 // far messages (exact: +1 on add, -1 when a rescan loads one)
}

// offRange is an inclusive range of queue offsets.
type offRange struct{ lo, hi int64 }

const noFar = math.MaxInt64

func newFarIndex(width int64) farIndex {
	return farIndex{width: max(width, 1), buckets: map[int64]offRange{}}
}

func (f *farIndex) bucket(due int64) int64 {
	k := due / f.width
	if due < 0 && due%f.width != 0 {
		k--
	}
	return k
}

// add records a far message.
func (f *farIndex) add(e timerEntry) {
	k := f.bucket(e.due)
	r, ok := f.buckets[k]
	if !ok {
		r = offRange{e.off, e.off}
	}
	f.buckets[k] = offRange{min(r.lo, e.off), max(r.hi, e.off)}
	f.count++
}

// minOffset is the smallest offset of a far message, noFar if none.
func (f *farIndex) minOffset() int64 {
	m := int64(noFar)
	for _, r := range f.buckets {
		m = min(m, r.lo)
	}
	return m
}

// reaching returns the offset ranges, sorted and merged, of the buckets
// that start at or before wend.
func (f *farIndex) reaching(wend int64) []offRange {
	var rs []offRange
	for k, r := range f.buckets {
		if k <= f.bucket(wend) {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b offRange) int {
		switch {
		case a.lo < b.lo:
			return -1
		case a.lo > b.lo:
			return 1
		}
		return 0
	})
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// drop forgets the buckets whose last millisecond is at or before wend.
func (f *farIndex) drop(wend int64) {
	for k := range f.buckets {
		if (k+1)*f.width-1 <= wend {
			delete(f.buckets, k)
		}
	}
}

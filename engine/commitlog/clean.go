package commitlog

import (
	"fmt"

	"github.com/brokerlab/brokerlab/engine/segment"
)

// DeleteOldest removes up to max segments from the head of the log, oldest
// first, while expired(seg) says so; it stops at the first segment that is
// not expired, flushes the log first if the segment is not entirely flushed
// (flushes run without the read barrier and never touch flushed segments),
// and never removes the active (last) segment. A segment is taken out of the readers' view under the read
// barrier (readers in progress finish first); it is closed, unlinked and
// the directory fsynced after the barrier is released, so cleaning never
// makes readers wait for the disk. It returns how many segments went.
func (l *Log) DeleteOldest(max int, expired func(s *segment.Segment) bool) (int, error) {
	n := 0
	for n < max {
		segs := l.q.Segments()
		if len(segs) <= 1 || !expired(segs[0]) {
			return n, nil
		}
		if segs[0].End() > l.flushed.Load() {
			// Not flushed yet (async, with less than a flush's worth dirty
			// since): flush first, so that no flush is running on a segment
			// being deleted. If the flush fails the log is unwritable and
			// every later flush returns at once without touching a segment,
			// so the deletion is safe either way — and a full disk still
			// gets its space back.
			_, _ = l.flushAll()
		}
		l.rmu.Lock()
		seg := l.q.DetachFirst()
		l.rmu.Unlock()
		if seg == nil {
			return n, nil
		}
		if err := l.q.Delete(seg); err != nil {
			return n, fmt.Errorf("commitlog: delete oldest segment: %w", err)
		}
		n++
	}
	return n, nil
}

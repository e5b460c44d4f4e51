package commitlog

import (
	"fmt"

	"github.com/brokerlab/brokerlab/engine/segment"
)

// DeleteOldest removes up to max segments from the head of the log, oldest
// first, while expired(seg) says so; it stops at the first segment that is
// not expired or not entirely flushed, and never removes the active (last)
// segment. A segment is taken out of the readers' view under the read
// barrier (readers in progress finish first); it is closed, unlinked and
// the directory fsynced after the barrier is released, so cleaning never
// makes readers wait for the disk. It returns how many segments went.
func (l *Log) DeleteOldest(max int, expired func(s *segment.Segment) bool) (int, error) {
	n := 0
	for n < max {
		segs := l.q.Segments()
		if len(segs) <= 1 || segs[0].End() > l.flushed.Load() || !expired(segs[0]) {
			return n, nil
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

package commitlog

import (
	"fmt"

	"github.com/brokerlab/brokerlab/engine/segment"
)

// DeleteOldest removes up to max segments from the head of the log, oldest
// first, while expired(seg) says so; it stops at the first segment that is
// not expired and never removes the active (last) segment. Readers in
// progress finish first (removal takes the read barrier exclusively). It
// returns how many segments went.
func (l *Log) DeleteOldest(max int, expired func(s *segment.Segment) bool) (int, error) {
	n := 0
	for n < max {
		segs := l.q.Segments()
		if len(segs) <= 1 || !expired(segs[0]) {
			return n, nil
		}
		l.rmu.Lock()
		_, err := l.q.RemoveFirst()
		l.rmu.Unlock()
		if err != nil {
			return n, fmt.Errorf("commitlog: delete oldest segment: %w", err)
		}
		n++
	}
	return n, nil
}

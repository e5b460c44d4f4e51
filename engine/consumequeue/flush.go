package consumequeue

import (
	"fmt"
	"sort"
)

// Flush makes written units durable following RocketMQ's
// MappedFileQueue.flush(leastPages): only the one file holding the flushed
// position is considered per call; it is fdatasynced if it is full, or, with
// leastPages > 0, if at least leastPages 4 KiB pages were written since its
// last flush, or, with leastPages == 0, if anything was. A backlog spanning a
// file boundary therefore needs more calls (FlushConsumeQueueService calls
// once per queue every second; Close flushes everything).
func (q *Queue) Flush(leastPages int) error {
	q.flushMu.Lock()
	defer q.flushMu.Unlock()
	_, err := q.flushOnceLocked(leastPages)
	return err
}

// flushOnceLocked flushes at most one file; progressed reports whether the
// flushed position moved. REQUIRES: q.flushMu held.
func (q *Queue) flushOnceLocked(leastPages int) (progressed bool, err error) {
	fp := q.flushedPos.Load()
	wp := q.writePos.Load()
	if fp >= wp {
		return false, nil
	}
	segs := q.snapshot()
	seg := findSegment(segs, fp, q.fileSize)
	if seg == nil {
		// The flushed position is in a hole (skipped or removed files):
		// continue at the next file.
		i := sort.Search(len(segs), func(i int) bool { return segs[i].start > fp })
		if i == len(segs) || segs[i].start > wp {
			return false, nil
		}
		seg = segs[i]
		fp = seg.start
		q.flushedPos.Store(fp)
	}
	write := min(wp-seg.start, q.fileSize)
	flushed := fp - seg.start
	var able bool
	switch {
	case write == q.fileSize:
		able = flushed < write
	case leastPages > 0:
		able = write/pageSize-flushed/pageSize >= int64(leastPages)
	default:
		able = write > flushed
	}
	if !able {
		return false, nil
	}
	if !seg.acquire() {
		return false, nil // removed meanwhile
	}
	err = seg.f.Datasync()
	_ = seg.release()
	if err != nil {
		return false, fmt.Errorf("consumequeue: datasync %s: %w", seg.path, err)
	}
	q.flushedPos.Store(seg.start + write)
	return true, nil
}

// flushAllLocked flushes every written unit. REQUIRES: q.flushMu held.
func (q *Queue) flushAllLocked() error {
	for i := 0; i <= len(q.snapshot())+1; i++ {
		progressed, err := q.flushOnceLocked(0)
		if err != nil {
			return err
		}
		if !progressed {
			return nil
		}
	}
	return nil
}

// FlushAll flushes every written unit, whatever the file count.
func (q *Queue) FlushAll() error {
	q.flushMu.Lock()
	defer q.flushMu.Unlock()
	return q.flushAllLocked()
}

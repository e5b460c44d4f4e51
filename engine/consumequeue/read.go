package consumequeue

import (
	"fmt"
	"sync"
)

// readChunkBytes is the read buffer size: RocketMQ's maxFilterMessageSize
// (16000 bytes = 800 units), the most a pull scans in one go.
const readChunkBytes = 16000

var readBufPool = sync.Pool{New: func() any { b := make([]byte, readChunkBytes); return &b }}

// Get returns the unit at queueOffset. It returns ErrNotFound at or beyond
// MaxOffset and ErrRemoved below MinOffset or when the file is gone.
func (q *Queue) Get(queueOffset int64) (Unit, error) {
	var one [1]Unit
	us, err := q.Read(queueOffset, 1, one[:0])
	if err != nil {
		return Unit{}, err
	}
	if len(us) == 0 {
		return Unit{}, fmt.Errorf("%w: %s/%d offset %d (max %d)", ErrNotFound, q.topic, q.queueID, queueOffset, q.MaxOffset())
	}
	return us[0], nil
}

// Read appends to buf[:0] up to max units starting at queue offset from,
// staying inside the file that holds from (RocketMQ
// travelCqFileNumWhenGetMessage = 1), and returns the result. It returns
// an empty slice when from >= MaxOffset, and ErrRemoved when from is below
// MinOffset or its file has been removed (continue at RollNextFile(from)).
// Blank units are returned as they are; callers skip them.
func (q *Queue) Read(from int64, max int, buf []Unit) ([]Unit, error) {
	buf = buf[:0]
	if max <= 0 {
		return buf, nil
	}
	wp := q.writePos.Load() // before the segment list: a published position's file is listed
	pos := from * UnitSize
	if from < 0 || pos < q.minLogic.Load() {
		return buf, fmt.Errorf("%w: %s/%d offset %d below min %d", ErrRemoved, q.topic, q.queueID, from, q.MinOffset())
	}
	if pos >= wp {
		return buf, nil
	}
	seg := findSegment(q.snapshot(), pos, q.fileSize)
	if seg == nil || !seg.acquire() {
		return buf, fmt.Errorf("%w: %s/%d offset %d", ErrRemoved, q.topic, q.queueID, from)
	}
	defer seg.release()
	end := min(wp, seg.start+q.fileSize)
	if want := pos + int64(max)*UnitSize; want < end {
		end = want
	}
	return readUnits(seg, pos, end, buf)
}

// readUnits appends the units in the logical byte range [from, to) of seg.
// REQUIRES: a reference on seg.
func readUnits(seg *segment, from, to int64, buf []Unit) ([]Unit, error) {
	bp := readBufPool.Get().(*[]byte)
	defer readBufPool.Put(bp)
	chunk := *bp
	for pos := from; pos < to; {
		n := min(to-pos, int64(len(chunk)))
		if _, err := seg.f.ReadAt(chunk[:n], pos-seg.start); err != nil {
			return buf, fmt.Errorf("consumequeue: read %s at %d: %w", seg.path, pos-seg.start, err)
		}
		for i := int64(0); i < n; i += UnitSize {
			buf = append(buf, DecodeUnit(chunk[i:i+UnitSize]))
		}
		pos += n
	}
	return buf, nil
}

// readUnitAt reads the single unit at logical byte pos of seg.
// REQUIRES: a reference on seg.
func readUnitAt(seg *segment, pos int64) (Unit, error) {
	var b [UnitSize]byte
	if _, err := seg.f.ReadAt(b[:], pos-seg.start); err != nil {
		return Unit{}, fmt.Errorf("consumequeue: read %s at %d: %w", seg.path, pos-seg.start, err)
	}
	return DecodeUnit(b[:]), nil
}

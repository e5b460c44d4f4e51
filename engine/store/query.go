package store

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/record"
)

// Boundary chooses which end of a run of equal store times
// GetOffsetInQueueByTime returns (RocketMQ BoundaryType).
type Boundary = consumequeue.Boundary

// Boundaries.
const (
	BoundaryLower = consumequeue.Lower
	BoundaryUpper = consumequeue.Upper
)

// GetMaxOffsetInQueue is the queue's next offset (0 for an unknown queue).
func (s *Store) GetMaxOffsetInQueue(topic string, queueID int32) int64 {
	q, err := s.cq.Queue(topic, queueID, false)
	if err != nil {
		return 0
	}
	return q.MaxOffset()
}

// GetMinOffsetInQueue is the queue's first live offset (-1 for an unknown
// queue, as RocketMQ).
func (s *Store) GetMinOffsetInQueue(topic string, queueID int32) int64 {
	q, err := s.cq.Queue(topic, queueID, false)
	if err != nil {
		return -1
	}
	return q.MinOffset()
}

// storeTimeAt reads the STORETIMESTAMP of the record at phy.
func (s *Store) storeTimeAt(phy int64, size int32) (int64, error) {
	var b [128]byte
	n := min(int(size), len(b))
	if n < record.PosBornHost {
		return 0, s.corrupt(phy, fmt.Errorf("record size %d", size))
	}
	if _, err := s.log.ReadAt(b[:n], phy); err != nil {
		return 0, err
	}
	return record.PeekStoreTimestamp(b[:n])
}

// GetOffsetInQueueByTime returns the queue offset of the message stored at
// ts (SEARCH_OFFSET_BY_TIMESTAMP): a binary search over the units comparing
// the referenced records' store times. Lower gives the first message stored
// at or after ts, Upper the last stored at or before it. An unknown queue
// gives 0.
func (s *Store) GetOffsetInQueueByTime(topic string, queueID int32, ts int64, boundary Boundary) (int64, error) {
	q, err := s.cq.Queue(topic, queueID, false)
	if err != nil {
		return 0, nil
	}
	return q.SearchByTime(ts, boundary, s.storeTimeAt)
}

// GetEarliestMessageTime is the store time of the queue's first live
// message (ErrNoMessage if it has none).
func (s *Store) GetEarliestMessageTime(topic string, queueID int32) (int64, error) {
	q, err := s.cq.Queue(topic, queueID, false)
	if err != nil {
		return 0, fmt.Errorf("%w: %s/%d", ErrNoMessage, topic, queueID)
	}
	for off := q.MinOffset(); off < q.MaxOffset(); off++ {
		u, err := q.Get(off)
		if err != nil {
			return 0, fmt.Errorf("store: earliest message of %s/%d: %w", topic, queueID, err)
		}
		if u.IsBlank() || u.PhyOffset < s.log.MinOffset() {
			continue
		}
		return s.storeTimeAt(u.PhyOffset, u.Size)
	}
	return 0, fmt.Errorf("%w: %s/%d is empty", ErrNoMessage, topic, queueID)
}

// GetMessageStoreTimestamp is the store time of the message at a queue
// offset.
func (s *Store) GetMessageStoreTimestamp(topic string, queueID int32, queueOffset int64) (int64, error) {
	q, err := s.cq.Queue(topic, queueID, false)
	if err != nil {
		return 0, fmt.Errorf("%w: %s/%d", ErrNoMessage, topic, queueID)
	}
	u, err := q.Get(queueOffset)
	if err != nil || u.IsBlank() {
		return 0, fmt.Errorf("%w: %s/%d offset %d: %v", ErrNoMessage, topic, queueID, queueOffset, err)
	}
	return s.storeTimeAt(u.PhyOffset, u.Size)
}

// CommitLogEarliestTime is the store time of the commit log's first record
// (getEarliestMessageTime()).
func (s *Store) CommitLogEarliestTime() (int64, error) {
	minOff := s.log.MinOffset()
	if minOff >= s.log.MaxOffset() {
		return 0, ErrNoMessage
	}
	_, rec, err := s.log.ReadRecord(minOff, nil)
	if err != nil {
		return 0, err
	}
	return rec.StoreTimestamp, nil
}

// LookMessageByOffset returns the record stored at a commit-log offset
// (lookMessageByOffset; VIEW_MESSAGE_BY_ID after decoding the offset msg
// id): its bytes and the decoded record, which aliases them. The body CRC is
// checked: a corrupt record is a *CorruptionError, never returned.
func (s *Store) LookMessageByOffset(phyOffset int64) ([]byte, record.Record, error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		return nil, record.Record{}, ErrClosed
	}
	if end := s.reputEnd(); phyOffset < s.log.MinOffset() || phyOffset >= end {
		return nil, record.Record{}, fmt.Errorf("%w at offset %d (readable [%d,%d))", ErrNoMessage, phyOffset, s.log.MinOffset(), end)
	}
	b, rec, err := s.log.ReadRecord(phyOffset, nil)
	if errors.Is(err, record.ErrBlank) {
		return nil, record.Record{}, fmt.Errorf("%w at offset %d (end of segment)", ErrNoMessage, phyOffset)
	}
	if err != nil {
		return nil, record.Record{}, err
	}
	if rec, err = record.Decode(b, true); err != nil || rec.PhysicalOffset != phyOffset {
		if err == nil {
			err = fmt.Errorf("record says physical offset %d", rec.PhysicalOffset)
		}
		return nil, record.Record{}, s.corrupt(phyOffset, err)
	}
	return b, rec, nil
}

// LookMessageByMsgID decodes an offset message id and returns the record at
// its commit-log offset (VIEW_MESSAGE_BY_ID).
func (s *Store) LookMessageByMsgID(msgID string) ([]byte, record.Record, error) {
	_, off, err := record.ParseOffsetMsgID(msgID)
	if err != nil {
		return nil, record.Record{}, fmt.Errorf("store: %w", err)
	}
	return s.LookMessageByOffset(off)
}

// QueryResult is RocketMQ's QueryMessageResult.
type QueryResult struct {
	// Buffer holds the matching records concatenated; Offsets and Sizes
	// locate them (commit-log offsets, record sizes).
	Buffer  []byte
	Offsets []int64
	Sizes   []int32
	// IndexLastUpdateTimestamp / IndexLastUpdatePhyOffset describe the
	// newest index file.
	IndexLastUpdateTimestamp int64
	IndexLastUpdatePhyOffset int64
}

// QueryMessage returns up to maxNum messages of topic whose KEYS or UNIQ_KEY
// is key and whose store time lies in [begin, end] ms (QUERY_MESSAGE),
// newest first. Unlike RocketMQ the store re-checks topic and key, so hash
// collisions are not returned.
func (s *Store) QueryMessage(topic, key string, maxNum int, begin, end int64) (QueryResult, error) {
	s.life.RLock()
	defer s.life.RUnlock()
	var res QueryResult
	if s.closed.Load() {
		return res, ErrClosed
	}
	if s.idx == nil {
		return res, fmt.Errorf("%w: the message index is disabled", ErrNoMessage)
	}
	offs, lastTS, lastPhy, err := s.idx.Query(topic, key, maxNum, begin, end)
	if err != nil {
		return res, fmt.Errorf("store: query index: %w", err)
	}
	res.IndexLastUpdateTimestamp, res.IndexLastUpdatePhyOffset = lastTS, lastPhy
	seen := make(map[int64]bool, len(offs))
	for _, off := range offs {
		if seen[off] || off < s.log.MinOffset() {
			continue
		}
		seen[off] = true
		b, rec, err := s.log.ReadRecord(off, nil)
		if err != nil {
			continue // removed, or not a record: the index only hints
		}
		if rec, err = record.Decode(b, true); err != nil || rec.PhysicalOffset != off {
			continue
		}
		if string(rec.Topic) != topic || !hasKey(&rec, key) || off < s.deletedBelow(topic) {
			continue
		}
		res.Buffer = append(res.Buffer, b...)
		res.Offsets = append(res.Offsets, off)
		res.Sizes = append(res.Sizes, rec.TotalSize)
	}
	return res, nil
}

func hasKey(rec *record.Record, key string) bool {
	if k, ok := rec.Property(record.PropertyUniqKey); ok && string(k) == key {
		return true
	}
	if ks, ok := rec.Property(record.PropertyKeys); ok {
		for _, k := range bytes.Split(ks, []byte(record.KeySeparator)) {
			if string(k) == key {
				return true
			}
		}
	}
	return false
}

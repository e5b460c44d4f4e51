package store

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/record"
)

// GetMessageStatus is RocketMQ's GetMessageStatus.
type GetMessageStatus int

// Statuses, named as RocketMQ's.
const (
	Found GetMessageStatus = iota
	NoMatchedMessage
	MessageWasRemoving
	OffsetFoundNull
	OffsetOverflowBadly
	OffsetOverflowOne
	OffsetTooSmall
	NoMatchedLogicQueue
	NoMessageInQueue
)

var getStatusNames = [...]string{
	Found:               "FOUND",
	NoMatchedMessage:    "NO_MATCHED_MESSAGE",
	MessageWasRemoving:  "MESSAGE_WAS_REMOVING",
	OffsetFoundNull:     "OFFSET_FOUND_NULL",
	OffsetOverflowBadly: "OFFSET_OVERFLOW_BADLY",
	OffsetOverflowOne:   "OFFSET_OVERFLOW_ONE",
	OffsetTooSmall:      "OFFSET_TOO_SMALL",
	NoMatchedLogicQueue: "NO_MATCHED_LOGIC_QUEUE",
	NoMessageInQueue:    "NO_MESSAGE_IN_QUEUE",
}

func (s GetMessageStatus) String() string {
	if int(s) >= 0 && int(s) < len(getStatusNames) {
		return getStatusNames[s]
	}
	return fmt.Sprintf("GetMessageStatus(%d)", int(s))
}

// MessageRef locates one message of a GetResult.
type MessageRef struct {
	QueueOffset int64
	PhysOffset  int64
	// Pos and Size delimit the record in GetResult.Buffer.
	Pos  int
	Size int32
}

// GetResult is RocketMQ's GetMessageResult.
type GetResult struct {
	Status GetMessageStatus
	// NextBeginOffset is where the consumer should pull next.
	NextBeginOffset int64
	// MinOffset and MaxOffset are the queue's bounds when the pull began.
	MinOffset, MaxOffset int64
	// Buffer holds the stored records, concatenated, exactly as in the
	// commit log (the pull response body); Messages delimit them.
	Buffer   []byte
	Messages []MessageRef
	// SuggestPullingFromSlave is set when the consumer lags by more than
	// the in-memory share of RAM.
	SuggestPullingFromSlave bool
}

// MessageFilter selects messages of a pull (RocketMQ MessageFilter).
// Implementations must be safe for concurrent use.
type MessageFilter interface {
	// MatchesConsumeQueue decides on the unit's tags code alone.
	MatchesConsumeQueue(tagsCode int64) bool
	// MatchesCommitLog decides on the whole stored record (SQL92-style
	// filters); tag filters return true.
	MatchesCommitLog(rec []byte) bool
}

// UnitsOnlyFilter is implemented by a MessageFilter that can say it
// decides on consume-queue units alone (MatchesCommitLog always true), so
// GetMessage reads the matching records with contiguous reads instead of
// one read per record. *TagFilter needs no such method.
type UnitsOnlyFilter interface {
	UnitsOnly() bool
}

// filterNeedsRecords reports whether f must see each record as it is read.
func filterNeedsRecords(f MessageFilter) bool {
	switch f := f.(type) {
	case nil:
		return false
	case *TagFilter:
		return false
	case UnitsOnlyFilter:
		return !f.UnitsOnly()
	}
	return true
}

var unitBufPool = sync.Pool{New: func() any { b := make([]consumequeue.Unit, 0, 1024); return &b }}

// GetMessage is DefaultMessageStore.getMessage (rocketmq-store.md §4.3):
// the status table, one consume-queue file per call, pull caps of
// MaxTransferCount/BytesOnMessageInMemory (32 / 256 KiB) when the data is
// within AccessMessageInMemoryMaxRatio of RAM from the log's end and
// ...InDisk (8 / 64 KiB) otherwise, tag filtering on the units' tags
// codes. maxBytes is maxTotalMsgSize (at least 100 bytes, at most 128
// MiB); filter may be nil.
//
// A record that fails verification (VerifyCRCOnGet) is never served: the
// pull ends before it, or, when it would be the first message, GetMessage
// returns a *CorruptionError naming segment and offset. Other errors are
// read failures; the result is then only a status snapshot.
func (s *Store) GetMessage(group, topic string, queueID int32, offset int64, maxMsgNums, maxBytes int, filter MessageFilter) (GetResult, error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		return GetResult{}, ErrClosed
	}
	s.st.gets.Add(1)
	res, err := s.getMessage(topic, queueID, offset, maxMsgNums, maxBytes, filter)
	s.st.getStatus[res.Status].Add(1)
	s.st.getMessages.Add(uint64(len(res.Messages)))
	s.st.getBytes.Add(uint64(len(res.Buffer)))
	return res, err
}

func (s *Store) getMessage(topic string, queueID int32, offset int64, maxMsgNums, maxBytes int, filter MessageFilter) (GetResult, error) {
	var res GetResult
	q, err := s.cq.Queue(topic, queueID, false)
	if errors.Is(err, consumequeue.ErrNoQueue) {
		// The store keeps no topic configs (they are the broker's): a queue
		// never written is unknown to it, however many queues its topic has.
		res.Status = NoMatchedLogicQueue
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("store: get %s/%d: %w", topic, queueID, err)
	}
	minOff, maxOff := q.MinOffset(), q.MaxOffset()
	res.MinOffset, res.MaxOffset = minOff, maxOff
	switch {
	case maxOff == 0:
		res.Status, res.NextBeginOffset = NoMessageInQueue, 0
		return res, nil
	case offset < minOff:
		res.Status, res.NextBeginOffset = OffsetTooSmall, minOff
		return res, nil
	case offset == maxOff:
		res.Status, res.NextBeginOffset = OffsetOverflowOne, offset
		return res, nil
	case offset > maxOff:
		res.Status, res.NextBeginOffset = OffsetOverflowBadly, maxOff
		return res, nil
	}

	maxMsgNums = max(maxMsgNums, 1)
	maxFilter := max(s.cfg.MaxFilterMessageSize, maxMsgNums*consumequeue.UnitSize)
	maxPull := int64(min(max(maxBytes, 100), maxPullMsgSize))
	// Units are read in growing chunks, all from the consume-queue file
	// holding offset (travelCqFileNumWhenGetMessage = 1), at most
	// maxFilter bytes' worth.
	upf := int64(s.cfg.ConsumeQueue.UnitsPerFile)
	limit := min(int64((maxFilter+consumequeue.UnitSize-1)/consumequeue.UnitSize), (offset/upf+1)*upf-offset, maxOff-offset)
	chunk := min(limit, int64(max(maxMsgNums, s.cfg.MaxTransferCountOnMessageInMemory))+8)
	bp := unitBufPool.Get().(*[]consumequeue.Unit)
	defer unitBufPool.Put(bp)
	units, err := q.Read(offset, int(chunk), *bp)
	if errors.Is(err, consumequeue.ErrRemoved) {
		res.Status, res.NextBeginOffset = OffsetFoundNull, q.RollNextFile(offset)
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("store: read consume queue %s/%d at %d: %w", topic, queueID, offset, err)
	}

	maxPhy := s.log.MaxOffset()
	memLimit := int64(float64(s.totalMem) * float64(s.cfg.AccessMessageInMemoryMaxRatio) / 100)
	// A filter that looks at records is applied as each one is read; a tag
	// filter (or none) decides on the units alone, so the records are read
	// afterwards, contiguous ones with one read.
	perRecord := filterNeedsRecords(filter)
	res.Status = NoMatchedMessage
	res.NextBeginOffset = offset
	nextPhyFileStart := int64(math.MinInt64)
	maxPhyPulling := int64(0)
	var total int64
	var i int64 // units consumed
scan:
	for {
		for _, u := range units {
			qo := offset + i
			i++
			if qo >= maxOff || (qo-offset)*consumequeue.UnitSize >= int64(maxFilter) {
				break scan
			}
			inMem := maxPhy-u.PhyOffset <= memLimit
			if s.batchFull(int64(u.Size), maxMsgNums, maxPull, total, len(res.Messages), inMem) || total >= maxPull {
				break scan
			}
			maxPhyPulling = u.PhyOffset
			res.NextBeginOffset = qo + 1
			if u.IsBlank() {
				continue
			}
			if nextPhyFileStart != math.MinInt64 && u.PhyOffset < nextPhyFileStart {
				continue
			}
			if filter != nil && !filter.MatchesConsumeQueue(u.TagsCode) {
				if total == 0 {
					res.Status = NoMatchedMessage
				}
				continue
			}
			if u.PhyOffset < s.log.MinOffset() {
				if total == 0 {
					res.Status = MessageWasRemoving
				}
				nextPhyFileStart = s.log.RollNextFile(u.PhyOffset)
				continue
			}
			ref := MessageRef{QueueOffset: qo, PhysOffset: u.PhyOffset, Pos: int(total), Size: u.Size}
			if perRecord {
				pos := len(res.Buffer)
				res.Buffer = growBytes(res.Buffer, int(u.Size), maxPull)
				rec := res.Buffer[pos:]
				if err := s.readRecords(rec, []MessageRef{ref}, topic, queueID); err != nil {
					s.noteCorrupt(err)
					res.Buffer = res.Buffer[:pos]
					if len(res.Messages) > 0 {
						res.NextBeginOffset = qo
						break scan
					}
					return res, err
				}
				if !filter.MatchesCommitLog(rec) {
					res.Buffer = res.Buffer[:pos]
					if total == 0 {
						res.Status = NoMatchedMessage
					}
					continue
				}
			}
			res.Messages = append(res.Messages, ref)
			total += int64(u.Size)
			res.Status = Found
			nextPhyFileStart = math.MinInt64
		}
		*bp = units[:0]
		if i >= limit || len(units) == 0 {
			break
		}
		chunk = min(limit-i, 4*chunk)
		if units, err = q.Read(offset+i, int(chunk), *bp); err != nil {
			break // the file went away under us: serve what we have
		}
	}
	*bp = units[:0]
	res.SuggestPullingFromSlave = maxPhy-maxPhyPulling > memLimit
	if perRecord || len(res.Messages) == 0 {
		return res, nil
	}
	return s.readSelected(res, total, topic, queueID)
}

// readSelected reads the records the units selected into one buffer, each
// run of contiguous records with one read, and verifies them. A record
// that cannot be read or fails verification ends the pull before it; if it
// is the first one, its error is returned (a removed segment reads as
// MESSAGE_WAS_REMOVING).
func (s *Store) readSelected(res GetResult, total int64, topic string, queueID int32) (GetResult, error) {
	res.Buffer = make([]byte, total)
	msgs := res.Messages
	for i := 0; i < len(msgs); {
		j, end := i+1, msgs[i].PhysOffset+int64(msgs[i].Size)
		for j < len(msgs) && msgs[j].PhysOffset == end {
			end += int64(msgs[j].Size)
			j++
		}
		run := msgs[i:j]
		buf := res.Buffer[run[0].Pos : run[0].Pos+int(end-run[0].PhysOffset)]
		if err := s.readRecords(buf, run, topic, queueID); err != nil {
			// Find the first bad record of the run by reading them one by one.
			k := i
			for ; k < j; k++ {
				m := msgs[k]
				if err = s.readRecords(res.Buffer[m.Pos:m.Pos+int(m.Size)], msgs[k:k+1], topic, queueID); err != nil {
					break
				}
			}
			s.noteCorrupt(err)
			if k == 0 {
				if errors.Is(err, commitlog.ErrNoRecord) && msgs[0].PhysOffset < s.log.MinOffset() {
					res.Status, res.NextBeginOffset = MessageWasRemoving, msgs[0].QueueOffset
					res.Messages, res.Buffer = nil, nil
					return res, nil
				}
				res.Messages, res.Buffer = nil, nil
				return res, err
			}
			res.NextBeginOffset = msgs[k].QueueOffset
			res.Messages = msgs[:k]
			res.Buffer = res.Buffer[:msgs[k].Pos]
			return res, nil
		}
		i = j
	}
	return res, nil
}

// noteCorrupt counts and logs a corrupt record that was refused.
func (s *Store) noteCorrupt(err error) {
	if IsCorruption(err) {
		s.st.getCorrupt.Add(1)
		s.cfg.Logger.Error("store: refusing to serve a corrupt record", "err", err)
	}
}

// readRecords reads the contiguous records refs into buf (their bytes, in
// order) and, with VerifyCRCOnGet, checks each one.
func (s *Store) readRecords(buf []byte, refs []MessageRef, topic string, queueID int32) error {
	if _, err := s.log.ReadAt(buf, refs[0].PhysOffset); err != nil {
		return fmt.Errorf("store: read records of %s/%d from queue offset %d at %d: %w", topic, queueID, refs[0].QueueOffset, refs[0].PhysOffset, err)
	}
	if !s.cfg.VerifyCRCOnGet {
		return nil
	}
	p := 0
	for _, m := range refs {
		if err := s.verify(buf[p:p+int(m.Size)], m.PhysOffset, topic, queueID, m.QueueOffset); err != nil {
			return err
		}
		p += int(m.Size)
	}
	return nil
}

// batchFull is isTheBatchFull: never for the first message; then the
// caller's count and byte caps, then the in-memory or on-disk transfer caps.
func (s *Store) batchFull(sizePy int64, maxMsgNums int, maxPull, total int64, count int, inMem bool) bool {
	if total == 0 || count == 0 {
		return false
	}
	if count+1 > maxMsgNums || total+sizePy > maxPull {
		return true
	}
	if inMem {
		return total+sizePy > int64(s.cfg.MaxTransferBytesOnMessageInMemory) ||
			count > s.cfg.MaxTransferCountOnMessageInMemory-1
	}
	return total+sizePy > int64(s.cfg.MaxTransferBytesOnMessageInDisk) ||
		count > s.cfg.MaxTransferCountOnMessageInDisk-1
}

// growBytes extends b by n bytes, growing capacity geometrically up to
// limit+n.
func growBytes(b []byte, n int, limit int64) []byte {
	if len(b)+n <= cap(b) {
		return b[:len(b)+n]
	}
	c := max(2*cap(b), len(b)+n, 4096)
	c = int(min(int64(c), max(limit, int64(len(b)+n))))
	c = max(c, len(b)+n)
	nb := make([]byte, len(b)+n, c)
	copy(nb, b)
	return nb
}

// verify checks that rec is the intact record the unit names.
func (s *Store) verify(rec []byte, phys int64, topic string, queueID int32, queueOffset int64) error {
	r, err := record.Decode(rec, true)
	switch {
	case err != nil:
	case r.PhysicalOffset != phys:
		err = fmt.Errorf("record says physical offset %d", r.PhysicalOffset)
	case r.QueueID != queueID || r.QueueOffset != queueOffset || string(r.Topic) != topic:
		err = fmt.Errorf("record is %s/%d offset %d, the consume queue says %s/%d offset %d",
			r.Topic, r.QueueID, r.QueueOffset, topic, queueID, queueOffset)
	default:
		return nil
	}
	return s.corrupt(phys, err)
}

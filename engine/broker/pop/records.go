package pop

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/engine/record"
)

// Tags of the revive topic's records (PopAckConstants).
const (
	ckTag       = "ck"
	ackTag      = "ack"
	batchAckTag = "bAck"
)

// ckRecord is a checkpoint record's body (PopCheckPoint as fastjson writes
// it): the messages of one pop of one queue, which come back after
// popTime+invisibleTime unless acked.
type ckRecord struct {
	StartOffset   int64   `json:"so"`
	PopTime       int64   `json:"pt"`
	InvisibleTime int64   `json:"it"`
	BitMap        int32   `json:"bm"`
	Num           int     `json:"n"`
	QueueID       int32   `json:"q"`
	Topic         string  `json:"t"` // the topic read: the consumer's topic or its retry topic
	Group         string  `json:"c"`
	ReviveOffset  int64   `json:"ro"`
	OffsetDiff    []int64 `json:"d"` // each message's offset - so
	BrokerName    string  `json:"bn"`
}

// ackRecord is an ack record's body (AckMsg; BatchAckMsg adds aol, the
// acked offsets, in place of ao).
type ackRecord struct {
	AckOffset   int64   `json:"ao"`
	AckOffsets  []int64 `json:"aol,omitempty"`
	StartOffset int64   `json:"so"`
	Group       string  `json:"c"`
	Topic       string  `json:"t"`
	QueueID     int32   `json:"q"`
	PopTime     int64   `json:"pt"`
	BrokerName  string  `json:"bn"`
	// FIFOCommit is, for a FIFO ack, the group's consumer offset of the
	// queue after the ack (a brokerlab field: FIFO acks are logged so a
	// crash cannot undo them).
	FIFOCommit int64 `json:"fo,omitempty"`
}

// queueKey names one group's consumption of one queue of a topic.
type queueKey struct {
	group, topic string // topic: the one read (a retry topic for retry messages)
	queueID      int32
}

// ckKey names a checkpoint: a queue and the pop's first offset and time.
type ckKey struct {
	queueKey
	startOffset, popTime int64
}

// checkpoint is a pending checkpoint: messages popped and not yet all
// acked or revived.
type checkpoint struct {
	ckKey
	invisible int64   // ms
	offsets   []int64 // the messages' queue offsets, ascending
	acked     uint64  // bit i: offsets[i] acked
	reviveQid int32
	logOffset int64 // the ck record's offset in its revive queue
}

func (c *checkpoint) expiry() int64 { return c.popTime + c.invisible }

func (c *checkpoint) index(offset int64) int {
	for i, o := range c.offsets {
		if o == offset {
			return i
		}
	}
	return -1
}

func (c *checkpoint) allAcked() bool { return c.acked == 1<<len(c.offsets)-1 }

func (c *checkpoint) record(brokerName string) ckRecord {
	r := ckRecord{StartOffset: c.startOffset, PopTime: c.popTime, InvisibleTime: c.invisible, Num: len(c.offsets),
		QueueID: c.queueID, Topic: c.topic, Group: c.group, BrokerName: brokerName}
	r.OffsetDiff = make([]int64, len(c.offsets))
	for i, o := range c.offsets {
		r.OffsetDiff[i] = o - c.startOffset
	}
	return r
}

// fromRecord is the pending checkpoint a ck record describes.
func fromRecord(r ckRecord, reviveQid int32, logOffset int64) (*checkpoint, bool) {
	if r.Num <= 0 || r.Num > maxBatch || len(r.OffsetDiff) > r.Num {
		return nil, false
	}
	c := &checkpoint{ckKey: ckKey{queueKey{r.Group, r.Topic, r.QueueID}, r.StartOffset, r.PopTime},
		invisible: r.InvisibleTime, reviveQid: reviveQid, logOffset: logOffset}
	for i := range r.Num {
		d := int64(i)
		if len(r.OffsetDiff) == r.Num {
			d = r.OffsetDiff[i]
		}
		c.offsets = append(c.offsets, r.StartOffset+d)
	}
	return c, true
}

// putRevive stores one record in revive queue rq. Callers hold
// s.rq[rq].mu when the record's offset orders their bookkeeping.
func (s *Service) putRevive(ctx context.Context, rq int32, tag string, body any, keys string) (PutResult, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return PutResult{}, fmt.Errorf("pop: encode %s record: %w", tag, err)
	}
	props := []byte{}
	props = record.AppendProperty(props, record.PropertyTags, tag)
	if keys != "" {
		props = record.AppendProperty(props, record.PropertyKeys, keys)
	}
	host := s.storeHost()
	m := &record.Message{Topic: s.reviveTopic, QueueID: rq, Body: b, Properties: string(props),
		BornTimestamp: s.now().UnixMilli(), BornHost: host, StoreHost: host}
	res, err := s.deps.Store.Put(ctx, m)
	if !res.Stored {
		return res, fmt.Errorf("%w: %s record in %s/%d: %s: %v", ErrStore, tag, s.reviveTopic, rq, res.Status, err)
	}
	if q := &s.rq[rq]; res.QueueOffset+1 > q.next {
		q.next = res.QueueOffset + 1
	}
	return res, nil
}

func ckKeys(k ckKey) string {
	return k.topic + k.group + strconv.Itoa(int(k.queueID)) + strconv.FormatInt(k.startOffset, 10) + strconv.FormatInt(k.popTime, 10)
}

package pop

import (
	"context"
	"fmt"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// Ack acknowledges the message of a receipt handle: once Ack returns nil
// the ack is stored and the message is never delivered to the group
// again. An unknown, expired or already acked handle is ErrInvalidHandle.
func (s *Service) Ack(group, topic, handle string) error {
	h, err := s.checkHandle(group, topic, handle)
	if err != nil {
		return err
	}
	return s.ackOffsets(context.Background(), group, topic, h, []int64{h.Offset})
}

// checkHandle parses a handle for group's use on topic.
func (s *Service) checkHandle(group, topic, handle string) (Handle, error) {
	if !s.running() {
		return Handle{}, ErrNotStarted
	}
	if group == "" || topic == "" {
		return Handle{}, fmt.Errorf("%w: group and topic are required", ErrBadRequest)
	}
	h, err := ParseHandle(handle)
	if err != nil {
		return h, err
	}
	if h.BrokerName != s.cfg.BrokerName {
		return h, fmt.Errorf("%w: handle of broker %q", ErrInvalidHandle, h.BrokerName)
	}
	return h, nil
}

// readTopic is the topic a handle's message was read from.
func readTopic(group, topic string, h Handle) string {
	if h.Retry {
		return RetryTopic(group, topic)
	}
	return topic
}

// ackOffsets acks offsets of the pop h names (one ack record for one
// offset, a batch-ack record for more). Offsets not (or no longer) in
// flight under it make the whole call ErrInvalidHandle when it is a single
// one and are skipped in a batch.
func (s *Service) ackOffsets(ctx context.Context, group, topic string, h Handle, offsets []int64) error {
	k := queueKey{group, readTopic(group, topic, h), h.QueueID}
	if h.FIFO() {
		return s.ackFIFO(ctx, k, h, offsets)
	}
	key := ckKey{k, h.StartOffset, h.PopTime}
	now := s.now().UnixMilli()
	s.mu.Lock()
	ck := s.cks[key]
	if ck == nil || now >= ck.expiry() {
		s.mu.Unlock()
		return fmt.Errorf("%w: no message in flight under it (acked, expired or revived)", ErrInvalidHandle)
	}
	var bits uint64
	var acks []int64
	for _, off := range offsets {
		if i := ck.index(off); i >= 0 && ck.acked&(1<<i) == 0 && bits&(1<<i) == 0 {
			bits |= 1 << i
			acks = append(acks, off)
		}
	}
	if len(acks) == 0 {
		s.mu.Unlock()
		return fmt.Errorf("%w: offset not in flight under it", ErrInvalidHandle)
	}
	s.acking++
	rq := ck.reviveQid
	s.mu.Unlock()

	rec := ackRecord{AckOffset: acks[0], StartOffset: h.StartOffset, Group: group, Topic: k.topic, QueueID: k.queueID,
		PopTime: h.PopTime, BrokerName: s.cfg.BrokerName}
	tag := ackTag
	if len(acks) > 1 {
		tag, rec.AckOffset, rec.AckOffsets = batchAckTag, 0, acks
	}
	q := &s.rq[rq]
	q.mu.Lock()
	_, err := s.putRevive(ctx, rq, tag, rec, "")
	q.mu.Unlock()

	s.mu.Lock()
	s.acking--
	if err == nil {
		ck.acked |= bits
		if ck.allAcked() {
			delete(s.cks, key)
		}
	}
	s.mu.Unlock()
	if err == nil {
		s.kickRevive() // the revive offset may move past a finished checkpoint
	}
	return err
}

// AckBatch acks messages of one pop of one queue by their offsets
// (BATCH_ACK_MESSAGE): h is any of the pop's handles. Offsets no longer
// in flight are skipped; it fails only when none is.
func (s *Service) AckBatch(group, topic string, h Handle, offsets []int64) error {
	if !s.running() {
		return ErrNotStarted
	}
	return s.ackOffsets(context.Background(), group, topic, h, offsets)
}

// ChangeInvisible makes the message of handle invisible for d from now
// and returns its new handle; the old handle is no longer valid. As Java
// does, a new checkpoint of the one message is stored first and the old
// handle is acked after, so a crash between the two can deliver the
// message again but never loses it.
func (s *Service) ChangeInvisible(group, topic, handle string, d time.Duration) (string, error) {
	h, err := s.checkHandle(group, topic, handle)
	if err != nil {
		return "", err
	}
	if d <= 0 {
		return "", fmt.Errorf("%w: invisible time %v", ErrBadRequest, d)
	}
	nh, err := s.changeInvisible(context.Background(), group, topic, h, d)
	if err != nil {
		return "", err
	}
	return nh.String(), nil
}

func (s *Service) changeInvisible(ctx context.Context, group, topic string, h Handle, d time.Duration) (Handle, error) {
	k := queueKey{group, readTopic(group, topic, h), h.QueueID}
	if h.FIFO() {
		return s.changeInvisibleFIFO(k, h, d)
	}
	now := s.now().UnixMilli()
	s.mu.Lock()
	ck := s.cks[ckKey{k, h.StartOffset, h.PopTime}]
	valid := ck != nil && now < ck.expiry()
	if valid {
		i := ck.index(h.Offset)
		valid = i >= 0 && ck.acked&(1<<i) == 0
	}
	s.mu.Unlock()
	if !valid {
		return Handle{}, fmt.Errorf("%w: no message in flight under it (acked, expired or revived)", ErrInvalidHandle)
	}
	nck := &checkpoint{ckKey: ckKey{k, h.Offset, now}, invisible: d.Milliseconds(), offsets: []int64{h.Offset},
		reviveQid: h.QueueID % s.cfg.ReviveQueueNum}
	if nck.invisible <= 0 {
		nck.invisible = 1
	}
	if err := s.addCheckpoint(ctx, nck, nil); err != nil {
		return Handle{}, err
	}
	if err := s.ackOffsets(ctx, group, topic, h, []int64{h.Offset}); err != nil {
		// The old handle expired (or was acked) meanwhile: the new
		// checkpoint stands on its own; it revives the message unless acked.
		s.log.Debug("pop: change invisible: ack of the old handle", "err", err)
	}
	nh := h
	nh.StartOffset, nh.PopTime, nh.InvisibleTime, nh.ReviveQid = nck.startOffset, nck.popTime, nck.invisible, nck.reviveQid
	return nh, nil
}

// ToDLQ moves the message of handle to the group's dead-letter queue
// (%DLQ%<group>) and acks it (ForwardMessageToDeadLetterQueue).
func (s *Service) ToDLQ(group, topic, handle string) error {
	h, err := s.checkHandle(group, topic, handle)
	if err != nil {
		return err
	}
	if err := s.checkInFlight(group, topic, h); err != nil {
		return err
	}
	r, err := s.readHandle(group, topic, h)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := s.putDLQ(ctx, group, topic, r); err != nil {
		return err
	}
	return s.ackOffsets(ctx, group, topic, h, []int64{h.Offset})
}

// checkInFlight reports ErrInvalidHandle unless h's message is in flight.
func (s *Service) checkInFlight(group, topic string, h Handle) error {
	k := queueKey{group, readTopic(group, topic, h), h.QueueID}
	now := s.now().UnixMilli()
	s.mu.Lock()
	defer s.mu.Unlock()
	if h.FIFO() {
		if fq := s.fifo[k]; fq != nil {
			if l, ok := fq.inflight[h.Offset]; ok && l.popTime == h.PopTime && now < l.deadline {
				return nil
			}
		}
	} else if ck := s.cks[ckKey{k, h.StartOffset, h.PopTime}]; ck != nil && now < ck.expiry() {
		if i := ck.index(h.Offset); i >= 0 && ck.acked&(1<<i) == 0 {
			return nil
		}
	}
	return fmt.Errorf("%w: no message in flight under it (acked, expired or revived)", ErrInvalidHandle)
}

// readHandle reads the message a handle names.
func (s *Service) readHandle(group, topic string, h Handle) (record.Record, error) {
	if h.CommitLogOffset >= 0 {
		if raw, err := s.deps.Store.ReadRecord(h.CommitLogOffset); err == nil {
			if r, err := record.Decode(raw, false); err == nil && r.QueueOffset == h.Offset && r.QueueID == h.QueueID {
				return r, nil
			}
		}
	}
	k := queueKey{group, readTopic(group, topic, h), h.QueueID}
	recs, _, err := s.read(k, h.Offset, 1, nil)
	if err != nil {
		return record.Record{}, err
	}
	if len(recs) == 0 || recs[0].QueueOffset != h.Offset {
		return record.Record{}, fmt.Errorf("%w: message %s/%d@%d is gone", ErrInvalidHandle, k.topic, k.queueID, h.Offset)
	}
	return recs[0], nil
}

// putDLQ stores a copy of r in group's dead-letter topic.
func (s *Service) putDLQ(ctx context.Context, group, topic string, r record.Record) error {
	tc, err := s.deps.CreateTopic(protocol.NewTopicConfig(protocol.DLQTopic(group), 1))
	if err != nil {
		return fmt.Errorf("pop: create %s: %w", protocol.DLQTopic(group), err)
	}
	if tc.Perm&protocol.PermWrite == 0 {
		return fmt.Errorf("%w: the topic[%s] sending message is forbidden", ErrNoPermission, tc.TopicName)
	}
	m := s.copyOf(r, topic)
	m.Topic, m.QueueID = tc.TopicName, 0
	res, err := s.deps.Store.Put(ctx, m)
	if !res.Stored {
		return fmt.Errorf("%w: %s: %s: %v", ErrStore, tc.TopicName, res.Status, err)
	}
	s.log.Debug("pop: message to DLQ", "group", group, "topic", topic, "reconsumeTimes", r.ReconsumeTimes)
	return nil
}

// copyOf is r as a new message of the broker (for a retry or DLQ topic):
// its properties name the consumer's topic (RETRY_TOPIC) and the original
// message id (ORIGIN_MESSAGE_ID).
func (s *Service) copyOf(r record.Record, topic string) *record.Message {
	props := record.DecodeProperties(string(r.Properties))
	if _, ok := props[propertyRetryTopic]; !ok {
		props[propertyRetryTopic] = topic
	}
	if props[propertyOriginMessageID] == "" {
		if id := props[record.PropertyUniqKey]; id != "" {
			props[propertyOriginMessageID] = id
		} else {
			props[propertyOriginMessageID] = record.OffsetMsgID(r.StoreHost, r.PhysicalOffset)
		}
	}
	host := s.storeHost()
	return &record.Message{Flag: r.Flag, SysFlag: r.SysFlag &^ (record.FlagBornHostV6 | record.FlagStoreHostV6),
		Body: r.Body, Properties: record.EncodeProperties(props), BornTimestamp: r.BornTimestamp, BornHost: r.BornHost,
		StoreHost: host, ReconsumeTimes: r.ReconsumeTimes}
}

// Message properties the copies carry (MessageConst).
const (
	propertyRetryTopic      = "RETRY_TOPIC"
	propertyOriginMessageID = "ORIGIN_MESSAGE_ID"
)

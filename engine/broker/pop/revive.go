package pop

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// reviveRetryWait is how long the revive service waits before trying a
// checkpoint again after a failure (a put refused, acks in progress).
const reviveRetryWait = 20 * time.Millisecond

// reviveLoop is the revive service: it revives each pending checkpoint
// when its invisible time has passed and moves the revive offsets on.
func (s *Service) reviveLoop() {
	defer close(s.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		next := s.reviveDue(ctx)
		s.commitReviveOffsets()
		wait := time.Hour
		if next > 0 {
			wait = max(time.Duration(next-s.now().UnixMilli())*time.Millisecond, time.Millisecond)
		}
		t := time.NewTimer(wait)
		select {
		case <-s.stop:
			t.Stop()
			return
		case <-s.kick:
		case <-t.C:
		}
		t.Stop()
	}
}

// reviveDue revives every checkpoint whose invisible time has passed and
// returns when the next one is due (ms, 0 for none).
func (s *Service) reviveDue(ctx context.Context) int64 {
	now := s.now().UnixMilli()
	var due []*checkpoint
	var next int64
	s.mu.Lock()
	if s.acking > 0 {
		s.mu.Unlock()
		return now + reviveRetryWait.Milliseconds()
	}
	for _, ck := range s.cks {
		if e := ck.expiry(); e <= now {
			due = append(due, ck)
		} else if next == 0 || e < next {
			next = e
		}
	}
	s.mu.Unlock()
	slices.SortFunc(due, func(a, b *checkpoint) int { return int(a.expiry() - b.expiry()) })
	for _, ck := range due {
		if err := s.revive(ctx, ck); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("pop: revive failed, will retry", "group", ck.group, "topic", ck.topic, "queue", ck.queueID,
					"startOffset", ck.startOffset, "err", err)
			}
			retry := now + reviveRetryWait.Milliseconds()
			if next == 0 || retry < next {
				next = retry
			}
		}
	}
	return next
}

// revive stores the un-acked messages of ck in the group's retry topic
// with their reconsume times raised, then marks them done with a batch-ack
// record and drops ck. A crash before the mark revives them again (a
// duplicate in the retry topic, never a loss).
func (s *Service) revive(ctx context.Context, ck *checkpoint) error {
	s.mu.Lock()
	acked := ck.acked
	s.mu.Unlock()
	var todo []int64
	for i, off := range ck.offsets {
		if acked&(1<<i) == 0 {
			todo = append(todo, off)
		}
	}
	if len(todo) > 0 {
		retryTopic := RetryTopic(ck.group, ck.topic)
		tc, err := s.deps.CreateTopic(protocol.NewTopicConfig(retryTopic, 1))
		if err != nil {
			return fmt.Errorf("pop: create %s: %w", retryTopic, err)
		}
		for _, off := range todo {
			recs, _, err := s.read(ck.queueKey, off, 1, nil)
			if err != nil {
				return err
			}
			if len(recs) == 0 || recs[0].QueueOffset != off {
				continue // the message is gone (deleted by retention): nothing to revive
			}
			r := recs[0]
			topic := ck.topic
			if v, ok := r.Property(propertyRetryTopic); ok && IsRetryTopic(ck.topic) {
				topic = string(v)
			}
			m := s.copyOf(r, topic)
			m.Topic, m.QueueID = tc.TopicName, 0
			m.ReconsumeTimes = r.ReconsumeTimes + 1
			if _, ok := r.Property(protocol.PropertyFirstPopTime); !ok {
				m.Properties = string(record.AppendProperty([]byte(m.Properties), protocol.PropertyFirstPopTime,
					fmt.Sprint(ck.popTime)))
			}
			res, err := s.deps.Store.Put(ctx, m)
			if !res.Stored {
				return fmt.Errorf("%w: revive into %s: %s: %v", ErrStore, tc.TopicName, res.Status, err)
			}
		}
		rec := ackRecord{AckOffsets: todo, StartOffset: ck.startOffset, Group: ck.group, Topic: ck.topic,
			QueueID: ck.queueID, PopTime: ck.popTime, BrokerName: s.cfg.BrokerName}
		q := &s.rq[ck.reviveQid]
		q.mu.Lock()
		_, err = s.putRevive(ctx, ck.reviveQid, batchAckTag, rec, "")
		q.mu.Unlock()
		if err != nil {
			return err
		}
	}
	s.mu.Lock()
	delete(s.cks, ck.ckKey)
	s.mu.Unlock()
	return nil
}

// commitReviveOffsets commits each revive queue's offset: the offset of
// its oldest pending checkpoint, or the end of what was written. Every
// record below it belongs to a finished checkpoint, so recovery starts
// there.
func (s *Service) commitReviveOffsets() {
	for i := range s.rq {
		q := &s.rq[i]
		q.mu.Lock()
		off := q.next
		s.mu.Lock()
		for _, ck := range s.cks {
			if ck.reviveQid == int32(i) && ck.logOffset < off {
				off = ck.logOffset
			}
		}
		s.mu.Unlock()
		if cur, ok := s.deps.Offsets.Query(protocol.ReviveGroup, s.reviveTopic, int32(i)); (!ok && off > 0) || (ok && cur != off) {
			s.deps.Offsets.Commit(protocol.ReviveGroup, s.reviveTopic, int32(i), off)
		}
		q.mu.Unlock()
	}
}

// recover rebuilds the pending checkpoints from the revive topic: every
// record from each queue's committed revive offset is read; checkpoints
// become pending, acks mark their messages, and the pop offsets move past
// every checkpoint found (the consumer offsets on file may be older than
// the checkpoints a crash left).
func (s *Service) recover() error {
	for i := range s.rq {
		rq := int32(i)
		off, ok := s.deps.Offsets.Query(protocol.ReviveGroup, s.reviveTopic, rq)
		if minOff := s.deps.Store.MinOffset(s.reviveTopic, rq); !ok || off < minOff {
			off = minOff
		}
		k := queueKey{protocol.ReviveGroup, s.reviveTopic, rq}
		for {
			recs, next, err := s.read(k, off, maxBatch, nil)
			if err != nil {
				return fmt.Errorf("pop: recover from %s/%d: %w", s.reviveTopic, rq, err)
			}
			for _, r := range recs {
				s.replay(rq, r)
			}
			if next <= off {
				break
			}
			off = next
		}
		s.rq[i].next = off
	}
	for key, ck := range s.cks {
		if ck.allAcked() {
			delete(s.cks, key)
			continue
		}
		end := ck.offsets[len(ck.offsets)-1] + 1
		if cur, ok := s.deps.Offsets.Query(ck.group, ck.topic, ck.queueID); !ok || cur < end {
			s.deps.Offsets.Commit(ck.group, ck.topic, ck.queueID, end)
		}
	}
	s.log.Info("pop: recovered", "pending checkpoints", len(s.cks))
	return nil
}

// replay applies one revive-topic record to the recovered state.
func (s *Service) replay(rq int32, r record.Record) {
	tag, _ := r.Property(record.PropertyTags)
	switch string(tag) {
	case ckTag:
		var c ckRecord
		if err := json.Unmarshal(r.Body, &c); err != nil {
			s.log.Warn("pop: bad checkpoint record", "offset", r.QueueOffset, "err", err)
			return
		}
		ck, ok := fromRecord(c, rq, r.QueueOffset)
		if !ok {
			return
		}
		if s.cks[ck.ckKey] == nil {
			s.cks[ck.ckKey] = ck
		}
		// The pop offset moved past the checkpoint's messages before it
		// could be revived; make sure it still has.
		end := ck.offsets[len(ck.offsets)-1] + 1
		if cur, ok := s.deps.Offsets.Query(ck.group, ck.topic, ck.queueID); !ok || cur < end {
			s.deps.Offsets.Commit(ck.group, ck.topic, ck.queueID, end)
		}
	case ackTag, batchAckTag:
		var a ackRecord
		if err := json.Unmarshal(r.Body, &a); err != nil {
			s.log.Warn("pop: bad ack record", "offset", r.QueueOffset, "err", err)
			return
		}
		if a.FIFOCommit > 0 {
			if cur, ok := s.deps.Offsets.Query(a.Group, a.Topic, a.QueueID); !ok || cur < a.FIFOCommit {
				s.deps.Offsets.Commit(a.Group, a.Topic, a.QueueID, a.FIFOCommit)
			}
			return
		}
		ck := s.cks[ckKey{queueKey{a.Group, a.Topic, a.QueueID}, a.StartOffset, a.PopTime}]
		if ck == nil {
			return // its checkpoint finished before the revive offset
		}
		offs := a.AckOffsets
		if string(tag) == ackTag {
			offs = []int64{a.AckOffset}
		}
		for _, o := range offs {
			if i := ck.index(o); i >= 0 {
				ck.acked |= 1 << i
			}
		}
	}
}

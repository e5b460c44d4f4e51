package pop

import (
	"context"
	"fmt"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// fifoQueue is one group's FIFO consumption of one queue (Java's
// ConsumerOrderInfo): the batch in flight, and what the group did with
// offsets at or past its consumer offset. The queue gives nothing new
// while a message of the batch is in flight; once every un-acked one has
// passed its invisible time the batch is delivered again from the first
// un-acked offset, in order. Guarded by Service.mu.
type fifoQueue struct {
	inflight map[int64]fifoLease // delivered, not acked
	acked    map[int64]bool      // acked out of order, at or past the consumer offset
	attempts map[int64]int32     // deliveries so far
	end      int64               // the offset after the last batch read
}

// fifoLease is one delivered FIFO message's pop time and the time it
// becomes visible again (ms).
type fifoLease struct{ popTime, deadline int64 }

// busyUntil is when the queue's batch is no longer in flight (0: not now).
func (q *fifoQueue) busyUntil(now int64) int64 {
	var until int64
	for _, l := range q.inflight {
		if l.deadline > now && l.deadline > until {
			until = l.deadline
		}
	}
	return until
}

// committed is the group's consumer offset the queue's state implies: the
// first offset still in flight (acked or not redelivered yet), else the
// end of the last batch.
func (q *fifoQueue) committed() int64 {
	c := q.end
	for off := range q.inflight {
		c = min(c, off)
	}
	return c
}

// popFIFO pops up to n messages of queue qid in order, unless the
// group's last batch of it is still in flight (then wakeAt is when it
// turns visible again).
func (s *Service) popFIFO(ctx context.Context, req Request, qid int32, n int, popTime int64, f Filter) ([]Message, int64, error) {
	k := queueKey{req.Group, req.Topic, qid}
	lk := s.queueLock(k)
	if !lk.TryLock() {
		return nil, 0, nil
	}
	defer lk.Unlock()
	s.mu.Lock()
	fq := s.fifo[k]
	if fq != nil {
		if until := fq.busyUntil(popTime); until > 0 {
			s.mu.Unlock()
			return nil, until, nil
		}
	}
	s.mu.Unlock()

	offset := s.popOffset(k, req.InitMode, false)
	recs, next, err := s.read(k, offset, n, f)
	if err != nil {
		return nil, 0, err
	}
	maxAtt := s.maxAttempts(req.Group)
	s.mu.Lock()
	if fq = s.fifo[k]; fq == nil {
		fq = &fifoQueue{inflight: map[int64]fifoLease{}, acked: map[int64]bool{}, attempts: map[int64]int32{}}
		s.fifo[k] = fq
	}
	var out, dlq []record.Record
	var atts []int32
	for _, r := range recs {
		if fq.acked[r.QueueOffset] {
			continue
		}
		att := fq.attempts[r.QueueOffset] + 1
		if att > maxAtt {
			dlq = append(dlq, r)
			continue
		}
		out = append(out, r)
		atts = append(atts, att)
	}
	s.mu.Unlock()
	for _, r := range dlq {
		r.ReconsumeTimes = fq.attemptsOf(s, r.QueueOffset)
		if err := s.putDLQ(ctx, req.Group, req.Topic, r); err != nil {
			return nil, 0, err
		}
	}
	invisible := req.Invisible.Milliseconds()
	s.mu.Lock()
	clear(fq.inflight)
	for off := range fq.acked {
		if off < offset {
			delete(fq.acked, off)
		}
	}
	for off := range fq.attempts {
		if off < offset {
			delete(fq.attempts, off)
		}
	}
	for _, r := range dlq {
		fq.acked[r.QueueOffset] = true
	}
	for i, r := range out {
		fq.inflight[r.QueueOffset] = fifoLease{popTime: popTime, deadline: popTime + invisible}
		fq.attempts[r.QueueOffset] = atts[i]
	}
	fq.end = max(next, offset)
	commit := fq.committed()
	s.mu.Unlock()
	s.deps.Offsets.Commit(k.group, k.topic, k.queueID, commit)
	if len(out) == 0 {
		return nil, 0, nil
	}
	msgs := make([]Message, len(out))
	for i, r := range out {
		h := Handle{StartOffset: out[0].QueueOffset, PopTime: popTime, InvisibleTime: invisible,
			ReviveQid: protocol.PopOrderReviveQueue, BrokerName: s.cfg.BrokerName, QueueID: qid, Offset: r.QueueOffset,
			CommitLogOffset: r.PhysicalOffset}
		r.ReconsumeTimes = atts[i] - 1
		msgs[i] = Message{Record: r, Handle: h.String(), DeliveryAttempt: atts[i]}
	}
	return msgs, 0, nil
}

// attemptsOf is the deliveries of offset so far (for a DLQ copy's
// reconsume times).
func (q *fifoQueue) attemptsOf(s *Service, off int64) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return q.attempts[off]
}

// ackFIFO acks FIFO messages: the group's consumer offset moves to the
// first one still in flight, and an ack record carrying that offset is
// stored first so a crash cannot move it back.
func (s *Service) ackFIFO(ctx context.Context, k queueKey, h Handle, offsets []int64) error {
	lk := s.queueLock(k)
	lk.Lock() // a pop of the queue in progress finishes first
	defer lk.Unlock()
	now := s.now().UnixMilli()
	s.mu.Lock()
	fq := s.fifo[k]
	var acks []int64
	if fq != nil {
		for _, off := range offsets {
			if l, ok := fq.inflight[off]; ok && l.popTime == h.PopTime && now < l.deadline {
				acks = append(acks, off)
			}
		}
	}
	if len(acks) == 0 {
		s.mu.Unlock()
		return fmt.Errorf("%w: no FIFO message in flight under it (acked or expired)", ErrInvalidHandle)
	}
	saved := make(map[int64]fifoLease, len(acks))
	for _, off := range acks {
		saved[off] = fq.inflight[off]
		delete(fq.inflight, off)
		fq.acked[off] = true
	}
	commit := fq.committed()
	s.mu.Unlock()

	rq := k.queueID % s.cfg.ReviveQueueNum
	rec := ackRecord{AckOffset: acks[0], StartOffset: h.StartOffset, Group: k.group, Topic: k.topic, QueueID: k.queueID,
		PopTime: h.PopTime, BrokerName: s.cfg.BrokerName, FIFOCommit: commit}
	tag := ackTag
	if len(acks) > 1 {
		tag, rec.AckOffset, rec.AckOffsets = batchAckTag, 0, acks
	}
	q := &s.rq[rq]
	q.mu.Lock()
	_, err := s.putRevive(ctx, rq, tag, rec, "")
	q.mu.Unlock()
	if err != nil {
		s.mu.Lock()
		for off, l := range saved {
			fq.inflight[off] = l
			delete(fq.acked, off)
		}
		s.mu.Unlock()
		return err
	}
	s.deps.Offsets.Commit(k.group, k.topic, k.queueID, commit)
	s.polls.wake(k.topic) // the queue may be free for the next batch
	return nil
}

// changeInvisibleFIFO moves a FIFO message's visibility to now+d; the
// handle keeps its pop time, so its invisible time grows.
func (s *Service) changeInvisibleFIFO(k queueKey, h Handle, d time.Duration) (Handle, error) {
	now := s.now().UnixMilli()
	s.mu.Lock()
	defer s.mu.Unlock()
	fq := s.fifo[k]
	if fq == nil {
		return Handle{}, fmt.Errorf("%w: no FIFO message in flight under it", ErrInvalidHandle)
	}
	l, ok := fq.inflight[h.Offset]
	if !ok || l.popTime != h.PopTime || now >= l.deadline {
		return Handle{}, fmt.Errorf("%w: no FIFO message in flight under it (acked or expired)", ErrInvalidHandle)
	}
	l.deadline = now + d.Milliseconds()
	fq.inflight[h.Offset] = l
	nh := h
	nh.InvisibleTime = l.deadline - l.popTime
	return nh, nil
}

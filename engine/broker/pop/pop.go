package pop

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// maxBatch is the most messages one pop returns (a checkpoint's bitmap
// holds 32; Java refuses maxMsgNums over 32).
const maxBatch = 32

// Init modes of Request.InitMode (ConsumeInitMode): where a group without
// an offset on a queue starts.
const (
	// InitMin starts at the queue's first message.
	InitMin = protocol.ConsumeInitMin
	// InitMax starts at its last message (at its first while the queue
	// starts at offset 0 and that message is in memory, as Java's
	// initPopOffsetByCheckMsgInMem); the proxy pops with it.
	InitMax = protocol.ConsumeInitMax
)

// Request is one pop.
type Request struct {
	Group, Topic string
	QueueID      int32 // -1: any readable queue (server-side balancing)
	MaxMessages  int
	Invisible    time.Duration
	Poll         time.Duration // long-poll budget; 0 = answer at once
	FIFO         bool
	// ExpressionType is "TAG" or "SQL92"; "" = all.
	ExpressionType string
	Expression     string
	ClientID       string
	// InitMode is where a group new to a queue starts (InitMin, InitMax).
	InitMode int32
}

// Message is one popped message.
type Message struct {
	// Record is the stored message (QueueID, QueueOffset, PhysicalOffset,
	// body, properties). A retry copy's Topic is the consumer's topic, as
	// Java's pop answers (popResponseReturnActualRetryTopic false); its
	// QueueID and offsets are the retry topic's. A FIFO message's
	// ReconsumeTimes counts its earlier deliveries.
	Record          record.Record
	Handle          string // receipt handle
	DeliveryAttempt int32  // 1 on first delivery
	// Retry: the message was read from the group's retry topic.
	Retry bool
}

// Pop pops up to req.MaxMessages messages, waiting up to req.Poll for
// some to arrive. It returns an empty slice and a nil error when the poll
// ends without messages, ctx's error when ctx ends first.
func (s *Service) Pop(ctx context.Context, req Request) ([]Message, error) {
	tc, filter, err := s.checkPop(req)
	if err != nil {
		return nil, err
	}
	if req.MaxMessages > maxBatch {
		req.MaxMessages = maxBatch
	}
	if s.cfg.MaxPoll > 0 && req.Poll > s.cfg.MaxPoll {
		req.Poll = s.cfg.MaxPoll
	}
	deadline := s.now().Add(req.Poll)
	retry := RetryTopic(req.Group, req.Topic)
	for {
		w := s.polls.watch(req.Topic, retry)
		msgs, wakeAt, err := s.popOnce(ctx, req, tc, filter)
		if err != nil || len(msgs) > 0 || req.Poll <= 0 {
			s.polls.unwatch(w)
			return msgs, err
		}
		left := deadline.Sub(s.now())
		if left <= 0 {
			s.polls.unwatch(w)
			return []Message{}, nil
		}
		if wakeAt > 0 {
			left = min(left, time.Duration(wakeAt-s.now().UnixMilli())*time.Millisecond+time.Millisecond)
		}
		t := time.NewTimer(max(left, time.Millisecond))
		select {
		case <-w.a:
		case <-w.b:
		case <-t.C:
		case <-s.stop:
			t.Stop()
			s.polls.unwatch(w)
			return []Message{}, nil
		case <-ctx.Done():
			t.Stop()
			s.polls.unwatch(w)
			return nil, ctx.Err()
		}
		t.Stop()
		s.polls.unwatch(w)
		if !s.running() {
			return []Message{}, nil
		}
	}
}

// checkPop validates a pop and looks its topic up.
func (s *Service) checkPop(req Request) (protocol.TopicConfig, Filter, error) {
	if !s.running() {
		return protocol.TopicConfig{}, nil, ErrNotStarted
	}
	if s.cfg.Slave {
		return protocol.TopicConfig{}, nil, fmt.Errorf("%w: a slave does not serve pops", ErrNoPermission)
	}
	if req.Group == "" || req.Topic == "" {
		return protocol.TopicConfig{}, nil, fmt.Errorf("%w: group and topic are required", ErrBadRequest)
	}
	if req.MaxMessages <= 0 {
		return protocol.TopicConfig{}, nil, fmt.Errorf("%w: max messages %d", ErrBadRequest, req.MaxMessages)
	}
	if req.Invisible <= 0 {
		return protocol.TopicConfig{}, nil, fmt.Errorf("%w: invisible time %v", ErrBadRequest, req.Invisible)
	}
	tc, ok := s.deps.Topic(req.Topic)
	if !ok {
		return tc, nil, fmt.Errorf("%w: %s", ErrTopicNotExist, req.Topic)
	}
	if tc.Perm&protocol.PermRead == 0 {
		return tc, nil, fmt.Errorf("%w: the topic[%s] peeking message is forbidden", ErrNoPermission, req.Topic)
	}
	if req.QueueID >= tc.ReadQueueNums || req.QueueID < -1 {
		return tc, nil, fmt.Errorf("%w: queueId %d out of range [0, %d) of topic %s", ErrBadRequest, req.QueueID, tc.ReadQueueNums, req.Topic)
	}
	var f Filter
	if s.deps.CompileFilter != nil && (req.Expression != "" || req.ExpressionType != "") {
		var err error
		if f, err = s.deps.CompileFilter(req.ExpressionType, req.Expression); err != nil {
			return tc, nil, fmt.Errorf("%w: filter %s %q: %w", ErrBadRequest, req.ExpressionType, req.Expression, err)
		}
	}
	return tc, f, nil
}

// popOnce pops what is there now. wakeAt (ms, 0 none) is when a FIFO
// queue that was skipped because its messages are in flight turns
// visible again.
func (s *Service) popOnce(ctx context.Context, req Request, tc protocol.TopicConfig, f Filter) ([]Message, int64, error) {
	var out []Message
	var wakeAt int64
	popTime := s.now().UnixMilli()
	want := req.MaxMessages
	queues := []int32{req.QueueID}
	if req.QueueID < 0 {
		n := tc.ReadQueueNums
		queues = make([]int32, 0, n)
		start := rand.Int32N(max(n, 1))
		for i := range n {
			queues = append(queues, (start+i)%n)
		}
	}
	retryTopic := RetryTopic(req.Group, req.Topic)
	retryFirst := !req.FIFO && rand.IntN(100) < s.cfg.RetryFirstPercent
	popRetry := func() error {
		if req.FIFO || want-len(out) <= 0 {
			return nil
		}
		rtc, ok := s.deps.Topic(retryTopic)
		if !ok {
			return nil
		}
		for q := range rtc.ReadQueueNums {
			if want-len(out) <= 0 {
				break
			}
			got, err := s.popQueue(ctx, req, req.Topic, retryTopic, q, true, want-len(out), popTime, f)
			if err != nil {
				return err
			}
			out = append(out, got...)
		}
		return nil
	}
	if retryFirst {
		if err := popRetry(); err != nil {
			return out, 0, err
		}
	}
	for _, q := range queues {
		if want-len(out) <= 0 {
			break
		}
		var got []Message
		var err error
		if req.FIFO {
			var w int64
			got, w, err = s.popFIFO(ctx, req, q, want-len(out), popTime, f)
			if w > 0 && (wakeAt == 0 || w < wakeAt) {
				wakeAt = w
			}
		} else {
			got, err = s.popQueue(ctx, req, req.Topic, req.Topic, q, false, want-len(out), popTime, f)
		}
		if err != nil {
			return out, 0, err
		}
		out = append(out, got...)
	}
	if !retryFirst {
		if err := popRetry(); err != nil {
			return out, 0, err
		}
	}
	return out, wakeAt, nil
}

// popOffset is group's pop offset of a queue; a group new to it starts as
// its init mode says (retry topics at their first message), and that
// start is committed.
func (s *Service) popOffset(k queueKey, initMode int32, retry bool) int64 {
	if off, ok := s.deps.Offsets.Query(k.group, k.topic, k.queueID); ok && off >= 0 {
		return off
	}
	st := s.deps.Store
	var off int64
	switch {
	case initMode == InitMin || retry:
		off = st.MinOffset(k.topic, k.queueID)
	case st.MinOffset(k.topic, k.queueID) <= 0 && st.InMemory(k.topic, k.queueID, 0):
		off = 0
	default:
		off = max(st.MaxOffset(k.topic, k.queueID)-1, 0)
	}
	s.deps.Offsets.Commit(k.group, k.topic, k.queueID, off)
	return off
}

// read reads up to n records of a queue from its pop offset, moving an
// offset that fell out of the queue to its edge. It returns the records
// and the offset after them.
func (s *Service) read(k queueKey, offset int64, n int, f Filter) ([]record.Record, int64, error) {
	res := s.deps.Store.Read(k.group, k.topic, k.queueID, offset, n, f)
	if (res.Status == ReadOffsetTooSmall || res.Status == ReadOffsetOverflow) && res.NextBeginOffset != offset {
		offset = res.NextBeginOffset
		res = s.deps.Store.Read(k.group, k.topic, k.queueID, offset, n, f)
	}
	switch res.Status {
	case ReadFound:
	case ReadNoMatched, ReadOffsetTooSmall, ReadOffsetOverflow:
		return nil, max(res.NextBeginOffset, offset), nil
	default:
		return nil, offset, nil
	}
	recs, err := record.DecodeAll(res.Buffer, false)
	if err != nil {
		return nil, offset, fmt.Errorf("pop: read %s/%d at %d: %w", k.topic, k.queueID, offset, err)
	}
	return recs, res.NextBeginOffset, nil
}

// maxAttempts is the deliveries a message of group gets before it goes to
// the DLQ (retryMaxTimes + 1, as the proxy's backoff policy).
func (s *Service) maxAttempts(group string) int32 { return s.retryMaxTimes(group) + 1 }

// popQueue pops up to n messages of one queue of topic (the consumer's
// topic, or its retry topic when retry) with a checkpoint.
func (s *Service) popQueue(ctx context.Context, req Request, topic, readTopic string, qid int32, retry bool, n int, popTime int64, f Filter) ([]Message, error) {
	k := queueKey{req.Group, readTopic, qid}
	lk := s.queueLock(k)
	if !lk.TryLock() {
		return nil, nil // another pop of this group holds the queue (Java skips it too)
	}
	defer lk.Unlock()
	offset := s.popOffset(k, req.InitMode, retry)
	recs, next, err := s.read(k, offset, n, f)
	if err != nil || len(recs) == 0 {
		if err == nil && next != offset {
			s.deps.Offsets.Commit(k.group, k.topic, k.queueID, next)
		}
		return nil, err
	}
	maxAtt := s.maxAttempts(req.Group)
	kept := recs[:0]
	for _, r := range recs {
		if r.ReconsumeTimes >= maxAtt {
			if err := s.putDLQ(ctx, req.Group, topic, r); err != nil {
				return nil, err
			}
			continue
		}
		kept = append(kept, r)
	}
	if len(kept) == 0 {
		s.deps.Offsets.Commit(k.group, k.topic, k.queueID, next)
		return nil, nil
	}
	ck := &checkpoint{ckKey: ckKey{k, kept[0].QueueOffset, popTime}, invisible: req.Invisible.Milliseconds(),
		reviveQid: qid % s.cfg.ReviveQueueNum}
	for _, r := range kept {
		ck.offsets = append(ck.offsets, r.QueueOffset)
	}
	if err := s.addCheckpoint(ctx, ck, func() { s.deps.Offsets.Commit(k.group, k.topic, k.queueID, next) }); err != nil {
		return nil, err
	}
	out := make([]Message, len(kept))
	for i, r := range kept {
		h := Handle{StartOffset: ck.startOffset, PopTime: ck.popTime, InvisibleTime: ck.invisible, ReviveQid: ck.reviveQid,
			Retry: retry, BrokerName: s.cfg.BrokerName, QueueID: qid, Offset: r.QueueOffset, CommitLogOffset: r.PhysicalOffset}
		if retry {
			r.Topic = []byte(topic)
		}
		out[i] = Message{Record: r, Handle: h.String(), DeliveryAttempt: r.ReconsumeTimes + 1, Retry: retry}
	}
	return out, nil
}

// addCheckpoint stores ck's record and makes it pending; commit runs
// between the two (the pop offset moves on only once the checkpoint is
// stored, and before the revive offset can pass it).
func (s *Service) addCheckpoint(ctx context.Context, ck *checkpoint, commit func()) error {
	q := &s.rq[ck.reviveQid]
	q.mu.Lock()
	defer q.mu.Unlock()
	s.mu.Lock()
	for s.cks[ck.ckKey] != nil { // two checkpoints of one start in one ms (change invisible)
		ck.popTime++
	}
	s.mu.Unlock()
	res, err := s.putRevive(ctx, ck.reviveQid, ckTag, ck.record(s.cfg.BrokerName), ckKeys(ck.ckKey))
	if err != nil {
		return err
	}
	ck.logOffset = res.QueueOffset
	if commit != nil {
		commit()
	}
	s.mu.Lock()
	s.cks[ck.ckKey] = ck
	s.mu.Unlock()
	s.kickRevive()
	return nil
}

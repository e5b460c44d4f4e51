package store

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/record"
)

// topicQueueLockNum is RocketMQ's topicQueueLockNum: stripes of the
// per-"topic-queueId" lock that covers queue-offset assignment and the
// append.
const topicQueueLockNum = 32

type queueKey struct {
	topic string
	id    int32
}

// queueStripe is one stripe of the topic-queue lock with the part of
// topicQueueTable ("topic-queueId" → next queue offset) it guards.
type queueStripe struct {
	mu   sync.Mutex
	next map[queueKey]int64 // guarded by mu
	_    [40]byte           // keep stripes on separate cache lines
}

// stripeFor hashes "topic-queueId" (FNV-1a) onto a stripe.
func (s *Store) stripeFor(topic string, id int32) *queueStripe {
	h := uint32(2166136261)
	for i := 0; i < len(topic); i++ {
		h = (h ^ uint32(topic[i])) * 16777619
	}
	h = (h ^ uint32(id)) * 16777619
	return &s.stripes[h%topicQueueLockNum]
}

// PutResult is RocketMQ's PutMessageResult with its AppendMessageResult.
type PutResult struct {
	Status PutStatus
	// WroteOffset is the commit-log offset of the (first) record;
	// WroteBytes the total record bytes written.
	WroteOffset int64
	WroteBytes  int64
	// StoreHost is the STOREHOST written: with WroteOffset it makes the
	// offset message id (MsgID).
	StoreHost netip.AddrPort
	// batchIDs holds a batch's comma-joined offset message ids.
	batchIDs string
	// UniqKey is the UNIQ_KEY (client message id) of the message, added by
	// the store when it was missing (comma-joined for a batch).
	UniqKey string
	// QueueOffset is the (first) message's queue offset; MsgNum the number
	// of messages.
	QueueOffset int64
	MsgNum      int
	// StoreTimestamp is the STORETIMESTAMP written.
	StoreTimestamp int64
	// LockHeld is how long the append held the commit log's append lock.
	LockHeld time.Duration
	// LockWait is how long the put waited for its queue's stripe lock and
	// the commit log's append lock; FlushWait how long it then waited for
	// the flush policy (0 when it did not wait: async, WAIT=false, and sync,
	// whose flush runs under the append lock and counts in LockHeld). With
	// LockHeld they are the store's stages of a per-stage latency breakdown.
	LockWait, FlushWait time.Duration
	// lockReleased is when the append lock was released (FlushWait's start).
	lockReleased time.Time
}

// MsgID is the offset message id (comma-joined for a batch). It is built
// when asked for: puts do not allocate it.
func (r PutResult) MsgID() string {
	if r.batchIDs != "" {
		return r.batchIDs
	}
	return record.OffsetMsgID(r.StoreHost, r.WroteOffset)
}

// withUniqKey returns m, or a copy of m in *c (a new message when c is
// nil) with a new UNIQ_KEY property when it has none (SendMessageProcessor
// sets one for producers that did not), and the key. A message without a
// store host is copied too, with host filled in, so the caller's message is
// never modified and the commit log does not copy it again. A message with
// both (what the broker sends) is not copied.
func withUniqKey(m, c *record.Message, host netip.AddrPort) (*record.Message, string) {
	k, ok := record.Property(m.Properties, record.PropertyUniqKey)
	if ok && m.StoreHost.IsValid() {
		return m, k
	}
	if c == nil {
		c = new(record.Message)
	}
	*c = *m
	if !ok {
		k = record.NewUniqID()
		c.Properties = string(record.AppendProperty([]byte(m.Properties), record.PropertyUniqKey, k))
	}
	if !c.StoreHost.IsValid() {
		c.StoreHost = host
	}
	return c, k
}

// wantsWait reports whether the producer waits for the flush policy
// (PROPERTY_WAIT_STORE_MSG_OK is not "false").
func wantsWait(m *record.Message) bool {
	v, ok := record.Property(m.Properties, record.PropertyWaitStoreMsgOK)
	return !ok || v != "false"
}

// admit checks that the store takes puts. REQUIRES: s.life held shared.
func (s *Store) admit() error {
	if s.closed.Load() {
		return statusErr(ServiceNotAvailable, ErrClosed)
	}
	if s.diskFull.Load() {
		return statusErr(ServiceNotAvailable, ErrDiskFull)
	}
	if s.slave.Load() {
		return statusErr(ServiceNotAvailable, ErrSlave)
	}
	return nil
}

// Put stores one message: under the message's topic-queue stripe lock its
// queue offset is read from the queue table, the record appended to the
// commit log and the table advanced; then, outside the lock, Put waits as
// the flush policy requires (sync: a flush; group: the group commit; async:
// nothing). A message without UNIQ_KEY gets one (m is not modified).
// PREPARED and ROLLBACK transaction messages get queue offset 0 and no
// consume-queue unit.
//
// On success the error is nil and Status PutOK. Otherwise the error is a
// *StatusError (StatusOf): FLUSH_DISK_TIMEOUT means stored, durability
// unknown (also when ctx ended during the wait); the other statuses mean
// nothing was stored.
func (s *Store) Put(ctx context.Context, m *record.Message) (PutResult, error) {
	s.life.RLock()
	defer s.life.RUnlock()
	res, wait, err := s.appendOne(ctx, m)
	if err != nil || !wait {
		return res, err
	}
	return s.waitDurable(ctx, res)
}

// PutStaged is Put in two stages, as RocketMQ's asyncPutMessage: it
// appends m and returns; when the producer must wait for the flush policy
// (group commit, and WAIT not "false"), it returns a non-nil wait that
// blocks until m is durable and returns what Put would have. The caller
// may run wait on another goroutine, at most once; until it does, m's
// producer is not answered. With a nil wait, res and err are final (under
// sync the flush ran under the append lock; under async nothing waits).
//
// A broker's send workers append and hand the wait on, so a commit group
// is as large as the number of producers waiting, not the number of
// workers. AppendStaged and WaitStaged are the same two stages without the
// closure (no allocation per put).
func (s *Store) PutStaged(ctx context.Context, m *record.Message) (PutResult, func() (PutResult, error), error) {
	res, wait, err := s.AppendStaged(ctx, m)
	if !wait {
		return res, nil, err
	}
	return res, func() (PutResult, error) { return s.WaitStaged(ctx, res) }, nil
}

// AppendStaged is PutStaged's first stage: it appends m and reports
// whether m's producer must wait for the flush policy. If wait is true,
// err is nil, res is provisional and the caller must call WaitStaged(ctx,
// res) exactly once, from any goroutine, for the final result (until then
// the producer is not answered); otherwise res and err are final.
func (s *Store) AppendStaged(ctx context.Context, m *record.Message) (res PutResult, wait bool, err error) {
	s.life.RLock()
	defer s.life.RUnlock()
	res, wait, err = s.appendOne(ctx, m)
	if err != nil || !wait {
		return res, false, err
	}
	if !s.waitsAfterAppend() {
		r, err := s.waitDurable(ctx, res) // returns at once: nothing to hand on
		return r, false, err
	}
	return res, true, nil
}

// WaitStaged is PutStaged's second stage for the res an AppendStaged that
// returned wait: it blocks until that message is durable and returns what
// Put would have. A store closed meanwhile answers FLUSH_DISK_TIMEOUT.
func (s *Store) WaitStaged(ctx context.Context, res PutResult) (PutResult, error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		// Close flushed what it could; durability of this record is
		// not known here: stored, FLUSH_DISK_TIMEOUT (as a timeout).
		res.Status = FlushDiskTimeout
		s.st.flushTimeouts.Add(1)
		return res, statusErr(FlushDiskTimeout, ErrClosed)
	}
	return s.waitDurable(ctx, res)
}

// appendOne is Put's first stage: admission, queue offset and the append,
// with the dispatcher woken. wait reports whether the producer waits for
// the flush policy; with err non-nil the result is final. REQUIRES: s.life
// held shared.
func (s *Store) appendOne(ctx context.Context, m *record.Message) (res PutResult, wait bool, err error) {
	if err := s.admit(); err != nil {
		s.st.putFailures.Add(1)
		return PutResult{Status: StatusOf(err)}, false, err
	}
	wait = wantsWait(m)
	m, uniq := withUniqKey(m, nil, s.host)
	// The commit log appends without waiting for durability (under sync it
	// flushes under its append lock); the wait happens in waitDurable, outside
	// the queue lock, so producers of one queue share group commits.
	one := [1]*record.Message{m}
	var buf [1]commitlog.Result
	t0 := time.Now()
	var rs []commitlog.Result
	if consumable(m.SysFlag) {
		st := s.stripeFor(m.Topic, m.QueueID)
		k := queueKey{m.Topic, m.QueueID}
		st.mu.Lock()
		off := st.next[k]
		rs, err = s.log.AppendNoWait(ctx, one[:], off, buf[:0], wait)
		if len(rs) > 0 { // stored (even if an inline sync flush failed)
			st.next[k] = off + 1
		}
		st.mu.Unlock()
	} else {
		rs, err = s.log.AppendNoWait(ctx, one[:], 0, buf[:0], wait)
	}
	if len(rs) == 0 {
		s.st.putFailures.Add(1)
		return PutResult{Status: StatusOf(err)}, false, err
	}
	r := rs[0]
	res = PutResult{
		Status: PutOK, WroteOffset: r.PhysOffset, WroteBytes: int64(r.Size), StoreHost: r.StoreHost, UniqKey: uniq,
		QueueOffset: r.QueueOffset, MsgNum: 1, StoreTimestamp: r.StoreTimestamp, LockHeld: r.LockHeld,
		LockWait: r.LockAcquired.Sub(t0), lockReleased: r.LockAcquired.Add(r.LockHeld),
	}
	s.st.puts.Add(1)
	s.st.putMessages.Add(1)
	s.st.putBytes.Add(uint64(r.Size))
	if err != nil { // stored, but the inline sync flush failed
		s.wakeDispatcher()
		res, err = s.putWaitFailed(res, err)
		return res, false, err
	}
	s.wakeDispatcher()
	return res, wait, nil
}

// PutBatch stores msgs, which must share topic and queue id and must not be
// transactional, as consecutive records with consecutive queue offsets, in
// one segment, under one acquisition of the queue and append locks, with
// one wait for the flush policy (putMessages of a MessageExtBatch). Errors
// are Put's.
func (s *Store) PutBatch(ctx context.Context, msgs []*record.Message) (PutResult, error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if err := s.admit(); err != nil {
		s.st.putFailures.Add(1)
		return PutResult{Status: StatusOf(err)}, err
	}
	if err := checkBatch(msgs); err != nil {
		s.st.putFailures.Add(1)
		return PutResult{Status: MessageIllegal}, statusErr(MessageIllegal, err)
	}
	batch := make([]*record.Message, len(msgs))
	copies := make([]record.Message, len(msgs))
	var uniq strings.Builder
	wait := false
	for i, m := range msgs {
		var k string
		batch[i], k = withUniqKey(m, &copies[i], s.host)
		if i > 0 {
			uniq.WriteByte(',')
		}
		uniq.WriteString(k)
		wait = wait || wantsWait(m)
	}
	topic, id := msgs[0].Topic, msgs[0].QueueID
	st := s.stripeFor(topic, id)
	k := queueKey{topic, id}
	t0 := time.Now()
	st.mu.Lock()
	off := st.next[k]
	rs, err := s.log.AppendNoWait(ctx, batch, off, nil, wait)
	if len(rs) > 0 {
		st.next[k] = off + int64(len(batch))
	}
	st.mu.Unlock()
	if len(rs) == 0 {
		s.st.putFailures.Add(1)
		return PutResult{Status: StatusOf(err)}, err
	}
	res := PutResult{
		Status: PutOK, WroteOffset: rs[0].PhysOffset, UniqKey: uniq.String(), QueueOffset: rs[0].QueueOffset,
		MsgNum: len(rs), StoreTimestamp: rs[0].StoreTimestamp, LockHeld: rs[0].LockHeld,
		LockWait: rs[0].LockAcquired.Sub(t0), lockReleased: rs[0].LockAcquired.Add(rs[0].LockHeld),
	}
	ids := make([]byte, 0, len(rs)*33)
	for i, r := range rs {
		if i > 0 {
			ids = append(ids, ',')
		}
		ids = record.AppendOffsetMsgID(ids, r.StoreHost, r.PhysOffset)
		res.WroteBytes += int64(r.Size)
	}
	res.StoreHost = rs[0].StoreHost
	res.batchIDs = string(ids)
	s.st.puts.Add(1)
	s.st.putMessages.Add(uint64(len(rs)))
	s.st.putBytes.Add(uint64(res.WroteBytes))
	if err != nil {
		return s.putWaitFailed(res, err)
	}
	return s.finishPut(ctx, res, wait)
}

func checkBatch(msgs []*record.Message) error {
	if len(msgs) == 0 {
		return fmt.Errorf("%w: no messages", ErrBatch)
	}
	for _, m := range msgs {
		if m.Topic != msgs[0].Topic || m.QueueID != msgs[0].QueueID {
			return fmt.Errorf("%w: messages for %s/%d and %s/%d", ErrBatch, msgs[0].Topic, msgs[0].QueueID, m.Topic, m.QueueID)
		}
		if !consumable(m.SysFlag) {
			return fmt.Errorf("%w: transactional messages cannot be batched", ErrBatch)
		}
	}
	return nil
}

// consumable reports whether a record gets a queue offset and a
// consume-queue unit (not a PREPARED or ROLLBACK transaction message).
func consumable(sysFlag int32) bool {
	t := record.TransactionType(sysFlag)
	return t == record.TransactionNot || t == record.TransactionCommit
}

// finishPut wakes the dispatcher and waits for the flush policy.
func (s *Store) finishPut(ctx context.Context, res PutResult, wait bool) (PutResult, error) {
	s.wakeDispatcher()
	if !wait {
		return res, nil
	}
	return s.waitDurable(ctx, res)
}

// waitsAfterAppend reports whether a waiting producer waits for the flush
// policy after the append lock is released (group commits): sync flushes
// under the lock (its time is in LockHeld) and async does not wait.
func (s *Store) waitsAfterAppend() bool {
	k := s.cfg.CommitLog.Flush.Kind
	return k != flush.Async && k != flush.Sync
}

// waitDurable waits until the put's records are as durable as the flush
// policy promises. REQUIRES: s.life held shared.
func (s *Store) waitDurable(ctx context.Context, res PutResult) (PutResult, error) {
	end := res.WroteOffset + res.WroteBytes
	err := s.log.Commit(ctx, end)
	if s.waitsAfterAppend() {
		res.FlushWait = max(time.Since(res.lockReleased), 0)
	}
	s.wakeDispatcher() // the confirm offset moved (sync/group)
	if err == nil {
		return res, nil
	}
	return s.putWaitFailed(res, err)
}

// putWaitFailed reports a stored message whose durability is unknown: a
// group-commit timeout or the caller giving up is FLUSH_DISK_TIMEOUT (stored,
// as RocketMQ treats it); a flush error is SERVICE_NOT_AVAILABLE (the log is
// no longer writable).
func (s *Store) putWaitFailed(res PutResult, err error) (PutResult, error) {
	switch commitlog.StatusOf(err) {
	case FlushDiskTimeout:
		res.Status = FlushDiskTimeout
		s.st.flushTimeouts.Add(1)
	case UnknownError:
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			res.Status = FlushDiskTimeout
			s.st.flushTimeouts.Add(1)
			break
		}
		fallthrough
	default:
		res.Status = ServiceNotAvailable
		s.st.putFailures.Add(1)
	}
	return res, statusErr(res.Status, err)
}

package txn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Transaction group and properties (MixAll, MessageConst,
// TransactionalMessageUtil); the topics are protocol.TransHalfTopic and friends.
const (
	// TransGroup is the consumer group under which the check service's
	// progress through the half and op queues is stored.
	TransGroup = "CID_RMQ_SYS_TRANS"

	PropertyTransactionPreparedQueueOffset = "TRAN_PREPARED_QUEUE_OFFSET"
	PropertyTransactionCheckTimes          = "TRANSACTION_CHECK_TIMES"
	PropertyTransactionID                  = "__transactionId__"
	// PropertyCheckImmunityTime is a message's own first-check delay in
	// seconds (RocketMQ 5): no check before it, and an END_TRANSACTION
	// not answering a check after it is refused.
	PropertyCheckImmunityTime = "CHECK_IMMUNITY_TIME_IN_SECONDS"

	txnRemoveTag = "d"
	// txnScanLimit bounds one scan (MAX_PROCESS_TIME_LIMIT).
	txnScanLimit = 60 * time.Second
	// txnResolvedKeep bounds the resolved offsets kept below the half
	// offset (for copies' TRAN_PREPARED_QUEUE_OFFSET and repeated ends).
	txnResolvedKeep = 1 << 16
)

// txnState is the broker's transaction bookkeeping shared by END_TRANSACTION
// and the check service. The zero value is ready.
type txnState struct {
	mu sync.Mutex
	// resolved holds half queue offsets being ended (false: an
	// END_TRANSACTION is storing the message) or ended (true: committed or
	// rolled back).
	resolved map[int64]bool
	seq      atomic.Uint32 // round robin over a producer group's connections
	topics   atomic.Bool   // half and op topics created

	// The check knobs, set from Config by New and changed at run
	// time by UPDATE_BROKER_CONFIG (nanoseconds; a count).
	interval, timeout, checkMax atomic.Int64
	kick                        chan struct{} // a new interval: restart the wait
}

func (s *txnState) checkInterval() time.Duration { return time.Duration(s.interval.Load()) }
func (s *txnState) checkTimeout() time.Duration  { return time.Duration(s.timeout.Load()) }
func (s *txnState) maxChecks() int               { return int(s.checkMax.Load()) }

// claim marks the half at offset (and the first half it copies, origin, if
// ≥ 0) as being ended; false if either already is or was.
func (s *txnState) claim(offset, origin int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resolved == nil {
		s.resolved = make(map[int64]bool)
	}
	if _, ok := s.resolved[offset]; ok {
		return false
	}
	if _, ok := s.resolved[origin]; ok && origin >= 0 {
		return false
	}
	s.resolved[offset] = false
	if origin >= 0 {
		s.resolved[origin] = false
	}
	return true
}

// unclaim undoes a claim whose commit failed: the half is pending again.
func (s *txnState) unclaim(offset, origin int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range []int64{offset, origin} {
		if done, ok := s.resolved[o]; ok && !done {
			delete(s.resolved, o)
		}
	}
}

// markResolved records halves as ended (a claim that succeeded, or the
// offsets an op record names).
func (s *txnState) markResolved(offsets ...int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resolved == nil {
		s.resolved = make(map[int64]bool)
	}
	for _, o := range offsets {
		if o >= 0 {
			s.resolved[o] = true
		}
	}
}

// state reports whether the half at offset, or the half it copies, was
// ended (done) or is being ended (busy).
func (s *txnState) state(offset, origin int64) (done, busy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range []int64{offset, origin} {
		if d, ok := s.resolved[o]; ok && o >= 0 {
			done, busy = done || d, busy || !d
		}
	}
	return done, busy && !done
}

// prune forgets resolved offsets below halfOffset once there are many.
func (s *txnState) prune(halfOffset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.resolved) <= txnResolvedKeep {
		return
	}
	below := make([]int64, 0, len(s.resolved))
	for o := range s.resolved {
		if o < halfOffset {
			below = append(below, o)
		}
	}
	slices.Sort(below)
	for _, o := range below[:max(0, len(below)-txnResolvedKeep/2)] {
		delete(s.resolved, o)
	}
}

// Register routes END_TRANSACTION to its handler on the
// EndTransactionExecutor (endTransactionThreadPoolNums).
func (s *Service) Register(t ProcessorTable) {
	t.Handle(protocol.ReqEndTransaction, EndTransactionExecutor, s.endTransaction)
}

// isHalfMessage reports whether a producer's message is a half message:
// TRAN_MSG=true as Java's SendMessageProcessor decides (except a pre-4.6.1
// client's retry of one, which has reconsume times and a delay level), or
// the SYSFLAG's PREPARED bits.
func isHalfMessage(m *record.Message) bool {
	if v, ok := record.Property(m.Properties, record.PropertyTransactionPrepared); ok && strings.EqualFold(v, "true") {
		if _, delayed := record.Property(m.Properties, record.PropertyDelayTimeLevel); m.ReconsumeTimes > 0 && delayed {
			return false
		}
		return true
	}
	return record.TransactionType(m.SysFlag) == record.TransactionPrepared
}

// DivertHalf diverts a half (prepared) message to the half topic
// (parseHalfMessageInner); nil means "store as is". The send is answered
// with the half's offset message id and queue offset, which the producer
// names in END_TRANSACTION.
func (s *Service) DivertHalf(m *record.Message) *remoting.Command {
	if !isHalfMessage(m) {
		return nil
	}
	if resp := s.ensureTxnTopics(); resp != nil {
		return resp
	}
	props := []byte(m.Properties)
	if uniq, ok := record.Property(m.Properties, record.PropertyUniqKey); ok {
		props = record.AppendProperty(props, PropertyTransactionID, uniq)
	}
	props = record.AppendProperty(props, record.PropertyRealTopic, m.Topic)
	props = record.AppendProperty(props, record.PropertyRealQueueID, strconv.Itoa(int(m.QueueID)))
	m.Properties = string(props)
	m.SysFlag = m.SysFlag&^record.TransactionMask | record.TransactionNot
	m.Topic, m.QueueID = protocol.TransHalfTopic, 0
	return nil
}

// ensureTxnTopics creates the half and op topics (one queue each), as
// Java's TopicConfigManager does at start.
func (s *Service) ensureTxnTopics() *remoting.Command {
	if s.st.topics.Load() {
		return nil
	}
	for _, topic := range []string{protocol.TransHalfTopic, protocol.TransOpHalfTopic} {
		if err := s.deps.CreateTopic(protocol.NewTopicConfig(topic, 1)); err != nil {
			return refusef(protocol.RespSystemError, "create topic %s: %v", topic, err)
		}
	}
	s.st.topics.Store(true)
	return nil
}

// parseEndTxnHeader decodes END_TRANSACTION's header and refuses an
// unknown decision.
func parseEndTxnHeader(ext remoting.ExtFields) (protocol.EndTransactionHeader, error) {
	h, err := protocol.ParseEndTransactionHeader(ext)
	if err != nil {
		return h, err
	}
	switch h.CommitOrRollback {
	case record.TransactionNot, record.TransactionCommit, record.TransactionRollback:
		return h, nil
	}
	return h, remoting.NewBadRequest("commitOrRollback %d is not 0 (unknown), 8 (commit) or 12 (rollback)", h.CommitOrRollback)
}

// endTransaction handles END_TRANSACTION (37), usually sent oneway: commit
// stores the half in its real topic and writes an op record; rollback
// writes only the op record; unknown (0) leaves the half to the check
// service.
func (s *Service) endTransaction(ctx context.Context, conn *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	if s.cfg.Slave {
		return refusef(protocol.RespSlaveNotAvailable, "Message store is slave mode, so end transaction is forbidden."), nil
	}
	h, err := parseEndTxnHeader(req.ExtFields)
	if err != nil {
		return nil, err
	}
	if h.CommitOrRollback == record.TransactionNot {
		s.log.Debug("end transaction with an unknown state, left to the check", "producerGroup", h.ProducerGroup,
			"msgId", h.MsgID, "fromCheck", h.FromTransactionCheck, "remote", conn.RemoteAddr().String(), "remark", req.Remark)
		return remoting.NewResponse(protocol.RespSuccess, "transaction state unknown: the broker will check it"), nil
	}
	rec, resp := s.preparedMessage(h)
	if resp != nil {
		return resp, nil
	}
	if !h.FromTransactionCheck {
		if imm, ok := immunityTime(&rec, s.st.checkTimeout(), true); ok && time.Since(time.UnixMilli(rec.BornTimestamp)) > imm {
			s.log.Warn("end transaction after the check immunity time refused; the check decides", "msgId", h.MsgID,
				"commitLogOffset", h.CommitLogOffset)
			return refusef(protocol.RespIllegalOperation, "the transaction ended after its check immunity time (%v): waiting for the check", imm), nil
		}
	}
	origin := preparedOrigin(&rec)
	if !s.st.claim(rec.QueueOffset, origin) {
		return remoting.NewResponse(protocol.RespSuccess, "the transaction was already ended"), nil
	}
	if h.CommitOrRollback == record.TransactionCommit {
		if resp := s.deps.StoreCommitted(ctx, committedMessage(&rec)); resp != nil {
			s.st.unclaim(rec.QueueOffset, origin)
			return resp, nil
		}
	}
	s.st.markResolved(rec.QueueOffset, origin)
	if h.CommitOrRollback == record.TransactionRollback {
		s.log.Debug("transaction rolled back", "producerGroup", h.ProducerGroup, "msgId", h.MsgID, "fromCheck", h.FromTransactionCheck)
	}
	if err := s.writeTxnOp(ctx, rec.QueueOffset, origin); err != nil {
		// Ended in memory, so this run neither checks it nor stores it
		// twice; after a restart it is checked again (as in RocketMQ).
		s.log.Error("transaction op record not stored", "halfOffset", rec.QueueOffset, "err", err)
	}
	return remoting.NewResponse(protocol.RespSuccess, ""), nil
}

// preparedMessage reads the half END_TRANSACTION names and checks it
// (checkPrepareMessage).
func (s *Service) preparedMessage(h protocol.EndTransactionHeader) (record.Record, *remoting.Command) {
	raw, err := s.store.ReadRecord(h.CommitLogOffset)
	if err != nil {
		return record.Record{}, remoting.NewResponse(protocol.RespSystemError, "Find prepared transaction message failed")
	}
	rec, err := record.Decode(raw, false)
	if err != nil || string(rec.Topic) != protocol.TransHalfTopic {
		return rec, remoting.NewResponse(protocol.RespSystemError, "Find prepared transaction message failed")
	}
	if pg, _ := rec.Property(record.PropertyProducerGroup); string(pg) != h.ProducerGroup {
		return rec, remoting.NewResponse(protocol.RespSystemError, "The producer group wrong")
	}
	if rec.QueueOffset != h.TranStateTableOffset {
		return rec, remoting.NewResponse(protocol.RespSystemError, "The transaction state table offset wrong")
	}
	if rec.PhysicalOffset != h.CommitLogOffset {
		return rec, remoting.NewResponse(protocol.RespSystemError, "The commit log offset wrong")
	}
	return rec, nil
}

// immunityTime is a half's CHECK_IMMUNITY_TIME_IN_SECONDS as a duration;
// false without the property. As in Java, END_TRANSACTION uses at least the
// transaction timeout (atLeastTimeout, TransactionalMessageUtil) while the
// scan takes the property as it is, or the timeout if it does not parse.
func immunityTime(rec *record.Record, timeout time.Duration, atLeastTimeout bool) (time.Duration, bool) {
	v, ok := rec.Property(PropertyCheckImmunityTime)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	imm := time.Duration(n) * time.Second
	switch {
	case err != nil && atLeastTimeout:
		imm = 0
	case err != nil || n == -1:
		imm = timeout
	}
	if atLeastTimeout && imm < timeout {
		imm = timeout
	}
	return imm, true
}

// preparedOrigin is the queue offset of the first half a re-put copy
// copies, -1 for a first half.
func preparedOrigin(rec *record.Record) int64 {
	v, ok := rec.Property(PropertyTransactionPreparedQueueOffset)
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// committedMessage is the half restored to its real topic and queue
// (endMessageTransaction): transaction bits COMMIT, the half's commit-log
// offset as PreparedTransactionOffset, without REAL_TOPIC, REAL_QID and
// TRAN_MSG. A DELAY level applies from here on, as Java's put hooks do.
func committedMessage(rec *record.Record) *record.Message {
	props := record.DecodeProperties(string(rec.Properties))
	topic := props[record.PropertyRealTopic]
	qid, _ := strconv.Atoi(props[record.PropertyRealQueueID])
	delete(props, record.PropertyRealTopic)
	delete(props, record.PropertyRealQueueID)
	delete(props, record.PropertyTransactionPrepared)
	m := &record.Message{
		Topic: topic, QueueID: int32(qid), Flag: rec.Flag,
		SysFlag:    rec.SysFlag&^(record.TransactionMask|record.FlagBornHostV6|record.FlagStoreHostV6) | record.TransactionCommit,
		Body:       rec.Body,
		Properties: record.EncodeProperties(props), BornTimestamp: rec.BornTimestamp, BornHost: rec.BornHost,
		StoreHost: rec.StoreHost, ReconsumeTimes: rec.ReconsumeTimes, PreparedTransactionOffset: rec.PhysicalOffset,
	}
	return m
}

// writeTxnOp stores the op record resolving the half at offset (and the
// first half it copies).
func (s *Service) writeTxnOp(ctx context.Context, offset, origin int64) error {
	if resp := s.ensureTxnTopics(); resp != nil {
		return fmt.Errorf("%w: %s", ErrOpNotStored, resp.Remark)
	}
	body := strconv.FormatInt(offset, 10)
	if origin >= 0 && origin != offset {
		body += "," + strconv.FormatInt(origin, 10)
	}
	props := record.AppendProperty(nil, record.PropertyTags, txnRemoveTag)
	props = record.AppendProperty(props, record.PropertyUniqKey, record.NewUniqID())
	props = record.AppendProperty(props, record.PropertyWaitStoreMsgOK, "false")
	m := &record.Message{
		Topic: protocol.TransOpHalfTopic, Body: []byte(body), Properties: string(props),
		BornTimestamp: time.Now().UnixMilli(), BornHost: s.deps.StoreHost(), StoreHost: s.deps.StoreHost(),
	}
	res, err := s.store.Put(ctx, m)
	if !res.Stored {
		if err == nil {
			return fmt.Errorf("%w: %s", ErrOpNotStored, res.Status)
		}
		return fmt.Errorf("%w: %s: %w", ErrOpNotStored, res.Status, err)
	}
	return nil
}

// ErrOpNotStored reports an op record the store did not take (the half
// is then checked again after a restart).
var ErrOpNotStored = errors.New("txn: transaction op record not stored")

// RefuseTxnInBatch refuses a batch message with transaction bits, as
// RocketMQ's CommitLog.asyncPutMessages does (MESSAGE_ILLEGAL): a batch
// cannot be a half message, and a PREPARED record outside the half topic
// would never be readable.
func RefuseTxnInBatch(m *record.Message) *remoting.Command {
	if record.TransactionType(m.SysFlag) != record.TransactionNot {
		return refusef(protocol.RespMessageIllegal, "a batch message cannot be transactional (SYSFLAG %#x)", m.SysFlag)
	}
	return nil
}

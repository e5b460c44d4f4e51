package txn

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// txnChecker is the check service's scan state (TransactionalMessageCheckService
// with TransactionalMessageServiceImpl.check). It is owned by the
// CheckLoop goroutine; the progress it persists is described in doc.go.
type txnChecker struct {
	s *Service
	// opNext is the next op record to read; opHalves holds what each read
	// op record at or above the persisted op offset names.
	opNext   int64
	opHalves map[int64][]int64
	// opSkipTo is where reading resumed after the op records below it were
	// cleaned; the op offset jumps the gap once it reaches it.
	opSkipTo int64
	loaded   bool
}

// CheckLoop runs a scan every TransactionCheckInterval on a master.
func (s *Service) CheckLoop() {
	if s.cfg.Slave {
		return
	}
	if resp := s.ensureTxnTopics(); resp != nil {
		s.log.Error("transaction topics not created", "err", resp.Remark)
	}
	c := &txnChecker{s: s, opHalves: make(map[int64][]int64)}
	t := time.NewTimer(s.st.checkInterval())
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			c.scan()
			t.Reset(s.st.checkInterval()) // read each time: UPDATE_BROKER_CONFIG may change it
		case <-s.st.kick:
			t.Reset(s.st.checkInterval())
		}
	}
}

// offset is the persisted progress through topic's queue 0, else its
// minimum offset (fetchConsumeOffset).
func (c *txnChecker) offset(topic string) int64 {
	if off, ok := c.s.offsets.Query(TransGroup, topic, 0); ok {
		return off
	}
	return c.s.store.MinOffset(topic, 0)
}

func (c *txnChecker) stopping() bool {
	select {
	case <-c.s.stop:
		return true
	default:
		return false
	}
}

// readOps reads the op records from opNext on, marking the halves they
// name resolved.
func (c *txnChecker) readOps() {
	s := c.s
	for !c.stopping() {
		res := s.store.Read(TransGroup, protocol.TransOpHalfTopic, 0, c.opNext, 32)
		if res.Status != ReadFound {
			switch {
			case res.NextBeginOffset > c.opNext && res.Status == ReadOffsetTooSmall:
				// Records below the queue's minimum were cleaned.
				s.log.Warn("transaction op queue offset moved", "from", c.opNext, "to", res.NextBeginOffset)
				c.opNext, c.opSkipTo = res.NextBeginOffset, res.NextBeginOffset
				continue
			case res.NextBeginOffset < c.opNext && res.Status == ReadOffsetOverflowBadly:
				// The queue is shorter than the progress (a crash lost its
				// tail): go back to its end, as Java's OFFSET_ILLEGAL does.
				s.log.Warn("transaction op queue offset beyond its end", "from", c.opNext, "to", res.NextBeginOffset)
				for o := range c.opHalves {
					if o >= res.NextBeginOffset {
						delete(c.opHalves, o)
					}
				}
				c.opNext = res.NextBeginOffset
				s.offsets.Commit(TransGroup, protocol.TransOpHalfTopic, 0, c.opNext)
				return
			case res.NextBeginOffset > c.opNext && res.Status == ReadOffsetFoundNull:
				s.log.Error("unreadable transaction op record skipped", "offset", c.opNext)
				c.opHalves[c.opNext] = nil
				c.opNext++
				continue
			}
			return
		}
		if len(res.Buffer) == 0 {
			return
		}
		for buf := res.Buffer; len(buf) > 0; {
			rec, err := record.Decode(buf, false)
			if err != nil {
				s.log.Error("undecodable transaction op record skipped", "offset", c.opNext, "err", err)
				c.opHalves[c.opNext] = nil
				c.opNext++
				break
			}
			buf = buf[rec.TotalSize:]
			var halves []int64
			if tag, _ := rec.Property(record.PropertyTags); string(tag) == txnRemoveTag {
				for f := range strings.SplitSeq(string(rec.Body), ",") {
					if n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64); err == nil && n >= 0 {
						halves = append(halves, n)
					}
				}
			} else {
				s.log.Error("transaction op record with an unknown tag skipped", "offset", rec.QueueOffset)
			}
			s.st.markResolved(halves...)
			c.opHalves[rec.QueueOffset] = halves
			c.opNext = rec.QueueOffset + 1
		}
	}
}

// scan checks the pending halves once.
func (c *txnChecker) scan() {
	s := c.s
	start := time.Now()
	timeout := s.st.checkTimeout()
	halfOffset, opOffset := c.offset(protocol.TransHalfTopic), c.offset(protocol.TransOpHalfTopic)
	if !c.loaded || c.opNext < opOffset {
		c.opNext, c.loaded = opOffset, true
	}
	c.readOps()

	i := halfOffset
	for !c.stopping() && time.Since(start) < txnScanLimit {
		res := s.store.Read(TransGroup, protocol.TransHalfTopic, 0, i, 1)
		if res.Status != ReadFound || len(res.Buffer) == 0 {
			moved := res.NextBeginOffset > i && (res.Status == ReadOffsetTooSmall || res.Status == ReadOffsetFoundNull) ||
				res.NextBeginOffset < i && res.Status == ReadOffsetOverflowBadly // a crash lost the queue's tail
			if !moved {
				break
			}
			s.log.Warn("transaction half queue offset moved", "from", i, "to", res.NextBeginOffset, "status", res.Status)
			i = res.NextBeginOffset
			continue
		}
		rec, err := record.Decode(res.Buffer, false)
		if err != nil {
			s.log.Error("undecodable half message skipped", "offset", i, "err", err)
			i++
			continue
		}
		origin := preparedOrigin(&rec)
		if done, busy := s.st.state(rec.QueueOffset, origin); done {
			i++
			continue
		} else if busy {
			break // an END_TRANSACTION is storing it: look again next time
		}
		checks, discard := checkTimes(&rec, s.st.maxChecks())
		if discard {
			c.discard(&rec)
			i++
			continue
		}
		if rec.StoreTimestamp >= start.UnixMilli() {
			break // stored during this scan: next time
		}
		age := time.Since(time.UnixMilli(rec.BornTimestamp))
		if imm, ok := immunityTime(&rec, timeout, false); ok {
			if age <= imm {
				// Its own first-check delay: moved to the queue's tail
				// (putImmunityMsgBackToHalfQueue) so it holds up no other.
				if !c.putBack(&rec, origin) {
					break
				}
				i++
				continue
			}
		} else if age >= 0 && age <= timeout {
			break // too young; younger ones follow
		}
		// An END_TRANSACTION may have resolved it since the op records
		// were read.
		c.readOps()
		if done, busy := s.st.state(rec.QueueOffset, origin); done {
			i++
			continue
		} else if busy {
			break
		}
		if !c.check(&rec, checks, origin) {
			break // the copy was not stored: retry at the next scan
		}
		i++
	}

	if i != halfOffset {
		s.offsets.Commit(TransGroup, protocol.TransHalfTopic, 0, i)
	}
	newOp := opOffset
	for newOp < c.opNext {
		halves, ok := c.opHalves[newOp]
		if !ok && newOp < c.opSkipTo {
			newOp = c.opSkipTo // the cleaned gap: every record read lies below it
			continue
		}
		if !ok || slices.ContainsFunc(halves, func(h int64) bool { return h >= i }) {
			break
		}
		delete(c.opHalves, newOp)
		newOp++
	}
	if newOp != opOffset {
		s.offsets.Commit(TransGroup, protocol.TransOpHalfTopic, 0, newOp)
	}
	s.st.prune(i)
	s.log.Debug("transaction check done", "halfOffset", i, "opOffset", newOp, "took", time.Since(start))
}

// checkTimes is the half's TRANSACTION_CHECK_TIMES after this check
// (needDiscard): 1 for a first half; discard once it reached max.
func checkTimes(rec *record.Record, max int) (int, bool) {
	v, ok := rec.Property(PropertyTransactionCheckTimes)
	if !ok {
		return 1, false
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		n = -1 // Java's getInt failure: checked again
	}
	if n >= max {
		return n, true
	}
	return n + 1, false
}

// copyHalf is the half re-put at the half queue's tail
// (renewHalfMessageInner), with TRAN_PREPARED_QUEUE_OFFSET naming the first
// half and, when checks > 0, TRANSACTION_CHECK_TIMES set to it.
func (c *txnChecker) copyHalf(rec *record.Record, checks int, origin int64) (*record.Message, map[string]string) {
	props := record.DecodeProperties(string(rec.Properties))
	if checks > 0 {
		props[PropertyTransactionCheckTimes] = strconv.Itoa(checks)
	}
	if origin < 0 {
		origin = rec.QueueOffset
	}
	props[PropertyTransactionPreparedQueueOffset] = strconv.FormatInt(origin, 10)
	return &record.Message{
		Topic: protocol.TransHalfTopic, QueueID: 0, Flag: rec.Flag,
		SysFlag: rec.SysFlag &^ (record.FlagBornHostV6 | record.FlagStoreHostV6),
		Body:    rec.Body, Properties: record.EncodeProperties(props),
		BornTimestamp: rec.BornTimestamp, BornHost: rec.BornHost, StoreHost: c.s.deps.StoreHost(),
		ReconsumeTimes: rec.ReconsumeTimes, PreparedTransactionOffset: rec.PreparedTransactionOffset,
	}, props
}

// putBack re-puts a half within its immunity time, unchecked; false if the
// copy was not stored.
func (c *txnChecker) putBack(rec *record.Record, origin int64) bool {
	m, _ := c.copyHalf(rec, 0, origin)
	res, err := c.s.store.Put(c.s.ctx, m)
	if !res.Stored {
		c.s.log.Warn("half message copy not stored; retried at the next scan", "offset", rec.QueueOffset, "status", res.Status, "err", err)
		return false
	}
	return true
}

// check re-puts the half as a copy with its check count and sends the
// producer group CHECK_TRANSACTION_STATE for the copy. False if the copy
// was not stored.
func (c *txnChecker) check(rec *record.Record, checks int, origin int64) bool {
	s := c.s
	m, props := c.copyHalf(rec, checks, origin)
	res, err := s.store.Put(s.ctx, m)
	if !res.Stored || len(res.PhysOffsets) == 0 {
		s.log.Warn("half message copy not stored; checked at the next scan", "offset", rec.QueueOffset, "status", res.Status, "err", err)
		return false
	}
	physOff := res.PhysOffsets[0]
	group := props[record.PropertyProducerGroup]
	uniq := props[record.PropertyUniqKey]
	s.log.Info("checking transaction", "realTopic", props[record.PropertyRealTopic], "uniqKey", uniq,
		"offset", res.QueueOffset, "checks", checks, "producerGroup", group)

	conn := s.deps.ProducerConn(group, s.st.seq.Add(1))
	if conn == nil {
		s.log.Warn("transaction not checked: no live producer of its group", "producerGroup", group, "uniqKey", uniq)
		return true
	}
	// The body is the copy as Java's MessageDecoder.encode writes it, with
	// its real topic and queue.
	qid, _ := strconv.Atoi(props[record.PropertyRealQueueID])
	shown := *m
	shown.Topic, shown.QueueID = props[record.PropertyRealTopic], int32(qid)
	body, err := record.AppendEncode(nil, &shown, record.BodyCRC(m.Body), res.QueueOffset, physOff, res.StoreTimestamp)
	if err != nil {
		s.log.Error("check request body not encoded", "uniqKey", uniq, "err", err)
		return true
	}
	ext := remoting.ExtFields{"msgId": uniq, "transactionId": uniq, "offsetMsgId": record.OffsetMsgID(s.deps.StoreHost(), physOff),
		"topic": protocol.TransHalfTopic, "bname": s.cfg.BrokerName}
	ext.SetInt64("tranStateTableOffset", res.QueueOffset)
	ext.SetInt64("commitLogOffset", physOff)
	req := remoting.NewRequest(protocol.ReqCheckTransactionState, ext)
	req.Body = body
	if err := conn.Send(req); err != nil {
		s.log.Warn("check transaction state not sent", "producerGroup", group, "uniqKey", uniq, "err", err)
	}
	return true
}

// discard moves a half checked too often to TRANS_CHECK_MAX_TIME_TOPIC
// (DefaultTransactionalMessageCheckListener.resolveDiscardMsg).
func (c *txnChecker) discard(rec *record.Record) {
	s := c.s
	uniq, _ := rec.Property(record.PropertyUniqKey)
	realTopic, _ := rec.Property(record.PropertyRealTopic)
	s.log.Error("half message checked too many times, discarded to "+protocol.TransCheckMaxTimeTopic,
		"realTopic", string(realTopic), "uniqKey", string(uniq), "offset", rec.QueueOffset)
	tc := protocol.NewTopicConfig(protocol.TransCheckMaxTimeTopic, 1)
	tc.Perm = protocol.PermRead | protocol.PermWrite
	if err := s.deps.CreateTopic(tc); err != nil {
		s.log.Error("create topic failed", "topic", protocol.TransCheckMaxTimeTopic, "err", err)
		return
	}
	m := rec.Message()
	m.Topic, m.QueueID = protocol.TransCheckMaxTimeTopic, 0
	m.SysFlag &^= record.FlagBornHostV6 | record.FlagStoreHostV6
	if res, err := s.store.Put(s.ctx, &m); !res.Stored {
		s.log.Error("discarded half message not stored", "topic", protocol.TransCheckMaxTimeTopic, "status", res.Status, "err", err)
	}
}

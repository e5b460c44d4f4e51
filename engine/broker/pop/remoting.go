package pop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Register routes the POP request codes to the service: POP_MESSAGE,
// PEEK_MESSAGE, NOTIFICATION and POLLING_INFO on PopExecutor,
// ACK_MESSAGE, BATCH_ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME on
// AckExecutor.
func (s *Service) Register(t ProcessorTable) {
	t.Handle(protocol.ReqPopMessage, PopExecutor, s.popMessage)
	t.Handle(protocol.ReqPeekMessage, PopExecutor, s.peekMessage)
	t.Handle(protocol.ReqNotification, PopExecutor, s.notification)
	t.Handle(protocol.ReqPollingInfo, PopExecutor, s.pollingInfo)
	t.Handle(protocol.ReqAckMessage, AckExecutor, s.ackMessage)
	t.Handle(protocol.ReqBatchAckMessage, AckExecutor, s.batchAckMessage)
	t.Handle(protocol.ReqChangeMessageInvisibleTime, AckExecutor, s.changeInvisibleTime)
}

// errorResponse answers a service error with Java's code for it.
func errorResponse(err error) *remoting.Command {
	code := protocol.RespSystemError
	switch {
	case errors.Is(err, ErrTopicNotExist):
		code = protocol.RespTopicNotExist
	case errors.Is(err, ErrNoPermission):
		code = protocol.RespNoPermission
	case errors.Is(err, ErrBadRequest), errors.Is(err, ErrInvalidHandle):
		code = protocol.RespInvalidParameter
	case errors.Is(err, ErrNotStarted):
		code = protocol.RespServiceNotAvailable
	}
	return remoting.NewResponse(code, err.Error())
}

// popMessage serves POP_MESSAGE (200050): the messages, each re-encoded
// with its receipt handle in POP_CK (and a retry copy under the
// consumer's topic), concatenated in the body; PULL_NOT_FOUND when there
// were none, POLLING_TIMEOUT when a long poll ended without any.
func (s *Service) popMessage(ctx context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	ext := req.ExtFields
	group, err := ext.String("consumerGroup")
	if err != nil {
		return nil, err
	}
	topic, err := ext.String("topic")
	if err != nil {
		return nil, err
	}
	qid, err := ext.Int32("queueId")
	if err != nil {
		return nil, err
	}
	maxNums, err := ext.Int32("maxMsgNums")
	if err != nil {
		return nil, err
	}
	invisible, err := ext.Int64("invisibleTime")
	if err != nil {
		return nil, err
	}
	pollTime, err := ext.Int64("pollTime")
	if err != nil {
		return nil, err
	}
	initMode, err := ext.OptInt32("initMode", InitMin)
	if err != nil {
		return nil, err
	}
	order, err := ext.OptBool("order", false)
	if err != nil {
		return nil, err
	}
	if maxNums > maxBatch {
		return remoting.NewResponse(protocol.RespInvalidParameter, "the broker's pop maxMsgNums is at most 32"), nil
	}
	r := Request{Group: group, Topic: topic, QueueID: qid, MaxMessages: int(maxNums),
		Invisible: time.Duration(invisible) * time.Millisecond, Poll: time.Duration(max(pollTime, 0)) * time.Millisecond,
		FIFO: order, ExpressionType: ext.OptString("expType", ""), Expression: ext.OptString("exp", ""), InitMode: initMode}
	msgs, err := s.Pop(ctx, r)
	if err != nil {
		return errorResponse(err), nil
	}
	if len(msgs) == 0 {
		if pollTime > 0 {
			return remoting.NewResponse(protocol.RespPollingTimeout, "no message in the long poll"), nil
		}
		return remoting.NewResponse(protocol.RespPullNotFound, "no message"), nil
	}
	first, _ := ParseHandle(msgs[0].Handle)
	rh := protocol.PopMessageResponseHeader{PopTime: first.PopTime, InvisibleTime: invisible, ReviveQid: first.ReviveQid}
	var body []byte
	var keys, start []string
	idx := map[string]int{}
	var offs, counts [][]string
	for _, m := range msgs {
		h, _ := ParseHandle(m.Handle)
		t := topicNormal
		if h.Retry {
			t = topicRetry
		}
		key := t + " " + strconv.Itoa(int(h.QueueID))
		i, ok := idx[key]
		if !ok {
			i = len(keys)
			idx[key] = i
			keys = append(keys, key)
			start = append(start, key+" "+strconv.FormatInt(h.StartOffset, 10))
			offs = append(offs, nil)
			counts = append(counts, nil)
		}
		offs[i] = append(offs[i], strconv.FormatInt(h.Offset, 10))
		// orderCountInfo: the earlier deliveries of each message
		// (ExtraInfoUtil.buildQueueOffsetOrderCountInfo).
		counts[i] = append(counts[i], t+" qo"+strconv.Itoa(int(h.QueueID))+"%"+strconv.FormatInt(h.Offset, 10)+" "+
			strconv.Itoa(int(m.DeliveryAttempt-1)))
		if body, err = appendWithHandle(body, m, h); err != nil {
			return nil, fmt.Errorf("pop: encode popped message: %w", err)
		}
	}
	var offInfo, countInfo []string
	for i, k := range keys {
		offInfo = append(offInfo, k+" "+strings.Join(offs[i], ","))
		countInfo = append(countInfo, counts[i]...)
	}
	rh.StartOffsetInfo = strings.Join(start, ";")
	rh.MsgOffsetInfo = strings.Join(offInfo, ";")
	if order {
		rh.OrderCountInfo = strings.Join(countInfo, ";")
	}
	resp := remoting.NewResponse(protocol.RespSuccess, "FOUND")
	resp.ExtFields = rh.Fields()
	resp.Body = body
	return resp, nil
}

// appendWithHandle re-encodes a popped record with POP_CK set to its
// handle's ExtraInfo (and the topic the Go API put in it).
func appendWithHandle(dst []byte, m Message, h Handle) ([]byte, error) {
	r := m.Record
	msg := r.Message()
	msg.Properties = string(record.AppendProperty([]byte(msg.Properties), protocol.PropertyPopCK, h.ExtraInfo()))
	msg.SysFlag &^= record.FlagBornHostV6 | record.FlagStoreHostV6
	return record.AppendEncode(dst, &msg, r.BodyCRC, r.QueueOffset, r.PhysicalOffset, r.StoreTimestamp)
}

// ackHandle is the handle an ACK or CHANGE_INVISIBLETIME header names:
// extraInfo with the header's queue and offset.
func ackHandle(ext remoting.ExtFields) (group, topic string, h Handle, err error) {
	if group, err = ext.String("consumerGroup"); err != nil {
		return
	}
	if topic, err = ext.String("topic"); err != nil {
		return
	}
	var extra string
	if extra, err = ext.String("extraInfo"); err != nil {
		return
	}
	var off int64
	if off, err = ext.Int64("offset"); err != nil {
		return
	}
	var qid int32
	if qid, err = ext.Int32("queueId"); err != nil {
		return
	}
	fields := strings.Split(extra, " ")
	if len(fields) == 7 { // ExtraInfo without the message offset
		extra += " " + strconv.FormatInt(off, 10)
	}
	h, perr := ParseHandle(extra)
	if perr != nil {
		return group, topic, h, nil
	}
	h.Offset, h.QueueID = off, qid
	return group, topic, h, nil
}

// ackMessage serves ACK_MESSAGE (200051). As Java's, an ack of a message
// no longer in flight (acked, expired, revived) is answered SUCCESS and
// changes nothing; an extraInfo that does not parse is INVALID_PARAMETER.
func (s *Service) ackMessage(ctx context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, topic, h, err := ackHandle(req.ExtFields)
	if err != nil {
		return nil, err
	}
	if h.BrokerName == "" {
		return remoting.NewResponse(protocol.RespInvalidParameter, "bad extraInfo "+req.ExtFields["extraInfo"]), nil
	}
	if err := s.ackOffsets(ctx, group, topic, h, []int64{h.Offset}); err != nil && !errors.Is(err, ErrInvalidHandle) {
		return errorResponse(err), nil
	}
	return remoting.NewResponse(protocol.RespSuccess, ""), nil
}

// batchAckMessage serves BATCH_ACK_MESSAGE (200151): a JSON body of
// BatchAck entries, each the acked offsets of one pop of one queue.
func (s *Service) batchAckMessage(ctx context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	var body protocol.BatchAckMessageRequestBody
	if len(req.Body) == 0 {
		return remoting.NewResponse(protocol.RespInvalidParameter, "batch ack without body"), nil
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return remoting.NewResponse(protocol.RespInvalidParameter, "batch ack body: "+err.Error()), nil
	}
	for _, a := range body.Acks {
		if a.ConsumerGroup == "" || a.Topic == "" {
			return remoting.NewResponse(protocol.RespInvalidParameter, "batch ack entry without group or topic"), nil
		}
		var offs []int64
		for i, b := range a.BitSet {
			for bit := range 8 {
				if b&(1<<bit) != 0 {
					offs = append(offs, a.StartOffset+int64(i*8+bit))
				}
			}
		}
		if len(offs) == 0 {
			continue
		}
		h := Handle{StartOffset: a.StartOffset, PopTime: a.PopTime, InvisibleTime: a.InvisibleTime, ReviveQid: a.ReviveQueueID,
			Retry: a.Retry == topicRetry, BrokerName: s.cfg.BrokerName, QueueID: a.QueueID, Offset: offs[0], CommitLogOffset: -1}
		if err := s.AckBatch(a.ConsumerGroup, a.Topic, h, offs); err != nil && !errors.Is(err, ErrInvalidHandle) {
			return errorResponse(err), nil
		}
	}
	return remoting.NewResponse(protocol.RespSuccess, ""), nil
}

// changeInvisibleTime serves CHANGE_MESSAGE_INVISIBLETIME (200053); the
// response header's popTime, invisibleTime and reviveQid make the new
// handle. A message no longer in flight is NO_MESSAGE.
func (s *Service) changeInvisibleTime(ctx context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, topic, h, err := ackHandle(req.ExtFields)
	if err != nil {
		return nil, err
	}
	invisible, err := req.ExtFields.Int64("invisibleTime")
	if err != nil {
		return nil, err
	}
	if h.BrokerName == "" {
		return remoting.NewResponse(protocol.RespInvalidParameter, "bad extraInfo "+req.ExtFields["extraInfo"]), nil
	}
	if invisible <= 0 {
		return remoting.NewResponse(protocol.RespInvalidParameter, "invisibleTime must be positive"), nil
	}
	if !s.running() {
		return errorResponse(ErrNotStarted), nil
	}
	nh, err := s.changeInvisible(ctx, group, topic, h, time.Duration(invisible)*time.Millisecond)
	if errors.Is(err, ErrInvalidHandle) {
		return remoting.NewResponse(protocol.RespNoMessage, err.Error()), nil
	}
	if err != nil {
		return errorResponse(err), nil
	}
	resp := remoting.NewResponse(protocol.RespSuccess, "")
	resp.ExtFields = protocol.ChangeInvisibleTimeResponseHeader{PopTime: nh.PopTime, InvisibleTime: nh.InvisibleTime,
		ReviveQid: nh.ReviveQid}.Fields()
	return resp, nil
}

// peekMessage serves PEEK_MESSAGE (200052): up to maxMsgNums messages
// from the group's pop offsets, without leasing them.
func (s *Service) peekMessage(ctx context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	ext := req.ExtFields
	group, err := ext.String("consumerGroup")
	if err != nil {
		return nil, err
	}
	topic, err := ext.String("topic")
	if err != nil {
		return nil, err
	}
	qid, err := ext.Int32("queueId")
	if err != nil {
		return nil, err
	}
	maxNums, err := ext.Int32("maxMsgNums")
	if err != nil {
		return nil, err
	}
	if _, _, err := s.checkPop(Request{Group: group, Topic: topic, QueueID: qid, MaxMessages: int(maxNums), Invisible: 1}); err != nil {
		return errorResponse(err), nil
	}
	tc, _ := s.deps.Topic(topic)
	queues := []int32{qid}
	if qid < 0 {
		queues = queues[:0]
		for q := range tc.ReadQueueNums {
			queues = append(queues, q)
		}
	}
	var body []byte
	left := int(min(maxNums, maxBatch))
	for _, q := range queues {
		if left <= 0 {
			break
		}
		k := queueKey{group, topic, q}
		off, ok := s.deps.Offsets.Query(group, topic, q)
		if !ok {
			off = s.deps.Store.MinOffset(topic, q)
		}
		recs, _, err := s.read(k, off, left, nil)
		if err != nil {
			return errorResponse(err), nil
		}
		for _, r := range recs {
			m := r.Message()
			m.SysFlag &^= record.FlagBornHostV6 | record.FlagStoreHostV6
			if body, err = record.AppendEncode(body, &m, r.BodyCRC, r.QueueOffset, r.PhysicalOffset, r.StoreTimestamp); err != nil {
				return nil, fmt.Errorf("pop: encode peeked message: %w", err)
			}
			left--
		}
	}
	if len(body) == 0 {
		return remoting.NewResponse(protocol.RespPullNotFound, "no message"), nil
	}
	resp := remoting.NewResponse(protocol.RespSuccess, "FOUND")
	resp.Body = body
	return resp, nil
}

// hasMessage reports whether group has unread messages of topic (or its
// retry topic) on queue qid (-1: any).
func (s *Service) hasMessage(group, topic string, qid int32) bool {
	for _, t := range []string{topic, RetryTopic(group, topic)} {
		tc, ok := s.deps.Topic(t)
		if !ok {
			continue
		}
		for q := range tc.ReadQueueNums {
			if qid >= 0 && t == topic && q != qid {
				continue
			}
			off, ok := s.deps.Offsets.Query(group, t, q)
			if !ok {
				off = s.deps.Store.MinOffset(t, q)
			}
			if off < s.deps.Store.MaxOffset(t, q) {
				return true
			}
		}
	}
	return false
}

// notification serves NOTIFICATION (200054): hasMsg once the group has
// something to pop of the topic, waiting up to pollTime.
func (s *Service) notification(ctx context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	ext := req.ExtFields
	group, err := ext.String("consumerGroup")
	if err != nil {
		return nil, err
	}
	topic, err := ext.String("topic")
	if err != nil {
		return nil, err
	}
	qid, err := ext.Int32("queueId")
	if err != nil {
		return nil, err
	}
	pollTime, err := ext.Int64("pollTime")
	if err != nil {
		return nil, err
	}
	if _, err := ext.OptBool("order", false); err != nil {
		return nil, err
	}
	if _, _, err := s.checkPop(Request{Group: group, Topic: topic, QueueID: qid, MaxMessages: 1, Invisible: 1}); err != nil {
		return errorResponse(err), nil
	}
	deadline := s.now().Add(time.Duration(max(pollTime, 0)) * time.Millisecond)
	has := false
	for {
		w := s.polls.watch(topic, RetryTopic(group, topic))
		has = s.hasMessage(group, topic, qid)
		left := deadline.Sub(s.now())
		if has || left <= 0 {
			s.polls.unwatch(w)
			break
		}
		t := time.NewTimer(left)
		select {
		case <-w.a:
		case <-w.b:
		case <-t.C:
		case <-ctx.Done():
		case <-s.stop:
		}
		t.Stop()
		s.polls.unwatch(w)
		if ctx.Err() != nil || !s.running() {
			break
		}
	}
	resp := remoting.NewResponse(protocol.RespSuccess, "")
	resp.ExtFields = remoting.ExtFields{"hasMsg": strconv.FormatBool(has), "pollingFull": "false"}
	return resp, nil
}

// pollingInfo serves POLLING_INFO (200055): the pops waiting on the topic.
func (s *Service) pollingInfo(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	ext := req.ExtFields
	if _, err := ext.String("consumerGroup"); err != nil {
		return nil, err
	}
	topic, err := ext.String("topic")
	if err != nil {
		return nil, err
	}
	if _, err := ext.Int32("queueId"); err != nil {
		return nil, err
	}
	if _, ok := s.deps.Topic(topic); !ok {
		return errorResponse(fmt.Errorf("%w: %s", ErrTopicNotExist, topic)), nil
	}
	resp := remoting.NewResponse(protocol.RespSuccess, "")
	resp.ExtFields = remoting.ExtFields{"pollingNum": strconv.Itoa(s.Polling(topic))}
	return resp, nil
}

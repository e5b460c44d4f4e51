package broker

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"unsafe"

	"github.com/brokerlab/brokerlab/engine/broker/delay"
	"github.com/brokerlab/brokerlab/engine/broker/txn"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Message properties the broker reads or writes besides record's.
const (
	PropertyRetryTopic        = "RETRY_TOPIC"
	PropertyOriginMessageID   = "ORIGIN_MESSAGE_ID"
	PropertyMaxReconsumeTimes = "MAX_RECONSUME_TIMES"
)

// sendMessage handles SEND_MESSAGE (10) and SEND_MESSAGE_V2 (310) for op
// (op.sc, nil without send hooks, collects what the send hooks see). It
// returns the response for op.answer, or nil when it handed the wait for
// durability on (handOn): the waiter goroutine answers.
func (b *Broker) sendMessage(op *sendOp) *remoting.Command {
	ctx, conn, req, sc := op.ctx, op.conn, op.req, op.sc
	h, resp := b.openSend(conn, req, sc)
	if resp != nil {
		return resp
	}
	m := &op.msg
	*m = record.Message{
		Topic: h.Topic, Flag: h.Flag, SysFlag: h.SysFlag, Body: req.Body, Properties: h.Properties,
		BornTimestamp: h.BornTimestamp, BornHost: bornHost(conn), StoreHost: b.storeHost, ReconsumeTimes: h.ReconsumeTimes,
	}
	if resp := b.checkMessage(m); resp != nil {
		return resp
	}
	b.replies.NoteRequester(conn, m.Properties) // reply/
	tc, resp := b.topicForSend(h.Topic, h.DefaultTopic, h.DefaultTopicQueueNums)
	if resp != nil {
		return resp
	}
	if resp := checkTopicMessageType(tc, m.Properties); resp != nil { // topictype.go
		return resp
	}
	queueID, resp := b.pickQueue(tc, h.QueueID)
	if resp != nil {
		return resp
	}
	m.QueueID = queueID
	if isRetryTopic(m.Topic) {
		if resp := b.retryOrDeadLetter(m, h, req.ExtFields); resp != nil {
			return resp
		}
	}
	op.uniq = b.addSendProperties(m)
	b.applyDelay(m)
	if resp := b.delay.DivertTimer(m); resp != nil {
		return resp
	}
	op.recall = delay.RecallHandle(m, b.cfg.BrokerName) // "" unless timed
	if resp := b.txn.DivertHalf(m); resp != nil {
		return resp
	}
	op.topic, op.bodyLen, op.queueID = h.Topic, len(m.Body), queueID

	sp, staged := b.store.(StagedPutter)
	if !staged {
		res, err := b.store.Put(ctx, m)
		return b.sendAnswer(op, res, err)
	}
	res, wait, err := sp.AppendStaged(ctx, m)
	if !wait {
		return b.sendAnswer(op, res, err)
	}
	// The message is appended; its producer waits for the flush policy
	// (or a slave). A waiter goroutine waits and answers, so this send
	// worker takes the next send and the group commit can serve them all.
	op.sp, op.res = sp, res
	if b.handOn(op) {
		return nil
	}
	res, err = sp.WaitStaged(ctx, res)
	return b.sendAnswer(op, res, err)
}

// addSendProperties adds UNIQ_KEY (when the producer set none) and
// CLUSTER to m's properties, built in one buffer that becomes the string
// (one allocation), and returns the message's UNIQ_KEY (a substring of the
// new properties when it was added).
func (b *Broker) addSendProperties(m *record.Message) string {
	uniq, ok := record.Property(m.Properties, record.PropertyUniqKey)
	n := len(m.Properties) + len(record.PropertyCluster) + len(b.cfg.ClusterName) + 3
	if !ok {
		n += len(record.PropertyUniqKey) + record.UniqIDLen + 3
	}
	props := append(make([]byte, 0, n), m.Properties...)
	start, end := 0, 0
	if !ok {
		props = record.AppendProperty(props, record.PropertyUniqKey, "")
		props = props[:len(props)-1] // AppendProperty ended the (empty) value; the id goes there
		start = len(props)
		props = record.AppendNewUniqID(props)
		end = len(props)
		props = append(props, record.PropertySeparator)
	}
	props = record.AppendProperty(props, record.PropertyCluster, b.cfg.ClusterName)
	// props was made here and is not written after this: the string may
	// share its bytes (a []byte→string copy would be a second allocation).
	m.Properties = unsafe.String(unsafe.SliceData(props), len(props))
	if !ok {
		uniq = m.Properties[start:end]
	}
	return uniq
}

// sendAnswer records a single send's put (hooks, stages, traffic) and
// builds its response: a stored send's in op (no allocation).
func (b *Broker) sendAnswer(op *sendOp, res PutResult, err error) *remoting.Command {
	b.sendStored(op.sc, op.req, op.queueID, 1, res)
	b.admin.Traffic.CountPut(op.topic, 1, op.bodyLen, res.Status.Stored())
	phys, ok := res.firstPhys()
	if !res.Status.Stored() || !ok {
		return putResponse(res, err)
	}
	code, remark := putCode(res, err)
	return op.storedResponse(code, remark, phys, res.QueueOffset)
}

// openSend is how every send starts: a slave refuses it, else its header
// is parsed (a bad one answered) and the send hooks see it begin. A non-nil
// response is the send's answer.
func (b *Broker) openSend(conn *remoting.Conn, req *remoting.Command, sc *SendContext) (protocol.SendMessageHeader, *remoting.Command) {
	if resp := b.refuseOnSlave(); resp != nil {
		return protocol.SendMessageHeader{}, resp
	}
	h, err := protocol.ParseSendMessageHeader(req.ExtFields)
	if err != nil {
		return h, conn.BadRequest(req, err)
	}
	b.sendBegin(sc, &h)
	return h, nil
}

// sendBatch handles SEND_BATCH_MESSAGE (320): one topic and queue, the body
// a concatenation of batch items.
func (b *Broker) sendBatch(ctx context.Context, conn *remoting.Conn, req *remoting.Command, sc *SendContext) *remoting.Command {
	h, resp := b.openSend(conn, req, sc)
	if resp != nil {
		return resp
	}
	if isRetryTopic(h.Topic) {
		return responsef(protocol.RespMessageIllegal, "batch request does not support retry group %s", h.Topic)
	}
	items, err := record.DecodeBatch(req.Body)
	if err != nil {
		return responsef(protocol.RespMessageIllegal, "bad batch body: %v", err)
	}
	born := bornHost(conn)
	msgs := make([]*record.Message, len(items))
	for i, it := range items {
		m := &record.Message{
			Topic: h.Topic, Flag: it.Flag, SysFlag: h.SysFlag, Body: it.Body, Properties: it.Properties,
			BornTimestamp: h.BornTimestamp, BornHost: born, StoreHost: b.storeHost, ReconsumeTimes: h.ReconsumeTimes,
		}
		if resp := b.checkBatchItem(m); resp != nil {
			return resp
		}
		if resp := delay.RefuseTimerInBatch(m); resp != nil {
			return resp
		}
		if resp := txn.RefuseTxnInBatch(m); resp != nil {
			return resp
		}
		msgs[i] = m
	}
	tc, resp := b.topicForSend(h.Topic, h.DefaultTopic, h.DefaultTopicQueueNums)
	if resp != nil {
		return resp
	}
	for _, m := range msgs {
		if resp := checkTopicMessageType(tc, m.Properties); resp != nil { // topictype.go
			return resp
		}
	}
	queueID, resp := b.pickQueue(tc, h.QueueID)
	if resp != nil {
		return resp
	}
	for _, m := range msgs {
		m.QueueID = queueID
	}
	res, err := b.store.PutBatch(ctx, msgs)
	b.sendStored(sc, req, queueID, len(msgs), res)
	b.admin.Traffic.CountPut(h.Topic, len(msgs), bodyBytes(msgs), res.Status.Stored())
	resp = putResponse(res, err)
	if res.Status.Stored() && len(res.PhysOffsets) > 0 {
		var ids strings.Builder
		for i, off := range res.PhysOffsets {
			if i > 0 {
				ids.WriteByte(',')
			}
			ids.WriteString(record.OffsetMsgID(b.storeHost, off))
		}
		ext := resp.Ext()
		ext["msgId"] = ids.String()
		ext.SetInt32("queueId", queueID)
		ext.SetInt64("queueOffset", res.QueueOffset)
		ext["MSG_REGION"] = "DefaultRegion"
		ext["TRACE_ON"] = "true"
	}
	return resp
}

// checkMessage applies the broker's message checks to a single send's
// message; an empty body is refused (record.Validate), as Java's store hook
// refuses the null body of a request without body bytes. Half (prepared)
// messages pass: applyTransaction stores them in the half topic (txn.go).
func (b *Broker) checkMessage(m *record.Message) *remoting.Command {
	return b.checkValidated(m, record.Validate(m, b.cfg.MaxBodySize))
}

// checkBatchItem is checkMessage for a batch item or a reply, whose body
// may be empty: Java's store hook sees a batch's whole body, and
// ReplyMessageProcessor pushes a reply before it tries to store it.
func (b *Broker) checkBatchItem(m *record.Message) *remoting.Command {
	return b.checkValidated(m, record.ValidateBatchItem(m, b.cfg.MaxBodySize))
}

// checkValidated answers the outcome err of validating m, then refuses the
// schedule topic.
func (b *Broker) checkValidated(m *record.Message, err error) *remoting.Command {
	if err != nil {
		return validationResponse(err)
	}
	if m.Topic == protocol.ScheduleTopic {
		return responsef(protocol.RespNoPermission, "sending message to topic[%s] is forbidden", m.Topic)
	}
	return nil
}

func validationResponse(err error) *remoting.Command {
	switch {
	case errors.Is(err, record.ErrTopicInvalid), errors.Is(err, record.ErrTopicTooLong):
		return remoting.NewResponse(protocol.RespInvalidParameter, err.Error())
	case errors.Is(err, record.ErrTopicNotSendable):
		return remoting.NewResponse(protocol.RespNoPermission, err.Error())
	default:
		return remoting.NewResponse(protocol.RespMessageIllegal, err.Error())
	}
}

// topicForSend returns the config of a topic a producer sends to, creating
// it from defaultTopic (auto-creation) or as a retry topic if needed. A
// topic created on first send — or one whose creation no name server has
// confirmed yet — is answered only once every name server took it (an
// error naming those that did not, the topic kept), as an admin create is.
func (b *Broker) topicForSend(topic, defaultTopic string, defaultQueueNums int32) (protocol.TopicConfig, *remoting.Command) {
	tc, ver, ok := b.topics.GetVersioned(topic)
	if !ok {
		var err error
		switch {
		case isRetryTopic(topic):
			tc, _, ver, err = b.topics.CreateIfAbsent(protocol.NewTopicConfig(topic, 1))
		case b.admin.AutoCreateTopic(): // cfg.AutoCreateTopic, live (admin/config.go)
			def, found := b.topics.Get(defaultTopic)
			if !found || def.Perm&protocol.PermInherit == 0 {
				return tc, responsef(protocol.RespTopicNotExist, "topic[%s] not exist, apply first please!", topic)
			}
			n := def.WriteQueueNums
			if defaultQueueNums > 0 {
				n = min(n, defaultQueueNums)
			}
			created := protocol.NewTopicConfig(topic, n)
			created.Perm = def.Perm &^ protocol.PermInherit
			tc, _, ver, err = b.topics.CreateIfAbsent(created)
			if err == nil {
				b.log.Info("auto-created topic", "topic", topic, "queues", n, "from", defaultTopic)
			}
		default:
			return tc, responsef(protocol.RespTopicNotExist, "topic[%s] not exist, apply first please!", topic)
		}
		if err != nil {
			return tc, responsef(protocol.RespSystemError, "create topic %s: %v", topic, err)
		}
	}
	if resp := b.routeResponse(topic, "created", ver); resp != nil {
		return tc, resp
	}
	if !writable(tc) {
		return tc, responsef(protocol.RespNoPermission, "the topic[%s] sending message is forbidden", topic)
	}
	return tc, nil
}

// pickQueue checks a producer's queue id; a negative one picks a write
// queue round robin.
func (b *Broker) pickQueue(tc protocol.TopicConfig, queueID int32) (int32, *remoting.Command) {
	if queueID < 0 {
		if tc.WriteQueueNums <= 0 {
			return 0, responsef(protocol.RespNoPermission, "topic[%s] has no write queue", tc.TopicName)
		}
		return int32(b.queueSeq.Add(1) % uint32(tc.WriteQueueNums)), nil
	}
	if queueID >= max(tc.WriteQueueNums, tc.ReadQueueNums) {
		return 0, responsef(protocol.RespInvalidParameter, "queueId[%d] is illegal, topic:[%s] topicConfig.writeQueueNums:[%d]",
			queueID, tc.TopicName, tc.WriteQueueNums)
	}
	return queueID, nil
}

// retryOrDeadLetter handles a message a client sends to %RETRY%<group>
// itself (the Go client's fallback when CONSUMER_SEND_MSG_BACK fails): once
// its reconsumeTimes exceeds the max it goes to %DLQ%<group> without delay.
// As in Java's SendMessageProcessor the test is reconsumeTimes > max (the
// sender already counted this attempt: the Go client sends the stored
// count + 1), where CONSUMER_SEND_MSG_BACK tests the stored count ≥ max;
// the max is the header's maxReconsumeTimes when present, else the
// broker's.
func (b *Broker) retryOrDeadLetter(m *record.Message, h protocol.SendMessageHeader, ext remoting.ExtFields) *remoting.Command {
	maxTimes := b.admin.RetryMaxTimes(strings.TrimPrefix(m.Topic, record.RetryTopicPrefix))
	if _, ok := ext["l"]; ok {
		maxTimes = h.MaxReconsumeTimes
	} else if _, ok := ext["maxReconsumeTimes"]; ok {
		maxTimes = h.MaxReconsumeTimes
	}
	if m.ReconsumeTimes <= maxTimes {
		return nil
	}
	group := strings.TrimPrefix(m.Topic, record.RetryTopicPrefix)
	dlq, resp := b.deadLetterTopic(group)
	if resp != nil {
		return resp
	}
	m.Topic, m.QueueID = dlq.TopicName, 0
	m.Properties = record.RemoveProperties(m.Properties, record.PropertyDelayTimeLevel)
	return nil
}

// deadLetterTopic returns (creating) the DLQ topic of group: one queue,
// readable so operators can drain it.
func (b *Broker) deadLetterTopic(group string) (protocol.TopicConfig, *remoting.Command) {
	tc, _, ver, err := b.topics.CreateIfAbsent(protocol.NewTopicConfig(protocol.DLQTopic(group), 1))
	if err != nil {
		return tc, responsef(protocol.RespSystemError, "create topic %s: %v", protocol.DLQTopic(group), err)
	}
	if resp := b.routeResponse(tc.TopicName, "created", ver); resp != nil {
		return tc, resp
	}
	if !writable(tc) {
		return tc, responsef(protocol.RespNoPermission, "the topic[%s] sending message is forbidden", tc.TopicName)
	}
	return tc, nil
}

// applyDelay redirects a message with a DELAY level to the schedule topic's
// queue level-1, keeping its destination in REAL_TOPIC and REAL_QID.
func (b *Broker) applyDelay(m *record.Message) {
	v, ok := record.Property(m.Properties, record.PropertyDelayTimeLevel)
	if !ok {
		return
	}
	level, err := strconv.Atoi(v)
	if err != nil || level <= 0 {
		return
	}
	if tt := record.TransactionType(m.SysFlag); tt == record.TransactionPrepared || tt == record.TransactionRollback {
		return
	}
	level = min(level, len(b.cfg.DelayLevels))
	props := record.AppendProperty([]byte(m.Properties), record.PropertyRealTopic, m.Topic)
	props = record.AppendProperty(props, record.PropertyRealQueueID, strconv.Itoa(int(m.QueueID)))
	if level != mustAtoi(v) {
		props = []byte(setProperty(string(props), record.PropertyDelayTimeLevel, strconv.Itoa(level)))
	}
	m.Properties = string(props)
	m.Topic, m.QueueID = protocol.ScheduleTopic, int32(level-1)
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// putResponse maps a put's status to its response code
// (handlePutMessageResult).
func putResponse(res PutResult, err error) *remoting.Command {
	return remoting.NewResponse(putCode(res, err))
}

// putCode is putResponse's code and remark.
func putCode(res PutResult, err error) (code int32, remark string) {
	if err != nil {
		remark = err.Error()
	}
	switch res.Status {
	case PutOK:
		code = protocol.RespSuccess
	case PutFlushDiskTimeout:
		code = protocol.RespFlushDiskTimeout
	case PutFlushSlaveTimeout:
		code = protocol.RespFlushSlaveTimeout
	case PutSlaveNotAvailable:
		code = protocol.RespSlaveNotAvailable
	case PutServiceNotAvailable:
		code = protocol.RespServiceNotAvailable
		if remark == "" {
			remark = "service not available now, maybe disk full or the broker is stopping"
		}
	case PutMessageIllegal, PutPropertiesSizeExceeded:
		code = protocol.RespMessageIllegal
		if remark == "" {
			remark = "the message is illegal, maybe msg body or properties length not matched"
		}
	case PutOSPageCacheBusy:
		code = protocol.RespSystemBusy
		remark = "[PC_SYNCHRONIZED]broker busy, start flow control for a while"
	default:
		code = protocol.RespSystemError
		if remark == "" {
			remark = "put message failed: " + res.Status.String()
		}
	}
	if code == protocol.RespSuccess && err != nil {
		code = protocol.RespSystemError
	}
	return code, remark
}

// bornHost is the producer's address as the connection sees it.
func bornHost(conn *remoting.Conn) netip.AddrPort {
	if ta, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		return ta.AddrPort()
	}
	if ap, err := netip.ParseAddrPort(conn.RemoteAddr().String()); err == nil {
		return ap
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 0)
}

// setProperty sets name to value in an encoded properties string.
func setProperty(props, name, value string) string {
	m := record.DecodeProperties(props)
	m[name] = value
	return record.EncodeProperties(m)
}

// bodyBytes is the total body size of a batch.
func bodyBytes(ms []*record.Message) int {
	n := 0
	for _, m := range ms {
		n += len(m.Body)
	}
	return n
}

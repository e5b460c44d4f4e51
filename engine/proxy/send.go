package proxy

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Send limits (ProxyConfig defaults).
const (
	maxDelay            = 24 * time.Hour // timerMaxDelaySec 3 days in the broker; the proxy allows 1 day by default
	maxTxnRecovery      = time.Hour
	maxMessageGroupSize = 64
	txnRecordTTL        = 6 * time.Hour
)

// txnRecord locates a half message for END_TRANSACTION.
type txnRecord struct {
	group           string
	queueOffset     int64
	commitLogOffset int64
	msgID           string
	added           time.Time
}

// txnTable maps "topic\x00transactionId" to its half message. Safe for
// concurrent use; records older than txnRecordTTL are dropped as new ones come.
type txnTable struct {
	mu   sync.Mutex
	m    map[string]txnRecord
	puts int
}

func (t *txnTable) init() { t.m = make(map[string]txnRecord) }

func (t *txnTable) put(topic, id string, r txnRecord) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r.added = time.Now()
	t.m[topic+"\x00"+id] = r
	if t.puts++; t.puts%1024 == 0 {
		for k, v := range t.m {
			if time.Since(v.added) > txnRecordTTL {
				delete(t.m, k)
			}
		}
	}
}

func (t *txnTable) take(topic, id string) (txnRecord, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.m[topic+"\x00"+id]
	return r, ok
}

func (t *txnTable) remove(topic, id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, topic+"\x00"+id)
}

// sendError is a refusal before the broker was asked.
type sendError struct {
	code v2.Code
	msg  string
}

// SendMessage stores each message through the broker's SEND_MESSAGE_V2
// (the topic is the producer group, as RocketMQ's proxy does).
func (s *Server) SendMessage(ctx context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	msgs := req.GetMessages()
	if len(msgs) == 0 {
		return &v2.SendMessageResponse{Status: newStatus(v2.Code_MESSAGE_CORRUPTED, "no message to send")}, nil
	}
	topic := msgs[0].GetTopic().GetName()
	for _, m := range msgs[1:] {
		if m.GetTopic().GetName() != topic {
			return &v2.SendMessageResponse{Status: newStatus(v2.Code_MESSAGE_CORRUPTED, "topic in message is not same")}, nil
		}
	}
	tc, ok := s.topicConfig(topic)
	if !ok {
		return &v2.SendMessageResponse{Status: newStatus(v2.Code_TOPIC_NOT_FOUND, "topic "+topic+" not found")}, nil
	}
	entries := make([]*v2.SendResultEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = s.sendOne(ctx, tc, m)
	}
	st := entries[0].Status
	for _, e := range entries[1:] {
		if e.Status.Code != st.Code {
			st = newStatus(v2.Code_MULTIPLE_RESULTS, "")
			break
		}
	}
	return &v2.SendMessageResponse{Status: st, Entries: entries}, nil
}

func (s *Server) sendOne(ctx context.Context, tc protocol.TopicConfig, m *v2.Message) *v2.SendResultEntry {
	h, props, serr := s.buildSend(tc, m)
	if serr != nil {
		return &v2.SendResultEntry{Status: newStatus(serr.code, serr.msg)}
	}
	ext := h.ExtFields(true)
	if err := s.authorize(ctx, protocol.ReqSendMessageV2, ext, m.Body); err != nil {
		return &v2.SendResultEntry{Status: errStatus(err)}
	}
	r := remoting.NewRequest(protocol.ReqSendMessageV2, ext)
	r.Body = m.Body
	resp, err := s.invoke(ctx, r)
	if err != nil {
		return &v2.SendResultEntry{Status: errStatus(err)}
	}
	switch resp.Code {
	case protocol.RespSuccess:
	case protocol.RespFlushDiskTimeout, protocol.RespFlushSlaveTimeout, protocol.RespSlaveNotAvailable:
		return &v2.SendResultEntry{Status: newStatus(remotingCode(resp.Code), "send message failed, sendStatus="+resp.Remark)}
	default:
		return &v2.SendResultEntry{Status: respStatus(resp)}
	}
	uniq := props[record.PropertyUniqKey]
	txID := resp.ExtFields["transactionId"]
	if txID == "" {
		txID = uniq
	}
	qoff, _ := strconv.ParseInt(resp.ExtFields["queueOffset"], 10, 64)
	if h.SysFlag&record.TransactionPrepared != 0 {
		_, phys, err := record.ParseOffsetMsgID(resp.ExtFields["msgId"])
		if err == nil {
			s.txns.put(tc.TopicName, txID, txnRecord{group: h.ProducerGroup, queueOffset: qoff, commitLogOffset: phys, msgID: uniq})
		}
	}
	return &v2.SendResultEntry{Status: okStatus(), MessageId: uniq, TransactionId: txID, Offset: qoff,
		RecallHandle: resp.ExtFields["recallHandle"]}
}

// buildSend validates m as SendMessageActivity does and builds its header.
func (s *Server) buildSend(tc protocol.TopicConfig, m *v2.Message) (protocol.SendMessageHeader, map[string]string, *sendError) {
	var h protocol.SendMessageHeader
	sp := m.GetSystemProperties()
	if len(m.Body) == 0 {
		return h, nil, &sendError{v2.Code_MESSAGE_BODY_EMPTY, "message body cannot be empty"}
	}
	if len(m.Body) > s.cfg.MaxBodySize {
		return h, nil, &sendError{v2.Code_MESSAGE_BODY_TOO_LARGE, "message body cannot exceed the max " + strconv.Itoa(s.cfg.MaxBodySize)}
	}
	if sp.GetMessageId() == "" {
		return h, nil, &sendError{v2.Code_ILLEGAL_MESSAGE_ID, "message id cannot be empty"}
	}
	props := make(map[string]string, len(m.UserProperties)+8)
	for k, v := range m.UserProperties {
		if systemProperties[k] {
			return h, nil, &sendError{v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "property is used by system: " + k}
		}
		if hasControl(k) || hasControl(v) {
			return h, nil, &sendError{v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "property key or value contains a control character"}
		}
		props[k] = v
	}
	props[record.PropertyUniqKey] = sp.GetMessageId()
	if sp.Tag != nil {
		if strings.TrimSpace(sp.GetTag()) == "" || strings.Contains(sp.GetTag(), "|") || hasControl(sp.GetTag()) {
			return h, nil, &sendError{v2.Code_ILLEGAL_MESSAGE_TAG, "illegal tag"}
		}
		props[record.PropertyTags] = sp.GetTag()
	}
	for _, k := range sp.GetKeys() {
		if strings.TrimSpace(k) == "" || hasControl(k) {
			return h, nil, &sendError{v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot be blank or contain a control character"}
		}
	}
	if len(sp.GetKeys()) > 0 {
		props[record.PropertyKeys] = strings.Join(sp.GetKeys(), record.KeySeparator)
	}
	h.SysFlag = 0
	if sp.GetMessageType() == v2.MessageType_TRANSACTION {
		props[record.PropertyTransactionPrepared] = "true"
		h.SysFlag |= record.TransactionPrepared
		if d := sp.GetOrphanedTransactionRecoveryDuration(); d != nil {
			if d.AsDuration() > maxTxnRecovery {
				return h, nil, &sendError{v2.Code_BAD_REQUEST, "the max transaction recovery time of message is too large, max is " + maxTxnRecovery.String()}
			}
			props[propCheckImmunity] = strconv.FormatInt(int64(d.AsDuration()/time.Second), 10)
		}
	}
	if ts := sp.GetDeliveryTimestamp(); ts != nil {
		at := ts.AsTime()
		if time.Until(at) > maxDelay {
			return h, nil, &sendError{v2.Code_ILLEGAL_DELIVERY_TIME, "the max delay time of message is too large, max is " + maxDelay.String()}
		}
		props[propTimerDeliverMS] = strconv.FormatInt(at.UnixMilli(), 10)
	}
	if g := sp.GetMessageGroup(); g != "" {
		if strings.TrimSpace(g) == "" || hasControl(g) || len(g) > maxMessageGroupSize {
			return h, nil, &sendError{v2.Code_ILLEGAL_MESSAGE_GROUP, "illegal message group"}
		}
		props[propShardingKey] = g
	}
	if tc := sp.GetTraceContext(); tc != "" {
		props[propTraceContext] = tc
	}
	props[record.PropertyProducerGroup] = tc.TopicName
	if !s.cfg.SkipMessageTypeCheck {
		want, got := topicMessageType(tc), typeName(messageTypeOf(props))
		if got == typeUnspecified || got != want && want != typeMixed {
			return h, nil, &sendError{v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
				"TopicMessageType validate failed, the expected type is " + want + ", but actual type is " + got}
		}
	}
	h.ProducerGroup = tc.TopicName
	h.Topic = tc.TopicName
	h.DefaultTopic = "TBW102"
	h.DefaultTopicQueueNums = 4
	h.QueueID = -1
	if g := props[propShardingKey]; g != "" && tc.WriteQueueNums > 0 {
		hc := record.JavaStringHash(g)
		if hc < 0 {
			hc = -hc
		}
		h.QueueID = int32(int64(hc) % int64(tc.WriteQueueNums))
	}
	h.BornTimestamp = time.Now().UnixMilli()
	if bt := sp.GetBornTimestamp(); bt != nil {
		h.BornTimestamp = bt.AsTime().UnixMilli()
	}
	h.ReconsumeTimes = sp.GetDeliveryAttempt()
	h.Properties = record.EncodeProperties(props)
	return h, props, nil
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// EndTransaction commits or rolls back a half message the proxy sent or
// asked a producer about (END_TRANSACTION).
func (s *Server) EndTransaction(ctx context.Context, req *v2.EndTransactionRequest) (*v2.EndTransactionResponse, error) {
	topic := req.GetTopic().GetName()
	tr, ok := s.txns.take(topic, req.GetTransactionId())
	if !ok {
		return &v2.EndTransactionResponse{Status: newStatus(v2.Code_INVALID_TRANSACTION_ID, "transactionId "+req.GetTransactionId()+" not found")}, nil
	}
	var kind int32
	switch req.GetResolution() {
	case v2.TransactionResolution_COMMIT:
		kind = record.TransactionCommit
	case v2.TransactionResolution_ROLLBACK:
		kind = record.TransactionRollback
	default:
		return &v2.EndTransactionResponse{Status: okStatus()}, nil // unknown: the broker checks later
	}
	ext := remoting.ExtFields{"producerGroup": tr.group, "msgId": tr.msgID, "transactionId": req.GetTransactionId()}
	ext.SetInt64("tranStateTableOffset", tr.queueOffset)
	ext.SetInt64("commitLogOffset", tr.commitLogOffset)
	ext.SetInt32("commitOrRollback", kind)
	ext.SetBool("fromTransactionCheck", req.GetSource() == v2.TransactionSource_SOURCE_SERVER_CHECK)
	if err := s.authorize(ctx, protocol.ReqEndTransaction, ext, nil); err != nil {
		return &v2.EndTransactionResponse{Status: errStatus(err)}, nil
	}
	resp, err := s.invoke(ctx, remoting.NewRequest(protocol.ReqEndTransaction, ext))
	if err != nil {
		return &v2.EndTransactionResponse{Status: errStatus(err)}, nil
	}
	if resp.Code != protocol.RespSuccess {
		return &v2.EndTransactionResponse{Status: respStatus(resp)}, nil
	}
	s.txns.remove(topic, req.GetTransactionId())
	return &v2.EndTransactionResponse{Status: okStatus()}, nil
}

// RecallMessage recalls a delay/timer message by the handle its send
// returned (SendResultEntry.recall_handle), as RecallMessageActivity and
// ProducerProcessor.recallMessage: the topic must exist and, with the
// message type check on, be a DELAY (or MIXED) topic; the broker's
// RECALL_MESSAGE decides the rest. As Java's proxy, a handle that does not
// decode and every broker refusal (topic mismatch, message already
// delivered or unknown: "recall failed, timestamp invalid") are
// INTERNAL_SERVER_ERROR with the broker's remark; success carries the
// message id.
func (s *Server) RecallMessage(ctx context.Context, req *v2.RecallMessageRequest) (*v2.RecallMessageResponse, error) {
	topic := req.GetTopic().GetName()
	if strings.TrimSpace(topic) == "" {
		return &v2.RecallMessageResponse{Status: newStatus(v2.Code_ILLEGAL_TOPIC, "topic name cannot be blank")}, nil
	}
	tc, ok := s.topicConfig(topic)
	if !ok {
		return &v2.RecallMessageResponse{Status: newStatus(v2.Code_TOPIC_NOT_FOUND, "topic "+topic+" not found")}, nil
	}
	if want := topicMessageType(tc); !s.cfg.SkipMessageTypeCheck && want != typeDelay && want != typeMixed {
		return &v2.RecallMessageResponse{Status: newStatus(v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
			"TopicMessageType validate failed, the expected type is "+want+", but actual type is "+typeDelay)}, nil
	}
	if _, err := protocol.DecodeRecallHandle(req.GetRecallHandle()); err != nil {
		return &v2.RecallMessageResponse{Status: newStatus(v2.Code_INTERNAL_SERVER_ERROR, protocol.ErrBadRecallHandle.Error())}, nil
	}
	ext := remoting.ExtFields(protocol.RecallMessageHeader{Topic: topic, RecallHandle: req.GetRecallHandle()}.ExtFields())
	if err := s.authorize(ctx, protocol.ReqRecallMessage, ext, nil); err != nil {
		return &v2.RecallMessageResponse{Status: errStatus(err)}, nil
	}
	resp, err := s.invoke(ctx, remoting.NewRequest(protocol.ReqRecallMessage, ext))
	if err != nil {
		return &v2.RecallMessageResponse{Status: errStatus(err)}, nil
	}
	if resp.Code != protocol.RespSuccess {
		return &v2.RecallMessageResponse{Status: newStatus(v2.Code_INTERNAL_SERVER_ERROR, resp.Remark)}, nil
	}
	return &v2.RecallMessageResponse{Status: okStatus(), MessageId: resp.ExtFields["msgId"]}, nil
}

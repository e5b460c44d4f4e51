package delay

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Recall (RocketMQ 5's RecallMessageProcessor and the timer's delete by
// TIMER_DEL_UNIQKEY). A send diverted to the timer answers with a recall
// handle (protocol.RecallHandle: the real topic, the broker, the slot and
// the message's UNIQ_KEY). RECALL_MESSAGE stores a delete marker: a timer
// message for the same topic and the same slot whose TIMER_DEL_UNIQKEY is
// "<topic>+<uniqKey>". When the timer service reads a marker it remembers
// the key (timerService.deletes); when the slot comes, the message with
// that key is dropped instead of delivered, and the marker itself is never
// delivered. The marker lives in the timer queue like any pending timer
// message, so a restart reads it again and the recall survives.
//
// A recall succeeds only while the slot is in the future; the timer may be
// at most one loop iteration into the slot when the marker arrives, and
// then the message is delivered although the recall was answered SUCCESS
// (Java has the same window).

// recallTag is the marker's TAGS (Java's RECALL_MESSAGE_TAG).
const recallTag = "_RECALL_TAG_"

// DeleteKey is the TIMER_DEL_UNIQKEY of a marker deleting the message with
// UNIQ_KEY uniq in realTopic (TimerMessageStore.buildDeleteKey).
func DeleteKey(realTopic, uniq string) string { return realTopic + "+" + uniq }

// RecallHandle is the recall handle of m after DivertTimer, or "" when m
// was not diverted to the timer (or is itself a delete marker, or goes to a
// retry topic), as SendMessageProcessor.attachRecallHandle. The handle's
// timestamp is the slot (TIMER_OUT_MS): a marker sent for it rounds up to
// the same slot.
func RecallHandle(m *record.Message, brokerName string) string {
	if m.Topic != protocol.TimerTopic {
		return ""
	}
	slot, ok := record.Property(m.Properties, PropertyTimerOutMS)
	real, ok2 := record.Property(m.Properties, record.PropertyRealTopic)
	if !ok || !ok2 || strings.HasPrefix(real, protocol.RetryTopicPrefix) {
		return ""
	}
	if _, del := record.Property(m.Properties, PropertyTimerDelUniq); del {
		return ""
	}
	uniq, _ := record.Property(m.Properties, record.PropertyUniqKey)
	return protocol.RecallHandle{Topic: real, BrokerName: brokerName, Timestamp: slot, MessageID: uniq}.Encode()
}

// RecallRequest is a RECALL_MESSAGE as the broker hands it over.
type RecallRequest struct {
	Header      protocol.RecallMessageHeader
	BrokerName  string // this broker's name
	TopicExists bool   // the header's topic is in the topic table
	BornHost    netip.AddrPort
}

// Recall serves RECALL_MESSAGE: it checks the handle as
// RecallMessageProcessor does and stores the delete marker. Refusals:
// TOPIC_NOT_EXIST for an unknown topic; ILLEGAL_OPERATION for a handle
// that does not decode ("recall handle is invalid"), names another topic
// ("recall failed, topic not match") or broker, or whose time is not in
// the future or beyond the max delay ("recall failed, timestamp invalid":
// the message was delivered, or never was a timer message); SYSTEM_ERROR
// when the marker could not be stored. Success carries the message id in
// msgId. Safe for concurrent use.
func (s *Service) Recall(r RecallRequest) *remoting.Command {
	h := r.Header
	if !r.TopicExists {
		return refusef(protocol.RespTopicNotExist, "recall failed, the topic[%s] not exist", h.Topic)
	}
	handle, err := protocol.DecodeRecallHandle(h.RecallHandle)
	if err != nil {
		return refusef(protocol.RespIllegalOperation, "%s", protocol.ErrBadRecallHandle.Error())
	}
	if handle.Topic != h.Topic {
		return refusef(protocol.RespIllegalOperation, "recall failed, topic not match")
	}
	if handle.BrokerName != r.BrokerName {
		return refusef(protocol.RespIllegalOperation, "recall failed, broker service not available")
	}
	ts, err := strconv.ParseInt(handle.Timestamp, 10, 64)
	left := ts - time.Now().UnixMilli()
	if err != nil || left <= 0 || left >= s.cfg.TimerMaxDelay.Milliseconds() {
		return refusef(protocol.RespIllegalOperation, "recall failed, timestamp invalid")
	}
	now := time.Now().UnixMilli()
	props := record.EncodeProperties(map[string]string{
		record.PropertyTags:          recallTag,
		PropertyTimerDelUniq:         DeleteKey(handle.Topic, handle.MessageID),
		record.PropertyUniqKey:       handle.MessageID,
		PropertyTimerDeliverMS:       handle.Timestamp,
		record.PropertyProducerGroup: h.ProducerGroup,
	})
	m := &record.Message{Topic: handle.Topic, Body: []byte("0"), Properties: props, BornTimestamp: now,
		BornHost: r.BornHost, StoreHost: s.storeHost}
	if resp := s.DivertTimer(m); resp != nil {
		return resp
	}
	if m.Topic != protocol.TimerTopic { // due by now after all: nothing to delete
		return refusef(protocol.RespIllegalOperation, "recall failed, timestamp invalid")
	}
	res, err := s.store.Put(m)
	if !res.Stored {
		s.log.Warn("recall marker not stored", "topic", handle.Topic, "status", res.Status, "err", err)
		return refusef(protocol.RespSystemError, "recall failed, execute error")
	}
	resp := remoting.NewResponse(protocol.RespSuccess, "")
	resp.ExtFields = remoting.ExtFields{"msgId": handle.MessageID}
	return resp
}

package broker

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// consumerSendMsgBack handles CONSUMER_SEND_MSG_BACK (36): a consumer could
// not consume the message at commit-log offset "offset". It is stored again
// in %RETRY%<group> after the delay of its level (3 + reconsume times when
// the consumer leaves the level to the broker), or in %DLQ%<group> once it
// was reconsumed maxReconsumeTimes times or the level is negative.
func (b *Broker) consumerSendMsgBack(ctx context.Context, conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	ext := req.ExtFields
	group, err := ext.String("group")
	if err != nil {
		return conn.BadRequest(req, err)
	}
	offset, err := ext.Int64("offset")
	if err != nil {
		return conn.BadRequest(req, err)
	}
	delayLevel, err := ext.OptInt32("delayLevel", 0)
	if err != nil {
		return conn.BadRequest(req, err)
	}
	maxTimes, err := ext.OptInt32("maxReconsumeTimes", -1)
	if err != nil {
		return conn.BadRequest(req, err)
	}
	if maxTimes < 0 {
		maxTimes = b.admin.RetryMaxTimes(group) // the group's retryMaxTimes
	}
	if err := record.ValidateTopic(protocol.RetryTopic(group)); err != nil {
		return responsef(protocol.RespInvalidParameter, "bad consumer group %q: %v", group, err)
	}
	retry, _, ver, err := b.topics.CreateIfAbsent(protocol.NewTopicConfig(protocol.RetryTopic(group), b.admin.RetryQueueNums(group)))
	if err != nil {
		return responsef(protocol.RespSystemError, "create topic %s: %v", protocol.RetryTopic(group), err)
	}
	if resp := b.routeResponse(retry.TopicName, "created", ver); resp != nil {
		return resp
	}
	if !writable(retry) {
		return responsef(protocol.RespNoPermission, "the topic[%s] sending message is forbidden", retry.TopicName)
	}

	raw, err := b.store.ReadRecord(offset)
	if err != nil {
		return responsef(protocol.RespSystemError, "look message by offset failed, %d: %v", offset, err)
	}
	rec, err := record.Decode(raw, false)
	if err != nil {
		return responsef(protocol.RespSystemError, "look message by offset failed, %d: %v", offset, err)
	}
	props := record.DecodeProperties(string(rec.Properties))
	if _, ok := props[PropertyRetryTopic]; !ok {
		props[PropertyRetryTopic] = string(rec.Topic)
	}
	if props[PropertyOriginMessageID] == "" {
		origin := ext.OptString("originMsgId", "")
		if origin == "" {
			origin = props[record.PropertyUniqKey]
		}
		if origin == "" {
			origin = record.OffsetMsgID(rec.StoreHost, rec.PhysicalOffset)
		}
		props[PropertyOriginMessageID] = origin
	}
	delete(props, record.PropertyRealTopic)
	delete(props, record.PropertyRealQueueID)

	m := &record.Message{
		Topic: retry.TopicName, QueueID: retryQueue(retry), Flag: rec.Flag,
		SysFlag: rec.SysFlag &^ (record.FlagBornHostV6 | record.FlagStoreHostV6),
		Body:    rec.Body, BornTimestamp: rec.BornTimestamp, BornHost: rec.BornHost, StoreHost: b.storeHost,
		ReconsumeTimes: rec.ReconsumeTimes + 1,
	}
	if rec.ReconsumeTimes >= maxTimes || delayLevel < 0 {
		dlq, resp := b.deadLetterTopic(group)
		if resp != nil {
			return resp
		}
		m.Topic = dlq.TopicName
		delete(props, record.PropertyDelayTimeLevel)
	} else {
		if delayLevel == 0 {
			delayLevel = 3 + rec.ReconsumeTimes
		}
		props[record.PropertyDelayTimeLevel] = strconv.Itoa(int(delayLevel))
		props[PropertyMaxReconsumeTimes] = strconv.Itoa(int(maxTimes))
	}
	m.Properties = record.EncodeProperties(props)
	b.applyDelay(m)
	res, err := b.store.Put(ctx, m)
	if !res.Status.Stored() {
		return putResponse(res, err)
	}
	b.log.Debug("message sent back", "group", group, "offset", offset, "to", m.Topic,
		"reconsumeTimes", m.ReconsumeTimes, "dlq", strings.HasPrefix(retryTopicOf(m), protocol.DLQTopicPrefix))
	return success()
}

// retryTopicOf is the topic a message finally lands in (REAL_TOPIC for a
// delayed one).
func retryTopicOf(m *record.Message) string {
	if m.Topic == protocol.ScheduleTopic {
		if t, ok := record.Property(m.Properties, record.PropertyRealTopic); ok {
			return t
		}
	}
	return m.Topic
}

// retryQueue picks the queue of a sent-back message: a random writable
// queue of the retry topic, as Java's send-back does.
func retryQueue(tc protocol.TopicConfig) int32 {
	if tc.WriteQueueNums <= 1 {
		return 0
	}
	return rand.Int32N(tc.WriteQueueNums)
}

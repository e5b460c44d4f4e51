package proxy

import (
	"bytes"
	"compress/zlib"
	"hash/crc32"
	"io"
	"strconv"
	"strings"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/brokerlab/brokerlab/engine/record"
)

// Message properties the proxy reads or writes besides record's (MessageConst).
const (
	propShardingKey    = "__SHARDINGKEY"
	propTraceContext   = "TRACE_CONTEXT"
	propTimerDeliverMS = "TIMER_DELIVER_MS"
	propCheckImmunity  = "CHECK_IMMUNITY_TIME_IN_SECONDS"
	propRetryTopic     = "RETRY_TOPIC"
	propReconsumeTime  = "RECONSUME_TIME"
	propMaxReconsume   = "MAX_RECONSUME_TIMES"
	propBornHost       = "BORN_HOST"
)

// systemProperties are not shown to clients as user properties
// (MessageConst.STRING_HASH_SET, the ones brokerlab writes).
var systemProperties = map[string]bool{
	record.PropertyKeys: true, record.PropertyTags: true, record.PropertyUniqKey: true, record.PropertyWaitStoreMsgOK: true,
	record.PropertyDelayTimeLevel: true, record.PropertyRealTopic: true, record.PropertyRealQueueID: true,
	record.PropertyTransactionPrepared: true, record.PropertyProducerGroup: true, record.PropertyCluster: true,
	record.PropertyCRC32: true, propShardingKey: true, propTraceContext: true, propTimerDeliverMS: true,
	propCheckImmunity: true, propRetryTopic: true, propReconsumeTime: true, propMaxReconsume: true, propBornHost: true,
	"MIN_OFFSET": true, "MAX_OFFSET": true, "CONSUME_START_TIME": true, "ORIGIN_MESSAGE_ID": true,
	"TRAN_PREPARED_QUEUE_OFFSET": true, "TRANSACTION_CHECK_TIMES": true, "POP_CK": true, "POP_CK_OFFSET": true,
	"1ST_POP_TIME": true, "TIMER_OUT_MS": true, "TIMER_ENQUEUE_MS": true, "TIMER_DEQUEUE_MS": true,
	"TIMER_ROLL_TIMES": true, "TIMER_DEL_UNIQKEY": true, "TIMER_DELAY_SEC": true, "TIMER_DELAY_MS": true,
	"DELIVERY_ATTEMPT": true, "INNER_NUM": true, "INNER_BASE": true, "DUP_INFO": true, "EXTEND_UNIQ_INFO": true,
	"CORRECTION_FLAG": true, "__transactionId__": true, "PROPERTY_TOPIC_LEVEL_LABEL": true,
}

// toProto converts a stored record into the message a client receives.
func toProto(rec *record.Record, handle string, attempt int32) *v2.Message {
	props := record.DecodeProperties(string(rec.Properties))
	topic := string(rec.Topic)
	if t := props[propRetryTopic]; t != "" {
		topic = t
	} else if t := props[record.PropertyRealTopic]; t != "" {
		topic = t
	}
	body := rec.Body
	if rec.SysFlag&record.FlagCompressed != 0 {
		if zr, err := zlib.NewReader(bytes.NewReader(body)); err == nil {
			if b, err := io.ReadAll(zr); err == nil {
				body = b
			}
		}
	}
	user := make(map[string]string)
	for k, v := range props {
		if !systemProperties[k] {
			user[k] = v
		}
	}
	msgID := props[record.PropertyUniqKey]
	if msgID == "" {
		msgID = record.OffsetMsgID(rec.StoreHost, rec.PhysicalOffset)
	}
	sp := &v2.SystemProperties{
		MessageId:      msgID,
		BodyDigest:     &v2.Digest{Type: v2.DigestType_CRC32, Checksum: strings.ToUpper(strconv.FormatInt(int64(crc32.ChecksumIEEE(body)), 16))},
		BodyEncoding:   v2.Encoding_IDENTITY,
		MessageType:    messageTypeOf(props),
		BornTimestamp:  timestamppb.New(time.UnixMilli(rec.BornTimestamp)),
		BornHost:       rec.BornHost.Addr().String(),
		StoreTimestamp: timestamppb.New(time.UnixMilli(rec.StoreTimestamp)),
		StoreHost:      rec.StoreHost.String(),
		QueueId:        rec.QueueID,
	}
	qo := rec.QueueOffset
	sp.QueueOffset = &qo
	if t, ok := props[record.PropertyTags]; ok {
		sp.Tag = &t
	}
	if k := props[record.PropertyKeys]; k != "" {
		sp.Keys = strings.Fields(k)
	}
	if g := props[propShardingKey]; g != "" {
		sp.MessageGroup = &g
	}
	if tc := props[propTraceContext]; tc != "" {
		sp.TraceContext = &tc
	}
	if ms, err := strconv.ParseInt(props[propTimerDeliverMS], 10, 64); err == nil {
		sp.DeliveryTimestamp = timestamppb.New(time.UnixMilli(ms))
	}
	if handle != "" {
		sp.ReceiptHandle = &handle
	}
	if attempt <= 0 {
		attempt = rec.ReconsumeTimes + 1
	}
	sp.DeliveryAttempt = &attempt
	return &v2.Message{Topic: &v2.Resource{Name: topic}, UserProperties: user, SystemProperties: sp, Body: body}
}

// messageTypeOf is TopicMessageType.parseFromMessageProperty.
func messageTypeOf(props map[string]string) v2.MessageType {
	switch {
	case props[record.PropertyTransactionPrepared] == "true":
		return v2.MessageType_TRANSACTION
	case props[record.PropertyDelayTimeLevel] != "" || props[propTimerDeliverMS] != "" ||
		props["TIMER_DELAY_SEC"] != "" || props["TIMER_DELAY_MS"] != "":
		return v2.MessageType_DELAY
	case props[propShardingKey] != "":
		return v2.MessageType_FIFO
	}
	return v2.MessageType_NORMAL
}

func typeName(t v2.MessageType) string {
	switch t {
	case v2.MessageType_NORMAL:
		return typeNormal
	case v2.MessageType_FIFO:
		return typeFIFO
	case v2.MessageType_DELAY:
		return typeDelay
	case v2.MessageType_TRANSACTION:
		return typeTransaction
	}
	return typeUnspecified
}

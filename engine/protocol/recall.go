package protocol

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// ReqRecallMessage is RECALL_MESSAGE (RequestCode.java): cancel a timer
// message that is not due yet by its recall handle.
const ReqRecallMessage int32 = 370

func init() { requestCodeNames[ReqRecallMessage] = "RECALL_MESSAGE" }

// RecallMessageHeader is RecallMessageRequestHeader, the custom header of
// RECALL_MESSAGE.
type RecallMessageHeader struct {
	ProducerGroup string // optional
	Topic         string // required
	RecallHandle  string // required
}

// ParseRecallMessageHeader decodes a RECALL_MESSAGE header; the first
// missing required field is a *FieldError.
func ParseRecallMessageHeader(ext map[string]string) (RecallMessageHeader, error) {
	r := fieldReader{ext: ext}
	h := RecallMessageHeader{
		ProducerGroup: r.optStr("producerGroup", ""),
		Topic:         r.str("topic"),
		RecallHandle:  r.str("recallHandle"),
	}
	return h, r.err
}

// ExtFields is the header as a request's extension fields.
func (h RecallMessageHeader) ExtFields() map[string]string {
	ext := map[string]string{"topic": h.Topic, "recallHandle": h.RecallHandle}
	if h.ProducerGroup != "" {
		ext["producerGroup"] = h.ProducerGroup
	}
	return ext
}

// ErrBadRecallHandle is a recall handle that does not decode.
var ErrBadRecallHandle = errors.New("recall handle is invalid")

// RecallHandle is RecallMessageHandle.HandleV1: what a producer needs to
// recall a timer message. Encoded, it is the URL-safe base64 (padded) of
// "v1 <topic> <brokerName> <timestamp> <messageId>", separated by single
// spaces; Timestamp is the message's delivery time in ms (a decimal string
// as it was written, judged by the broker).
type RecallHandle struct {
	Topic, BrokerName, Timestamp, MessageID string
}

const recallHandleV1 = "v1"

// Encode is the handle as producers receive it.
func (h RecallHandle) Encode() string {
	raw := strings.Join([]string{recallHandleV1, h.Topic, h.BrokerName, h.Timestamp, h.MessageID}, " ")
	return base64.URLEncoding.EncodeToString([]byte(raw))
}

// DecodeRecallHandle decodes an encoded handle (ErrBadRecallHandle when it
// is empty, not base64, not version v1 or has fewer than five items; items
// past the fifth are ignored, as Java's decoder does).
func DecodeRecallHandle(s string) (RecallHandle, error) {
	if s == "" {
		return RecallHandle{}, ErrBadRecallHandle
	}
	raw, err := base64.URLEncoding.DecodeString(s)
	if err != nil {
		if raw, err = base64.RawURLEncoding.DecodeString(s); err != nil {
			return RecallHandle{}, fmt.Errorf("%w: %v", ErrBadRecallHandle, err)
		}
	}
	items := strings.Split(string(raw), " ")
	if items[0] != recallHandleV1 || len(items) < 5 {
		return RecallHandle{}, ErrBadRecallHandle
	}
	return RecallHandle{Topic: items[1], BrokerName: items[2], Timestamp: items[3], MessageID: items[4]}, nil
}

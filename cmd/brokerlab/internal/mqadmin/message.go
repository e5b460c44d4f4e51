package mqadmin

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"

	"github.com/brokerlab/brokerlab/engine/record"
)

// Message is a stored message as mqadmin shows it (MessageExt): MsgID is
// the client id (UNIQ_KEY) when the message has one, else the offset id;
// OffsetMsgID is always the offset id (store host + commit-log offset).
type Message struct {
	MsgID           string            `json:"msgId"`
	OffsetMsgID     string            `json:"offsetMsgId"`
	Topic           string            `json:"topic"`
	Tags            string            `json:"tags"`
	Keys            string            `json:"keys"`
	QueueID         int32             `json:"queueId"`
	QueueOffset     int64             `json:"queueOffset"`
	CommitLogOffset int64             `json:"commitLogOffset"`
	ReconsumeTimes  int32             `json:"reconsumeTimes"`
	BornTimestamp   int64             `json:"bornTimestamp"`
	StoreTimestamp  int64             `json:"storeTimestamp"`
	BornHost        string            `json:"bornHost"`
	StoreHost       string            `json:"storeHost"`
	SysFlag         int32             `json:"sysFlag"`
	Flag            int32             `json:"flag"`
	Properties      map[string]string `json:"properties"`
	Body            []byte            `json:"body"` // decompressed when the record was zlib-compressed
}

// DecodeMessages decodes the concatenated records of a QUERY_MESSAGE (12)
// or VIEW_MESSAGE_BY_ID (33) body (MessageDecoder.decodes); body CRCs are
// not checked, as Java's client decoder does not.
func DecodeMessages(b []byte) ([]Message, error) {
	recs, err := record.DecodeAll(b, false)
	out := make([]Message, 0, len(recs))
	for i := range recs {
		out = append(out, messageOf(&recs[i]))
	}
	if err != nil {
		return out, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return out, nil
}

func messageOf(r *record.Record) Message {
	props := record.DecodeProperties(string(r.Properties))
	m := Message{
		OffsetMsgID: record.OffsetMsgID(r.StoreHost, r.PhysicalOffset),
		Topic:       string(r.Topic), Tags: props[record.PropertyTags], Keys: props[record.PropertyKeys],
		QueueID: r.QueueID, QueueOffset: r.QueueOffset, CommitLogOffset: r.PhysicalOffset,
		ReconsumeTimes: r.ReconsumeTimes, BornTimestamp: r.BornTimestamp, StoreTimestamp: r.StoreTimestamp,
		BornHost: r.BornHost.String(), StoreHost: r.StoreHost.String(), SysFlag: r.SysFlag, Flag: r.Flag,
		Properties: props, Body: append([]byte(nil), r.Body...),
	}
	m.MsgID = m.OffsetMsgID
	if id := props[record.PropertyUniqKey]; id != "" {
		m.MsgID = id
	}
	if r.SysFlag&record.FlagCompressed != 0 {
		if zr, err := zlib.NewReader(bytes.NewReader(r.Body)); err == nil {
			if plain, err := io.ReadAll(io.LimitReader(zr, 64<<20)); err == nil {
				m.Body = plain
			}
		}
	}
	return m
}

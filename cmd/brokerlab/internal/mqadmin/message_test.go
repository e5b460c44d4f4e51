package mqadmin

import (
	"bytes"
	"compress/zlib"
	"errors"
	"net/netip"
	"testing"

	"github.com/brokerlab/brokerlab/engine/record"
)

func encodeRecord(t *testing.T, m *record.Message, queueOffset, physOffset int64) []byte {
	t.Helper()
	b, err := record.AppendEncode(nil, m, record.BodyCRC(m.Body), queueOffset, physOffset, 1700000000500)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeMessages(t *testing.T) {
	store := netip.MustParseAddrPort("10.1.2.3:10911")
	var zbody bytes.Buffer
	zw := zlib.NewWriter(&zbody)
	zw.Write([]byte("compressed body"))
	zw.Close()
	m1 := record.Message{Topic: "T", QueueID: 1, Body: []byte("hello"), BornTimestamp: 1700000000000,
		BornHost: netip.MustParseAddrPort("10.9.9.9:40000"), StoreHost: store,
		Properties: record.EncodeProperties(map[string]string{"KEYS": "k1 k2", "TAGS": "tagA", "UNIQ_KEY": "AC1100010001000000000000000000AA"})}
	m2 := record.Message{Topic: "T", QueueID: 0, Body: zbody.Bytes(), SysFlag: record.FlagCompressed, StoreHost: store,
		BornHost: netip.MustParseAddrPort("10.9.9.9:40000"), Properties: record.EncodeProperties(map[string]string{"KEYS": "k3"})}
	buf := append(encodeRecord(t, &m1, 4, 1000), encodeRecord(t, &m2, 0, 2000)...)
	msgs, err := DecodeMessages(buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Fatalf("%d messages", len(msgs))
	}
	a, b := msgs[0], msgs[1]
	if a.MsgID != "AC1100010001000000000000000000AA" || a.OffsetMsgID != record.OffsetMsgID(store, 1000) ||
		a.Topic != "T" || a.Tags != "tagA" || a.Keys != "k1 k2" || a.QueueID != 1 || a.QueueOffset != 4 ||
		a.CommitLogOffset != 1000 || string(a.Body) != "hello" || a.StoreHost != "10.1.2.3:10911" ||
		a.StoreTimestamp != 1700000000500 || a.BornTimestamp != 1700000000000 {
		t.Fatalf("first message %+v", a)
	}
	// Without UNIQ_KEY the id is the offset id; a zlib body is inflated.
	if b.MsgID != record.OffsetMsgID(store, 2000) || string(b.Body) != "compressed body" || !matchesKey(&b, "T", "k3", false) ||
		matchesKey(&b, "T", "k", false) || matchesKey(&b, "U", "k3", false) || !matchesKey(&a, "T", "k2", false) ||
		!matchesKey(&a, "T", a.MsgID, true) {
		t.Fatalf("second message %+v", b)
	}
	// A truncated buffer is an error after the messages decoded so far.
	got, err := DecodeMessages(buf[:len(buf)-3])
	if !errors.Is(err, ErrMalformed) || len(got) != 1 {
		t.Fatalf("truncated: %d messages, %v", len(got), err)
	}
}

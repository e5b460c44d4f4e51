package protocol

import (
	"encoding/base64"
	"errors"
	"testing"
)

// The handle is RecallMessageHandle.HandleV1: URL-safe base64 of
// "v1 topic broker timestamp id"; Java's decoder's refusals are ours.
func TestRecallHandleRoundTripAndRefusals(t *testing.T) {
	h := RecallHandle{Topic: "T", BrokerName: "broker-a", Timestamp: "1700000000000", MessageID: "ID1"}
	enc := h.Encode()
	if raw, _ := base64.URLEncoding.DecodeString(enc); string(raw) != "v1 T broker-a 1700000000000 ID1" {
		t.Fatalf("encoded %q decodes to %q", enc, raw)
	}
	if got, err := DecodeRecallHandle(enc); err != nil || got != h {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for _, bad := range []string{"", "!!", base64.URLEncoding.EncodeToString([]byte("v2 T b 1 id")),
		base64.URLEncoding.EncodeToString([]byte("v1 T b 1"))} {
		if _, err := DecodeRecallHandle(bad); !errors.Is(err, ErrBadRecallHandle) {
			t.Errorf("DecodeRecallHandle(%q): %v, want ErrBadRecallHandle", bad, err)
		}
	}
	hdr, err := ParseRecallMessageHeader(RecallMessageHeader{Topic: "T", RecallHandle: enc}.ExtFields())
	if err != nil || hdr.Topic != "T" || hdr.RecallHandle != enc || hdr.ProducerGroup != "" {
		t.Fatalf("header round trip: %+v %v", hdr, err)
	}
	if _, err := ParseRecallMessageHeader(map[string]string{"topic": "T"}); err == nil {
		t.Fatal("a header without recallHandle parsed")
	}
}

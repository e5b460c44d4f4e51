package protocol

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

func TestSendMessageHeader(t *testing.T) {
	// SEND_BATCH_MESSAGE as the Go client sends it (client-protocol.md §2.3).
	short := map[string]string{"a": "pg", "b": "T", "c": "TBW102", "d": "4", "e": "2", "f": "0", "g": "1491978653614",
		"h": "0", "i": "", "j": "0", "k": "false", "l": "0", "m": "true", "n": "broker-a"}
	h, err := ParseSendMessageHeader(short)
	if err != nil {
		t.Fatal(err)
	}
	want := SendMessageHeader{ProducerGroup: "pg", Topic: "T", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		QueueID: 2, BornTimestamp: 1491978653614, Batch: true, BrokerName: "broker-a"}
	if h != want {
		t.Fatalf("got %+v\nwant %+v", h, want)
	}
	// SEND_MESSAGE long form, as the Go client sends it (with bname).
	long := ExpandSendHeaderV2(short)
	if long["producerGroup"] != "pg" || long["bname"] != "broker-a" || long["a"] != "" {
		t.Fatalf("expand: %v", long)
	}
	if h2, err := ParseSendMessageHeader(long); err != nil || h2 != want {
		t.Fatalf("long: %+v %v", h2, err)
	}
	if !maps.Equal(CompactSendHeaderV2(long), short) {
		t.Fatalf("compact(expand(x)) != x: %v", CompactSendHeaderV2(long))
	}
	if !maps.Equal(want.ExtFields(true), short) || !maps.Equal(want.ExtFields(false), long) {
		t.Fatal("ExtFields encode")
	}
	// Java's V1 header without the optional fields.
	java := map[string]string{"producerGroup": "pg", "topic": "T", "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": "0", "sysFlag": "1", "bornTimestamp": "1", "flag": "0", "brokerName": "b"}
	if h, err := ParseSendMessageHeader(java); err != nil || h.SysFlag != 1 || h.BrokerName != "b" || h.Properties != "" {
		t.Fatalf("java: %+v %v", h, err)
	}
	delete(java, "queueId")
	if _, err := ParseSendMessageHeader(java); !errors.Is(err, ErrMissingField) || !strings.Contains(err.Error(), "queueId") {
		t.Fatalf("missing queueId: %v", err)
	}
	short["g"] = "yesterday"
	if _, err := ParseSendMessageHeader(short); !errors.Is(err, ErrMalformedField) {
		t.Fatalf("malformed g: %v", err)
	}
}

package remoting

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

func TestExtFieldsTyped(t *testing.T) {
	e := ExtFields{"n": "-42", "big": "9223372036854775807", "b": "TRUE", "s": "", "bad": "4x", "f": "false"}
	if v, err := e.Int64("big"); err != nil || v != 1<<63-1 {
		t.Fatalf("Int64 big: %v %v", v, err)
	}
	if v, err := e.Int32("n"); err != nil || v != -42 {
		t.Fatalf("Int32: %v %v", v, err)
	}
	if v, err := e.Bool("b"); err != nil || !v {
		t.Fatalf("Bool: %v %v", v, err)
	}
	if v, err := e.String("s"); err != nil || v != "" {
		t.Fatalf("String present-but-empty: %q %v", v, err)
	}
	_, err := e.Int64("missing")
	var fe *FieldError
	if !errors.Is(err, ErrMissingField) || !errors.As(err, &fe) || fe.Key != "missing" {
		t.Fatalf("missing: %v", err)
	}
	_, err = e.Int32("big")
	if !errors.Is(err, ErrMalformedField) || !strings.Contains(err.Error(), `"big"`) {
		t.Fatalf("overflow: %v", err)
	}
	if _, err := e.Int64("bad"); !errors.Is(err, ErrMalformedField) {
		t.Fatalf("bad int: %v", err)
	}
	if _, err := e.Bool("bad"); !errors.Is(err, ErrMalformedField) {
		t.Fatalf("bad bool: %v", err)
	}
	if _, err := e.Int64("s"); !errors.Is(err, ErrMalformedField) {
		t.Fatalf("empty int must be malformed (Java Integer.parseInt): %v", err)
	}
	if v, err := e.OptInt32("missing", 7); err != nil || v != 7 {
		t.Fatalf("OptInt32 default: %v %v", v, err)
	}
	if _, err := e.OptInt64("bad", 7); !errors.Is(err, ErrMalformedField) {
		t.Fatalf("OptInt64 malformed: %v", err)
	}
	if v, err := e.OptBool("f", true); err != nil || v {
		t.Fatalf("OptBool: %v %v", v, err)
	}
	if e.OptString("missing", "d") != "d" || e.OptString("n", "d") != "-42" {
		t.Fatal("OptString")
	}
	e.SetInt64("x", -1)
	e.SetInt32("y", 5)
	e.SetBool("z", true)
	if e["x"] != "-1" || e["y"] != "5" || e["z"] != "true" {
		t.Fatalf("setters: %v", e)
	}
}

func TestSendMessageHeader(t *testing.T) {
	// SEND_BATCH_MESSAGE as the Go client sends it (client-protocol.md §2.3).
	short := ExtFields{"a": "pg", "b": "T", "c": "TBW102", "d": "4", "e": "2", "f": "0", "g": "1491978653614",
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
	java := ExtFields{"producerGroup": "pg", "topic": "T", "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
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

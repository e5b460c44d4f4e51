package proxy_test

import (
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/brokerlab/brokerlab/engine/broker"
)

func delayMessage(topic, id, body string, at time.Time) *v2.Message {
	m := message(topic, id, body)
	m.SystemProperties.MessageType = v2.MessageType_DELAY
	m.SystemProperties.DeliveryTimestamp = timestamppb.New(at)
	return m
}

// A delay message's send returns a recall handle; RecallMessage before the
// delivery time keeps it from ever being delivered (a later delay message
// of the same queue is, showing its slot passed); a recall after that is
// refused as Java's proxy refuses it; a normal send has no handle.
func TestRecallMessage(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) { c.TimerPrecision = 100 * time.Millisecond }, nil)
	e.topic("DelayT", 1, "DELAY")
	e.topic("NormT", 1, "NORMAL")
	ctx := callCtx(t, "c-recall", "", "")
	if h := e.send(ctx, message("NormT", "N-1", "plain")).Entries[0].RecallHandle; h != "" {
		t.Fatalf("normal send has recall handle %q", h)
	}
	start := time.Now()
	a := e.send(ctx, delayMessage("DelayT", "D-A", "recalled", start.Add(800*time.Millisecond)))
	b := e.send(ctx, delayMessage("DelayT", "D-B", "later", start.Add(1100*time.Millisecond)))
	handle := a.Entries[0].GetRecallHandle()
	if a.Status.Code != v2.Code_OK || b.Status.Code != v2.Code_OK || handle == "" {
		t.Fatalf("delay sends: %v %v, handle %q", a, b, handle)
	}
	recall := func(topic, h string) *v2.RecallMessageResponse {
		t.Helper()
		r, err := e.cli.RecallMessage(ctx, &v2.RecallMessageRequest{Topic: res(topic), RecallHandle: h})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := recall("NormT", handle); r.Status.Code != v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE {
		t.Fatalf("recall on a NORMAL topic: %v", r.Status)
	}
	if r := recall("Nope", handle); r.Status.Code != v2.Code_TOPIC_NOT_FOUND {
		t.Fatalf("recall on an unknown topic: %v", r.Status)
	}
	if r := recall("DelayT", "garbage!"); r.Status.Code != v2.Code_INTERNAL_SERVER_ERROR || r.Status.Message != "recall handle is invalid" {
		t.Fatalf("recall with a bad handle: %v", r.Status)
	}
	if r := recall("DelayT", handle); r.Status.Code != v2.Code_OK || r.MessageId != "D-A" {
		t.Fatalf("recall: %v", r)
	}
	got := e.pullAll(ctx, "g-recall", "DelayT", 1, 1)
	if len(got) != 1 || string(got[0].Body) != "later" {
		t.Fatalf("delivered %v, want only later", got)
	}
	r := recall("DelayT", handle)
	if r.Status.Code != v2.Code_INTERNAL_SERVER_ERROR || r.Status.Message != "recall failed, timestamp invalid" {
		t.Fatalf("recall after the delivery time: %v", r.Status)
	}
}

package broker_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

func (e *env) recall(topic, handle string) *remoting.Command {
	e.t.Helper()
	return e.call(protocol.ReqRecallMessage, protocol.RecallMessageHeader{ProducerGroup: "pg", Topic: topic, RecallHandle: handle}.ExtFields(), nil)
}

func deliverAt(d time.Duration) string { return strconv.FormatInt(time.Now().Add(d).UnixMilli(), 10) }

// bodies lists the bodies of (topic, queueID)'s messages.
func (e *env) bodies(topic string, queueID int32) []string {
	var out []string
	for _, r := range e.pullAll(topic, queueID) {
		out = append(out, string(r.Body))
	}
	return out
}

// A timer message recalled before its slot is never delivered: a later
// timer message of the same queue, delivered after the slot, shows the slot
// passed. A recall after delivery, with a bad handle, for another topic or
// an unknown one, is refused as RecallMessageProcessor refuses it.
func TestTimerRecallBeforeDue(t *testing.T) {
	e := startEnv(t, timerConfig)
	e.createTopic("T", 1)
	e.createTopic("U", 1)
	if h := e.mustSend("T", 0, "plain", "").ExtFields["recallHandle"]; h != "" {
		t.Fatalf("a plain send has recall handle %q", h)
	}
	resp := e.mustSend("T", 0, "recalled", props(broker.PropertyTimerDeliverMS, deliverAt(800*time.Millisecond)))
	handle := resp.ExtFields["recallHandle"]
	ph, err := protocol.DecodeRecallHandle(handle)
	if err != nil || ph.Topic != "T" || ph.BrokerName != "broker-a" || ph.MessageID != resp.ExtFields["transactionId"] {
		t.Fatalf("recall handle %q decodes to %+v, %v (send reply %v)", handle, ph, err, resp.ExtFields)
	}
	e.mustSend("T", 0, "later", props(broker.PropertyTimerDeliverMS, deliverAt(1100*time.Millisecond)))

	wantCode(t, "recall for another topic", e.recall("U", handle), protocol.RespIllegalOperation)
	wantCode(t, "recall on an unknown topic", e.recall("nope", handle), protocol.RespTopicNotExist)
	wantCode(t, "recall with a bad handle", e.recall("T", "!!not base64"), protocol.RespIllegalOperation)
	r := e.recall("T", handle)
	wantCode(t, "recall", r, protocol.RespSuccess)
	if r.ExtFields["msgId"] != ph.MessageID {
		t.Fatalf("recall msgId %q, want %q", r.ExtFields["msgId"], ph.MessageID)
	}

	eventually(t, "later delivered", func() bool { return e.maxOffset("T", 0) >= 2 })
	if got := e.bodies("T", 0); len(got) != 2 || got[1] != "later" {
		t.Fatalf("T:0 holds %q, want [plain later]", got)
	}
	if st := e.b.TimerStats(); st.Recalled != 1 || st.Delivered != 1 { // neither the recalled message nor the marker is delivered
		t.Fatalf("timer stats %+v, want Recalled 1, Delivered 1", st)
	}
	r = e.recall("T", handle)
	wantCode(t, "recall after the slot", r, protocol.RespIllegalOperation)
	if r.Remark != "recall failed, timestamp invalid" {
		t.Fatalf("recall after the slot: remark %q", r.Remark)
	}
}

// A recall after delivery is refused and the message stays delivered.
func TestTimerRecallAfterDelivery(t *testing.T) {
	e := startEnv(t, timerConfig)
	e.createTopic("T", 1)
	resp := e.mustSend("T", 0, "due", props(broker.PropertyTimerDelayMS, "200"))
	eventually(t, "due delivered", func() bool { return e.maxOffset("T", 0) >= 1 })
	wantCode(t, "recall after delivery", e.recall("T", resp.ExtFields["recallHandle"]), protocol.RespIllegalOperation)
}

// The delete marker is a pending timer message like any other: a broker
// restarted between the recall and the slot still drops the message.
func TestTimerRecallSurvivesRestart(t *testing.T) {
	pol := flush.Kinds()[0]
	ns := startNamesrv(t)
	dir := t.TempDir()
	e := startTimerRealEnv(t, dir, pol, ns.Addr(), nil)
	e.createTopic("T", 1)
	resp := e.mustSend("T", 0, "recalled", props(broker.PropertyTimerDeliverMS, deliverAt(900*time.Millisecond)))
	e.mustSend("T", 0, "later", props(broker.PropertyTimerDeliverMS, deliverAt(1200*time.Millisecond)))
	wantCode(t, "recall", e.recall("T", resp.ExtFields["recallHandle"]), protocol.RespSuccess)
	if err := e.b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	e2 := startTimerRealEnv(t, dir, pol, ns.Addr(), nil)
	eventually(t, "later delivered after restart", func() bool { return e2.maxOffset("T", 0) >= 1 })
	if got := e2.bodies("T", 0); len(got) != 1 || got[0] != "later" {
		t.Fatalf("T:0 holds %q after the restart, want [later]", got)
	}
}

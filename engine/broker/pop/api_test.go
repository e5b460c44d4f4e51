package pop_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/pop"
	"github.com/brokerlab/brokerlab/engine/protocol"
)

// Popped messages not acked in their invisible time come back (from the
// retry topic, attempt 2, under the consumer's topic); acked ones do not;
// a second ack of a handle is refused.
func TestPopAckInvisibleRedelivery(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 2)
	for i, b := range []string{"a", "b", "c"} {
		e.send("T", int32(i%2), b, "tag")
	}
	req := pop.Request{Group: "g", Topic: "T", QueueID: -1, MaxMessages: 32, Invisible: 300 * time.Millisecond}
	got := e.popUntil(req, 3)
	if len(got) != 3 {
		t.Fatalf("popped %s", bodies(got))
	}
	var keep pop.Message
	for _, m := range got {
		if m.DeliveryAttempt != 1 {
			t.Fatalf("first delivery attempt %d", m.DeliveryAttempt)
		}
		if _, err := pop.ParseHandle(m.Handle); err != nil {
			t.Fatal(err)
		}
		if string(m.Record.Body) == "b" {
			keep = m
			continue
		}
		e.ack("g", "T", m)
		wantInvalid(t, "second ack", e.svc.Ack("g", "T", m.Handle))
	}
	req.Poll = 3 * time.Second
	again := e.popUntil(req, 1)
	if len(again) != 1 || string(again[0].Record.Body) != "b" || again[0].DeliveryAttempt != 2 || !again[0].Retry ||
		string(again[0].Record.Topic) != "T" {
		t.Fatalf("redelivered %s (retry %v, topic %s)", bodies(again), again[0].Retry, again[0].Record.Topic)
	}
	if id, _ := again[0].Record.Property("UNIQ_KEY"); string(id) != "id-b" {
		t.Fatalf("redelivered UNIQ_KEY %q", id)
	}
	wantInvalid(t, "ack after the invisible time", e.svc.Ack("g", "T", keep.Handle))
	e.ack("g", "T", again[0])
	req.Poll = 400 * time.Millisecond
	if extra := e.pop(req); len(extra) != 0 {
		t.Fatalf("delivered after every ack: %s", bodies(extra))
	}
}

// ChangeInvisible extends a message's lease (the old handle is then
// invalid) and can shorten it again.
func TestChangeInvisible(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	e.send("T", 0, "m", "")
	req := pop.Request{Group: "g", Topic: "T", QueueID: 0, MaxMessages: 1, Invisible: 200 * time.Millisecond}
	m := e.popUntil(req, 1)[0]
	h1, err := e.svc.ChangeInvisible("g", "T", m.Handle, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, "ack of the old handle", e.svc.Ack("g", "T", m.Handle))
	// Well past the first invisible time: not back, as it is leased for a minute.
	req.Poll = 600 * time.Millisecond
	if got := e.pop(req); len(got) != 0 {
		t.Fatalf("delivered while invisible: %s", bodies(got))
	}
	if _, err := e.svc.ChangeInvisible("g", "T", h1, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	req.Poll = 3 * time.Second
	back := e.popUntil(req, 1)
	if string(back[0].Record.Body) != "m" || back[0].DeliveryAttempt != 2 {
		t.Fatalf("back: %s", bodies(back))
	}
	wantInvalid(t, "garbage handle", e.svc.Ack("g", "T", "1 2 x"))
}

// A message delivered retryMaxTimes+1 times goes to %DLQ%<group> on its
// next pop; ToDLQ moves one at once.
func TestRetryThenDLQ(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	e.createGroup("g", 1)
	e.send("T", 0, "m", "")
	req := pop.Request{Group: "g", Topic: "T", QueueID: -1, MaxMessages: 4, Invisible: 100 * time.Millisecond, Poll: 500 * time.Millisecond}
	attempts := 0
	eventually(t, "the message in the DLQ", func() bool {
		for _, m := range e.pop(req) {
			attempts++
			if m.DeliveryAttempt != int32(attempts) || m.DeliveryAttempt > 2 {
				t.Fatalf("delivery %d has attempt %d", attempts, m.DeliveryAttempt)
			}
		}
		return len(e.queueBodies(protocol.DLQTopic("g"), 0)) == 1
	})
	if attempts != 2 {
		t.Fatalf("%d deliveries before the DLQ, want 2", attempts)
	}

	e.send("T", 0, "n", "")
	req.Invisible = time.Minute
	m := e.popUntil(req, 1)[0]
	if err := e.svc.ToDLQ("g", "T", m.Handle); err != nil {
		t.Fatal(err)
	}
	if got := e.queueBodies(protocol.DLQTopic("g"), 0); strings.Join(got, ",") != "m,n" {
		t.Fatalf("DLQ holds %v", got)
	}
	wantInvalid(t, "ack after ToDLQ", e.svc.Ack("g", "T", m.Handle))
}

// FIFO: one batch of a queue in flight at a time, in order; an un-acked
// batch comes back from its first un-acked message.
func TestFIFOOneInFlightInOrder(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("F", 1)
	for _, b := range []string{"0", "1", "2", "3", "4"} {
		e.send("F", 0, b, "")
	}
	req := pop.Request{Group: "g", Topic: "F", QueueID: -1, MaxMessages: 2, Invisible: time.Minute, FIFO: true}
	first := e.popUntil(req, 2)
	if bodies(first) != "0(q0@0 #1) 1(q0@1 #1) " {
		t.Fatalf("first batch %s", bodies(first))
	}
	if got := e.pop(req); len(got) != 0 {
		t.Fatalf("second batch while the first is in flight: %s", bodies(got))
	}
	e.ack("g", "F", first[0])
	if got := e.pop(req); len(got) != 0 {
		t.Fatalf("batch while message 1 is in flight: %s", bodies(got))
	}
	e.ack("g", "F", first[1])
	second := e.popUntil(req, 2)
	if bodies(second) != "2(q0@2 #1) 3(q0@3 #1) " {
		t.Fatalf("second batch %s", bodies(second))
	}
	// Let the batch expire: it comes back, in order, attempt 2.
	if _, err := e.svc.ChangeInvisible("g", "F", second[0].Handle, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.ChangeInvisible("g", "F", second[1].Handle, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	req.Poll = 3 * time.Second
	again := e.popUntil(req, 2)
	if bodies(again) != "2(q0@2 #2) 3(q0@3 #2) " {
		t.Fatalf("redelivered batch %s", bodies(again))
	}
	wantInvalid(t, "ack of the expired lease", e.svc.Ack("g", "F", second[0].Handle))
	for _, m := range again {
		e.ack("g", "F", m)
	}
	last := e.popUntil(req, 1)
	if bodies(last) != "4(q0@4 #1) " {
		t.Fatalf("last batch %s", bodies(last))
	}
}

// A long poll is woken by a message arriving.
func TestLongPollWokenBySend(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	done := make(chan []pop.Message, 1)
	go func() {
		msgs, _ := e.svc.Pop(t.Context(), pop.Request{Group: "g", Topic: "T", QueueID: -1, MaxMessages: 1,
			Invisible: time.Minute, Poll: waitLimit})
		done <- msgs
	}()
	eventually(t, "the pop to wait", func() bool { return e.svc.Polling("T") > 0 })
	e.send("T", 0, "late", "")
	select {
	case msgs := <-done:
		if len(msgs) != 1 || string(msgs[0].Record.Body) != "late" {
			t.Fatalf("woken pop got %s", bodies(msgs))
		}
	case <-time.After(waitLimit):
		t.Fatal("the long poll was not woken")
	}
}

func TestPopErrors(t *testing.T) {
	e := startEnv(t, nil)
	_, err := e.svc.Pop(t.Context(), pop.Request{Group: "g", Topic: "nope", QueueID: -1, MaxMessages: 1, Invisible: time.Second})
	if !errors.Is(err, pop.ErrTopicNotExist) {
		t.Fatalf("pop of a missing topic: %v", err)
	}
	e.createTopic("T", 1)
	_, err = e.svc.Pop(t.Context(), pop.Request{Group: "g", Topic: "T", QueueID: 3, MaxMessages: 1, Invisible: time.Second})
	if !errors.Is(err, pop.ErrBadRequest) {
		t.Fatalf("pop of queue 3 of 1: %v", err)
	}
}

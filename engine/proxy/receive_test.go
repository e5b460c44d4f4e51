package proxy_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/proxy"
	"github.com/brokerlab/brokerlab/engine/record"
)

// fakeConsumer leases queued bodies; handles are "h<n>", acked ones invalid.
type fakeConsumer struct {
	mu      sync.Mutex
	queue   []string
	leased  map[string]string
	seq     int
	lastReq proxy.PopRequest
	dlq     []string
}

func (f *fakeConsumer) Pop(ctx context.Context, req proxy.PopRequest) ([]proxy.PoppedMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastReq = req
	var out []proxy.PoppedMessage
	for len(f.queue) > 0 && len(out) < req.MaxMessages {
		body := f.queue[0]
		f.queue = f.queue[1:]
		f.seq++
		h := fmt.Sprintf("h%d", f.seq)
		f.leased[h] = body
		props := record.EncodeProperties(map[string]string{record.PropertyUniqKey: "U-" + body, record.PropertyTags: "t"})
		out = append(out, proxy.PoppedMessage{Handle: h, DeliveryAttempt: 1,
			Record: record.Record{Topic: []byte(req.Topic), Body: []byte(body), Properties: []byte(props), QueueOffset: int64(f.seq)}})
	}
	return out, nil
}

func (f *fakeConsumer) take(handle string) (string, error) {
	body, ok := f.leased[handle]
	if !ok {
		return "", fmt.Errorf("fake: %w", proxy.ErrInvalidHandle)
	}
	delete(f.leased, handle)
	return body, nil
}

func (f *fakeConsumer) Ack(group, topic, handle string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err := f.take(handle)
	return err
}

func (f *fakeConsumer) ChangeInvisible(group, topic, handle string, d time.Duration) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	body, err := f.take(handle)
	if err != nil {
		return "", err
	}
	f.seq++
	h := fmt.Sprintf("h%d", f.seq)
	f.leased[h] = body
	return h, nil
}

func (f *fakeConsumer) ToDLQ(group, topic, handle string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	body, err := f.take(handle)
	f.dlq = append(f.dlq, body)
	return err
}

func (e *env) receive(ctx context.Context, group, topic string, batch int32) (*v2.Status, []*v2.Message) {
	e.t.Helper()
	st, err := e.cli.ReceiveMessage(ctx, &v2.ReceiveMessageRequest{Group: res(group), MessageQueue: &v2.MessageQueue{Topic: res(topic), Id: -1},
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}, BatchSize: batch,
		InvisibleDuration: durpb(30 * time.Second), LongPollingTimeout: durpb(0)})
	if err != nil {
		e.t.Fatal(err)
	}
	var status *v2.Status
	var msgs []*v2.Message
	for {
		r, err := st.Recv()
		if err == io.EOF {
			return status, msgs
		}
		if err != nil {
			e.t.Fatal(err)
		}
		switch c := r.Content.(type) {
		case *v2.ReceiveMessageResponse_Status:
			status = c.Status
		case *v2.ReceiveMessageResponse_Message:
			msgs = append(msgs, c.Message)
		}
	}
}

func TestReceiveAckChangeInvisibleDLQ(t *testing.T) {
	fc := &fakeConsumer{queue: []string{"a", "b", "c"}, leased: map[string]string{}}
	e := startEnv(t, nil, func(c *proxy.Config) { c.Consumer = fc })
	e.topic("PopT", 2, "")
	ctx := callCtx(t, "c-pop", "", "")
	st, msgs := e.receive(ctx, "PopG", "PopT", 2)
	if st.GetCode() != v2.Code_OK || len(msgs) != 2 || string(msgs[0].Body) != "a" || msgs[0].SystemProperties.GetReceiptHandle() != "h1" ||
		msgs[0].SystemProperties.MessageId != "U-a" || msgs[0].SystemProperties.GetDeliveryAttempt() != 1 {
		t.Fatalf("receive: %v %v", st, msgs)
	}
	if fc.lastReq.Group != "PopG" || fc.lastReq.Topic != "PopT" || fc.lastReq.QueueID != -1 || fc.lastReq.Invisible != 30*time.Second ||
		fc.lastReq.ClientID != "c-pop" || fc.lastReq.InitMode != protocol.ConsumeInitMax { // MAX as ReceiveMessageActivity
		t.Fatalf("pop request %+v", fc.lastReq)
	}
	ack, err := e.cli.AckMessage(ctx, &v2.AckMessageRequest{Group: res("PopG"), Topic: res("PopT"),
		Entries: []*v2.AckMessageEntry{{MessageId: "U-a", ReceiptHandle: "h1"}}})
	if err != nil || ack.Status.Code != v2.Code_OK {
		t.Fatalf("ack: %v %v", ack, err)
	}
	ack, err = e.cli.AckMessage(ctx, &v2.AckMessageRequest{Group: res("PopG"), Topic: res("PopT"),
		Entries: []*v2.AckMessageEntry{{MessageId: "U-a", ReceiptHandle: "h1"}}})
	if err != nil || ack.Status.Code != v2.Code_INVALID_RECEIPT_HANDLE || ack.Entries[0].Status.Code != v2.Code_INVALID_RECEIPT_HANDLE {
		t.Fatalf("second ack: %v %v", ack, err)
	}
	ch, err := e.cli.ChangeInvisibleDuration(ctx, &v2.ChangeInvisibleDurationRequest{Group: res("PopG"), Topic: res("PopT"),
		ReceiptHandle: "h2", InvisibleDuration: durpb(time.Minute), MessageId: "U-b"})
	if err != nil || ch.Status.Code != v2.Code_OK || ch.ReceiptHandle == "" || ch.ReceiptHandle == "h2" {
		t.Fatalf("change invisible: %v %v", ch, err)
	}
	dl, err := e.cli.ForwardMessageToDeadLetterQueue(ctx, &v2.ForwardMessageToDeadLetterQueueRequest{Group: res("PopG"), Topic: res("PopT"),
		ReceiptHandle: ch.ReceiptHandle, MessageId: "U-b", DeliveryAttempt: 1, MaxDeliveryAttempts: 16})
	if err != nil || dl.Status.Code != v2.Code_OK || len(fc.dlq) != 1 || fc.dlq[0] != "b" {
		t.Fatalf("dlq: %v %v %v", dl, err, fc.dlq)
	}
	if st, msgs = e.receive(ctx, "PopG", "PopT", 32); st.GetCode() != v2.Code_OK || len(msgs) != 1 {
		t.Fatalf("last: %v %v", st, msgs)
	}
	if st, _ = e.receive(ctx, "PopG", "PopT", 32); st.GetCode() != v2.Code_MESSAGE_NOT_FOUND {
		t.Fatalf("empty long poll: %v", st)
	}
	if st, _ = e.receive(ctx, "PopG", "NoSuchTopic", 32); st.GetCode() != v2.Code_TOPIC_NOT_FOUND {
		t.Fatalf("unknown topic: %v", st)
	}
}

// TestReceiveOverPOP: the broker's POP service behind ReceiveMessage: a
// received message not acked comes back after its invisible time.
func TestReceiveOverPOP(t *testing.T) {
	e := startEnv(t, nil, func(c *proxy.Config) { c.MinInvisible = time.Millisecond })
	e.topic("PopReal", 1, "")
	ctx := callCtx(t, "c-real", "", "")
	if r := e.send(ctx, message("PopReal", "P-1", "one"), message("PopReal", "P-2", "two")); r.Status.Code != v2.Code_OK {
		t.Fatalf("send: %v", r.Status)
	}
	recv := func(invisible time.Duration) []*v2.Message {
		st, err := e.cli.ReceiveMessage(ctx, &v2.ReceiveMessageRequest{Group: res("RealG"), MessageQueue: &v2.MessageQueue{Topic: res("PopReal"), Id: -1},
			FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}, BatchSize: 32,
			InvisibleDuration: durpb(invisible), LongPollingTimeout: durpb(200 * time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		var msgs []*v2.Message
		for {
			r, err := st.Recv()
			if err == io.EOF {
				return msgs
			}
			if err != nil {
				t.Fatal(err)
			}
			if m := r.GetMessage(); m != nil {
				msgs = append(msgs, m)
			}
		}
	}
	var got []*v2.Message
	deadline := time.Now().Add(waitLimit)
	for len(got) < 2 && time.Now().Before(deadline) {
		got = append(got, recv(300*time.Millisecond)...)
	}
	if len(got) != 2 {
		t.Fatalf("received %d of 2", len(got))
	}
	var keep *v2.Message
	for _, m := range got {
		if string(m.Body) == "one" {
			ack, err := e.cli.AckMessage(ctx, &v2.AckMessageRequest{Group: res("RealG"), Topic: res("PopReal"),
				Entries: []*v2.AckMessageEntry{{MessageId: m.SystemProperties.MessageId, ReceiptHandle: m.SystemProperties.GetReceiptHandle()}}})
			if err != nil || ack.Status.Code != v2.Code_OK {
				t.Fatalf("ack: %v %v", ack, err)
			}
		} else {
			keep = m
		}
	}
	var again []*v2.Message
	for len(again) == 0 && time.Now().Before(deadline) {
		again = recv(time.Minute)
	}
	if len(again) != 1 || string(again[0].Body) != "two" || again[0].SystemProperties.GetDeliveryAttempt() != 2 {
		t.Fatalf("redelivery: %v (first %v)", again, keep)
	}
}

// A receive without long_polling_timeout (the Go client v5.1.4 never sets
// it; its wait is the call's deadline) is held for the deadline less the
// reserve, as Java's proxy holds it: a message sent while it waits is its
// answer. Unheld, it would have answered MESSAGE_NOT_FOUND before the send.
func TestReceiveWithoutPollingTimeoutHolds(t *testing.T) {
	e := startEnv(t, nil, nil)
	e.topic("PopHold", 1, "")
	ctx := callCtx(t, "c-hold", "", "")
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := e.cli.ReceiveMessage(rctx, &v2.ReceiveMessageRequest{Group: res("HoldG"), MessageQueue: &v2.MessageQueue{Topic: res("PopHold"), Id: -1},
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}, BatchSize: 32,
		InvisibleDuration: durpb(30 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	// Not a wait for a condition: the send must come after the receive
	// was issued, which the held call has 9 s to see.
	time.Sleep(200 * time.Millisecond)
	if r := e.send(ctx, message("PopHold", "H-1", "late")); r.Status.Code != v2.Code_OK {
		t.Fatalf("send: %v", r.Status)
	}
	var got []string
	var status *v2.Status
	for {
		r, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch c := r.Content.(type) {
		case *v2.ReceiveMessageResponse_Status:
			status = c.Status
		case *v2.ReceiveMessageResponse_Message:
			got = append(got, string(c.Message.Body))
		}
	}
	if len(got) != 1 || got[0] != "late" {
		t.Fatalf("held receive answered %v with %v", status, got)
	}
}

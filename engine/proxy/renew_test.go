package proxy_test

import (
	"context"
	"io"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brokerlab/brokerlab/engine/proxy"
)

// receiveRenewed receives up to one message as the push consumer does
// (auto_renew, here with an invisible duration so the test is short).
func (e *env) receiveRenewed(ctx context.Context, group, topic string, invisible time.Duration) *v2.Message {
	e.t.Helper()
	st, err := e.cli.ReceiveMessage(ctx, &v2.ReceiveMessageRequest{Group: res(group), MessageQueue: &v2.MessageQueue{Topic: res(topic), Id: -1},
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}, BatchSize: 1, AutoRenew: true,
		InvisibleDuration: durpb(invisible), LongPollingTimeout: durpb(0)})
	if err != nil {
		e.t.Fatal(err)
	}
	var msg *v2.Message
	for {
		r, err := st.Recv()
		if err == io.EOF {
			return msg
		}
		if err != nil {
			e.t.Fatal(err)
		}
		if m := r.GetMessage(); m != nil {
			msg = m
		}
	}
}

// openSession opens a consumer's Telemetry stream (its connection, for
// the renewal) and returns its cancel.
func (e *env) openSession(clientID, group string) context.CancelFunc {
	e.t.Helper()
	ctx, cancel := context.WithCancel(callCtx(e.t, clientID, "", ""))
	st, err := e.cli.Telemetry(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	ct := v2.ClientType_PUSH_CONSUMER
	if err := st.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{ClientType: &ct,
		PubSub: &v2.Settings_Subscription{Subscription: &v2.Subscription{Group: res(group)}}}}}); err != nil {
		e.t.Fatal(err)
	}
	if r, err := st.Recv(); err != nil || r.GetSettings() == nil {
		e.t.Fatalf("settings reply %v %v", r, err)
	}
	return cancel
}

// A message received with auto_renew stays invisible while its consumer
// is connected, past its first invisible time, and its first handle still
// acks it (the proxy acks the renewed one); when the consumer goes away
// its leased message comes back, as Java's ReceiptHandleManager.
func TestAutoRenewKeepsLeaseUntilClientGoes(t *testing.T) {
	const invisible = 500 * time.Millisecond
	e := startEnv(t, nil, func(c *proxy.Config) {
		c.MinInvisible = 100 * time.Millisecond
		c.RenewPeriod = 20 * time.Millisecond
		c.RenewAhead = 400 * time.Millisecond
		c.RenewDelays = []time.Duration{invisible}
		c.ClearInvisible = 50 * time.Millisecond
	})
	e.topic("RenewT", 1, "NORMAL")
	ctxA := callCtx(t, "c-push-a", "", "")
	ctxB := callCtx(t, "c-push-b", "", "")
	if r := e.send(ctxA, message("RenewT", "R-1", "one")); r.Status.Code != v2.Code_OK {
		t.Fatalf("send: %v", r.Status)
	}
	cancelA := e.openSession("c-push-a", "g-renew")
	defer cancelA()
	start := time.Now()
	m := e.receiveRenewed(ctxA, "g-renew", "RenewT", invisible)
	if m == nil || string(m.Body) != "one" {
		t.Fatalf("received %v", m)
	}
	deadline := time.Now().Add(waitLimit)
	for e.p.RenewedLeases() < 3 || time.Since(start) < invisible+100*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("renewed %d times", e.p.RenewedLeases())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st, msgs := e.receive(ctxB, "g-renew", "RenewT", 1); st.GetCode() != v2.Code_MESSAGE_NOT_FOUND {
		t.Fatalf("a renewed message was received again: %v %v", st, msgs)
	}
	ack, err := e.cli.AckMessage(ctxA, &v2.AckMessageRequest{Group: res("g-renew"), Topic: res("RenewT"),
		Entries: []*v2.AckMessageEntry{{MessageId: "R-1", ReceiptHandle: m.SystemProperties.GetReceiptHandle()}}})
	if err != nil || ack.Status.Code != v2.Code_OK {
		t.Fatalf("ack with the first handle after renewals: %v %v", ack, err)
	}

	// A second message leased by A comes back once A's stream ends.
	e.send(ctxA, message("RenewT", "R-2", "two"))
	if m := e.receiveRenewed(ctxA, "g-renew", "RenewT", 30*time.Second); m == nil || string(m.Body) != "two" {
		t.Fatalf("received %v", m)
	}
	cancelA()
	for {
		st, msgs := e.receive(ctxB, "g-renew", "RenewT", 1)
		if st.GetCode() == v2.Code_OK && len(msgs) == 1 && string(msgs[0].Body) == "two" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lease of a client gone never ended: %v %v", st, msgs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

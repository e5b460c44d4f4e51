package proxy_test

import (
	"context"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/proxy"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// subGroup creates or updates a subscription group on the broker
// (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP) with the JSON config body.
func (e *env) subGroup(body string) {
	e.t.Helper()
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	c := remoting.NewClient(ccfg)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	req := remoting.NewRequest(protocol.ReqUpdateAndCreateSubscriptionGroup, remoting.ExtFields{})
	req.Body = []byte(body)
	resp, err := c.InvokeSync(ctx, e.b.Addr(), req)
	if err != nil || resp.Code != protocol.RespSuccess {
		e.t.Fatalf("update subscription group: %v %v", resp, err)
	}
}

// consumerSettings opens a Telemetry stream as a simple consumer of group
// (sending its own backoff policy own, nil for none) and returns the
// server's settings.
func (e *env) consumerSettings(clientID, group string, own *v2.RetryPolicy) *v2.Settings {
	e.t.Helper()
	st, err := e.cli.Telemetry(callCtx(e.t, clientID, "", ""))
	if err != nil {
		e.t.Fatal(err)
	}
	ct := v2.ClientType_SIMPLE_CONSUMER
	if err := st.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{ClientType: &ct,
		BackoffPolicy: own, PubSub: &v2.Settings_Subscription{Subscription: &v2.Subscription{Group: res(group)}}}}}); err != nil {
		e.t.Fatal(err)
	}
	r, err := st.Recv()
	if err != nil || r.GetSettings() == nil {
		e.t.Fatalf("settings reply %v %v", r, err)
	}
	_ = st.CloseSend()
	return r.GetSettings()
}

func durations(ds []*durationpb.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.AsDuration()
	}
	return out
}

// The FIFO flag (consumeMessageOrderly) and the retry policy in a
// consumer's settings are its subscription group's
// (GrpcClientSettingsManager.mergeSubscriptionData): retryMaxTimes + 1
// attempts and the group's EXPONENTIAL or CUSTOMIZED backoff; a new group
// gets the defaults; an unknown group (no auto-creation) keeps the
// client's own policy.
func TestSettingsFromGroup(t *testing.T) {
	e := startEnv(t, nil, nil)
	e.subGroup(`{"groupName":"g-exp","consumeEnable":true,"retryMaxTimes":3,` +
		`"groupRetryPolicy":{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":2000,"max":60000,"multiplier":3}}}`)
	e.subGroup(`{"groupName":"g-cust","consumeEnable":true,"retryMaxTimes":5,` +
		`"groupRetryPolicy":{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000,2500]}}}`)

	e.subGroup(`{"groupName":"g-fifo","consumeEnable":true,"consumeMessageOrderly":true,"retryMaxTimes":16}`)
	if s := e.consumerSettings("c-fifo", "g-fifo", nil).GetSubscription(); !s.GetFifo() {
		t.Fatalf("an orderly group's settings: %v", s)
	}

	p := e.consumerSettings("c-exp", "g-exp", nil).GetBackoffPolicy()
	exp := p.GetExponentialBackoff()
	if p.GetMaxAttempts() != 4 || exp == nil || exp.Initial.AsDuration() != 2*time.Second || exp.Max.AsDuration() != time.Minute || exp.Multiplier != 3 {
		t.Fatalf("g-exp policy %v", p)
	}
	p = e.consumerSettings("c-cust", "g-cust", nil).GetBackoffPolicy()
	if got := durations(p.GetCustomizedBackoff().GetNext()); p.GetMaxAttempts() != 6 || len(got) != 2 || got[0] != time.Second || got[1] != 2500*time.Millisecond {
		t.Fatalf("g-cust policy %v", p)
	}
	s := e.consumerSettings("c-new", "g-new", nil)
	if s.GetSubscription().GetFifo() {
		t.Fatal("a new group's settings say FIFO")
	}
	p = s.GetBackoffPolicy()
	if got := durations(p.GetCustomizedBackoff().GetNext()); p.GetMaxAttempts() != 17 || len(got) != 18 || got[0] != time.Second || got[17] != 2*time.Hour {
		t.Fatalf("new group policy %v", p)
	}

	e2 := startEnv(t, func(c *broker.Config) { c.AutoCreateSubscriptionGroup = false }, nil)
	own := &v2.RetryPolicy{MaxAttempts: 7, Strategy: &v2.RetryPolicy_ExponentialBackoff{ExponentialBackoff: &v2.ExponentialBackoff{
		Initial: durationpb.New(time.Second), Max: durationpb.New(time.Minute), Multiplier: 2}}}
	if p := e2.consumerSettings("c-unknown", "g-unknown", own).GetBackoffPolicy(); p.GetMaxAttempts() != 7 || p.GetExponentialBackoff() == nil {
		t.Fatalf("unknown group policy %v, want the client's", p)
	}
}

// ReceiveMessage pops in FIFO order for a group whose config says
// consumeMessageOrderly, whatever the client's settings say.
func TestReceiveFIFOFromGroup(t *testing.T) {
	fc := &fakeConsumer{queue: []string{"a", "b"}, leased: map[string]string{}}
	e := startEnv(t, nil, func(c *proxy.Config) { c.Consumer = fc })
	e.topic("OrdT", 1, "FIFO")
	e.subGroup(`{"groupName":"g-ord","consumeEnable":true,"consumeMessageOrderly":true,"retryMaxTimes":16}`)
	ctx := callCtx(t, "c-ord", "", "")
	if st, _ := e.receive(ctx, "g-ord", "OrdT", 1); st.GetCode() != v2.Code_OK || !fc.lastReq.FIFO {
		t.Fatalf("receive for an orderly group: %v, pop request %+v", st, fc.lastReq)
	}
	if st, _ := e.receive(ctx, "g-plain", "OrdT", 1); st.GetCode() != v2.Code_OK || fc.lastReq.FIFO {
		t.Fatalf("receive for a new group: %v, pop request %+v", st, fc.lastReq)
	}
}

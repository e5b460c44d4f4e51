package compat_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// timedReceipt is one delivery as the push consumer saw it.
type timedReceipt struct {
	at  time.Time
	msg *primitive.MessageExt
}

type timedReceived struct {
	mu sync.Mutex
	by map[string][]timedReceipt // body → deliveries
}

func (r *timedReceived) get(body string) []timedReceipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]timedReceipt(nil), r.by[body]...)
}

func startTimedConsumer(t *testing.T, c *cluster, group, topic string) *timedReceived {
	t.Helper()
	rec := &timedReceived{by: map[string][]timedReceipt{}}
	pc, err := consumer.NewPushConsumer(consumer.WithNsResolver(c.nsr), consumer.WithGroupName(group),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	err = pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			now := time.Now()
			rec.mu.Lock()
			defer rec.mu.Unlock()
			for _, m := range ms {
				rec.by[string(m.Body)] = append(rec.by[string(m.Body)], timedReceipt{at: now, msg: m})
			}
			return consumer.ConsumeSuccess, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Shutdown() })
	return rec
}

// TestTimerMessagesWithGoClient (issue 13 §4): messages with TIMER_DELAY_SEC
// and TIMER_DELIVER_MS set through msg.WithProperty reach a push consumer no
// earlier than due, once, with the message id the producer got; one due in
// the past arrives at once; one beyond timerMaxDelaySec is refused.
func TestTimerMessagesWithGoClient(t *testing.T) {
	c := startCluster(t)
	adm := newAdmin(t, c)
	createTopic(t, c, adm, "TimerT", 2)
	c.waitRoute("TimerT")
	p := newProducer(t, c, "timer-pg")
	rec := startTimedConsumer(t, c, "timer-cg", "TimerT")
	waitUntil(t, "consumer registered", 10*time.Second, func() bool { return len(c.members("timer-cg")) == 1 })

	start := time.Now()
	due := map[string]time.Time{
		"delay-sec": start.Add(2 * time.Second),
		"deliver":   start.Add(3 * time.Second),
		"past":      start.Add(-time.Minute),
	}
	ids := map[string]string{}
	send := func(body string, key, value string) {
		m := primitive.NewMessage("TimerT", []byte(body))
		m.WithProperty(key, value)
		m.WithTag("timed")
		res, err := p.SendSync(context.Background(), m)
		if err != nil {
			t.Fatalf("send %s: %v", body, err)
		}
		if res.Status != primitive.SendOK {
			t.Fatalf("send %s: status %v", body, res.Status)
		}
		ids[body] = res.MsgID
	}
	send("delay-sec", "TIMER_DELAY_SEC", "2")
	send("deliver", "TIMER_DELIVER_MS", strconv.FormatInt(due["deliver"].UnixMilli(), 10))
	send("past", "TIMER_DELIVER_MS", strconv.FormatInt(due["past"].UnixMilli(), 10))

	// Too far ahead: refused (MESSAGE_ILLEGAL), never stored.
	far := primitive.NewMessage("TimerT", []byte("far"))
	far.WithProperty("TIMER_DELAY_SEC", strconv.Itoa(4*24*3600))
	if _, err := p.SendSync(context.Background(), far); err == nil {
		t.Fatal("a timer message 4 days ahead was accepted")
	}

	waitUntil(t, "all timer messages", 15*time.Second, func() bool {
		return len(rec.get("delay-sec")) > 0 && len(rec.get("deliver")) > 0 && len(rec.get("past")) > 0
	})
	time.Sleep(500 * time.Millisecond) // a duplicate would show up
	for body, d := range due {
		got := rec.get(body)
		if len(got) != 1 {
			t.Fatalf("%s delivered %d times", body, len(got))
		}
		r := got[0]
		if r.at.Before(d) || r.msg.StoreTimestamp < d.UnixMilli() {
			t.Fatalf("%s received at %v (stored %d), due %v: early", body, r.at, r.msg.StoreTimestamp, d)
		}
		if r.msg.MsgId != ids[body] {
			t.Fatalf("%s: message id %s, producer got %s", body, r.msg.MsgId, ids[body])
		}
		if r.msg.Topic != "TimerT" || r.msg.GetTags() != "timed" {
			t.Fatalf("%s delivered to %s with tag %q", body, r.msg.Topic, r.msg.GetTags())
		}
		if body != "past" && r.msg.GetProperty("TIMER_OUT_MS") == "" {
			t.Fatalf("%s delivered without TIMER_OUT_MS", body)
		}
	}
	if len(rec.get("far")) != 0 || c.maxOffset("TimerT", 0)+c.maxOffset("TimerT", 1) != 3 {
		t.Fatal("the refused timer message was stored")
	}
}

// TestTimerMessageSurvivesRestart: a timer message sent with the Go client
// and a broker restart before it is due is delivered once, not early.
func TestTimerMessageSurvivesRestart(t *testing.T) {
	c := startCluster(t)
	adm := newAdmin(t, c)
	createTopic(t, c, adm, "TimerR", 1)
	c.waitRoute("TimerR")
	p := newProducer(t, c, "timer-pg")
	m := primitive.NewMessage("TimerR", []byte("restart"))
	due := time.Now().Add(2 * time.Second)
	m.WithProperty("TIMER_DELIVER_MS", strconv.FormatInt(due.UnixMilli(), 10))
	if _, err := p.SendSync(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	c.restartBroker()
	// Checked only while the message is not yet due (a slow restart may
	// end after the due time, when a delivery is right).
	if n := c.maxOffset("TimerR", 0); n != 0 && time.Now().Before(due) {
		t.Fatalf("delivered %v before due", time.Until(due))
	}
	rec := startTimedConsumer(t, c, "timer-restart-cg", "TimerR")
	waitUntil(t, "delivery after restart", 15*time.Second, func() bool { return len(rec.get("restart")) > 0 })
	time.Sleep(500 * time.Millisecond)
	got := rec.get("restart")
	if len(got) != 1 || got[0].msg.StoreTimestamp < due.UnixMilli() {
		t.Fatalf("%d deliveries, first stored %d, due %d", len(got), got[0].msg.StoreTimestamp, due.UnixMilli())
	}
	if n := c.maxOffset("TimerR", 0); n != 1 {
		t.Fatalf("TimerR holds %d messages, want 1", n)
	}
}

// TestLitePullMessageRaw: the official Go client has no lite pull consumer
// (it only sends PULL_MESSAGE), so LITE_PULL_MESSAGE (361) is sent as Java's
// DefaultLitePullConsumer sends it (suspend | subscription | lite flags,
// brokerSuspendMaxTimeMillis 20 s) for messages the Go producer sent.
func TestLitePullMessageRaw(t *testing.T) {
	c := startCluster(t)
	adm := newAdmin(t, c)
	createTopic(t, c, adm, "LiteT", 1)
	c.waitRoute("LiteT")
	p := newProducer(t, c, "lite-pg")
	if _, err := p.SendSync(context.Background(), primitive.NewMessage("LiteT", []byte("first"))); err != nil {
		t.Fatal(err)
	}
	lite := func(offset int64) remoting.ExtFields {
		ext := remoting.ExtFields{"consumerGroup": "lite-cg", "topic": "LiteT", "queueId": "0", "maxMsgNums": "32",
			"commitOffset": "0", "subscription": "*", "subVersion": "0", "expressionType": "TAG", "bname": c.b.Config().BrokerName,
			"suspendTimeoutMillis": "20000"}
		ext.SetInt64("queueOffset", offset)
		ext.SetInt32("sysFlag", protocol.PullFlagSuspend|protocol.PullFlagSubscription|protocol.PullFlagLitePull)
		return ext
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	resp, err := c.rc.InvokeSync(ctx, c.b.Addr(), remoting.NewRequest(protocol.ReqLitePullMessage, lite(0)))
	if err != nil || resp.Code != protocol.RespSuccess {
		t.Fatalf("lite pull: %v %v", err, resp)
	}
	if r, err := record.Decode(resp.Body, true); err != nil || string(r.Body) != "first" {
		t.Fatalf("lite pull body: %v %q", err, r.Body)
	}

	// Held until the next message arrives.
	type answer struct {
		resp *remoting.Command
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		r, err := c.rc.InvokeSync(ctx, c.b.Addr(), remoting.NewRequest(protocol.ReqLitePullMessage, lite(1)))
		ch <- answer{r, err}
	}()
	waitUntil(t, "lite pull held", 5*time.Second, func() bool { return c.b.HeldPulls() == 1 })
	if _, err := p.SendSync(context.Background(), primitive.NewMessage("LiteT", []byte("second"))); err != nil {
		t.Fatal(err)
	}
	a := <-ch
	if a.err != nil || a.resp.Code != protocol.RespSuccess {
		t.Fatalf("held lite pull: %v %v", a.err, a.resp)
	}
	if r, err := record.Decode(a.resp.Body, true); err != nil || string(r.Body) != "second" {
		t.Fatalf("held lite pull body: %v %q", err, r.Body)
	}
}

package broker_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// TestFlowControlCounters: each kind of flow-control refusal is counted
// once per refused send, and nothing else is.
func TestFlowControlCounters(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) {
		c.SendWorkers = 1
		c.SendQueueSize = 1
		c.SendQueueMaxWait = time.Hour
	})
	e.createTopic("T", 1)
	if fc := e.b.FlowControl(); fc != (broker.FlowControl{}) {
		t.Fatalf("fresh broker: %+v", fc)
	}

	// Arrival while the page cache is busy.
	e.store.SetOSPageCacheBusy(true)
	wantCode(t, "busy send", e.send("T", 0, "x", ""), protocol.RespSystemBusy)
	e.store.SetOSPageCacheBusy(false)

	// A full queue, then the queued send cleaned when the cache turns busy.
	entered, release := blockPuts(e)
	defer release()
	first := e.asyncSend("T", "slow")
	<-entered
	queued := e.asyncSend("T", "queued")
	eventually(t, "the send to be queued", func() bool { return e.b.QueuedSends() == 1 })
	wantCode(t, "overflowing send", <-e.asyncSend("T", "overflow"), protocol.RespSystemBusy)
	e.store.SetOSPageCacheBusy(true)
	wantCode(t, "cleaned send", <-queued, protocol.RespSystemBusy)
	e.store.SetOSPageCacheBusy(false)
	release()
	wantCode(t, "blocked send", <-first, protocol.RespSuccess)

	want := broker.FlowControl{PageCacheBusyRejected: 1, PageCacheBusyCleaned: 1, QueueFull: 1}
	if fc := e.b.FlowControl(); fc != want {
		t.Fatalf("counters %+v, want %+v", fc, want)
	}
}

// TestFlowControlQueueTimeouts: sends expired in the queue are counted.
func TestFlowControlQueueTimeouts(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) {
		c.SendWorkers = 1
		c.SendQueueMaxWait = 30 * time.Millisecond
	})
	e.createTopic("T", 1)
	entered, release := blockPuts(e)
	first := e.asyncSend("T", "slow")
	<-entered
	wantCode(t, "expired send", <-e.asyncSend("T", "queued"), protocol.RespSystemBusy)
	release()
	wantCode(t, "blocked send", <-first, protocol.RespSuccess)
	if fc := e.b.FlowControl(); fc.QueueTimeouts != 1 || fc.QueueFull != 0 || fc.PageCacheBusyRejected != 0 {
		t.Fatalf("counters %+v, want one queue timeout", fc)
	}
}

// TestConsumerLags: committed offsets give the lag per (group, topic); an
// online group subscribed to a topic it never committed on is listed,
// caught up; retry topics are left out.
func TestConsumerLags(t *testing.T) {
	e := startEnv(t, nil)
	if lags := e.b.ConsumerLags(); len(lags) != 0 {
		t.Fatalf("fresh broker: %+v", lags)
	}
	e.createTopic("T", 2)
	e.createTopic("U", 1)
	for i := range 6 {
		e.mustSend("T", int32(i%2), "m", "")
	}
	e.mustSend("U", 0, "u", "")
	commit := func(group, topic string, q int32, off int64) {
		ext := remoting.ExtFields{"consumerGroup": group, "topic": topic}
		ext.SetInt32("queueId", q)
		ext.SetInt64("commitOffset", off)
		wantCode(t, "commit", e.call(protocol.ReqUpdateConsumerOffset, ext, nil), protocol.RespSuccess)
	}
	commit("off", "T", 0, 1) // 2 behind
	commit("off", "T", 1, 3) // caught up
	commit("off", "U", 0, 0) // 1 behind
	// "live" subscribes to T (and its retry topic) by heartbeat, no offsets.
	wantCode(t, "heartbeat", e.call(protocol.ReqHeartBeat, nil, heartbeatBody("10.0.0.1@c1", "live")), protocol.RespSuccess)

	lags := e.b.ConsumerLags()
	want := []broker.ConsumerLag{
		{Group: "live", Topic: "T", Lag: 0, Online: true},
		{Group: "off", Topic: "T", Lag: 2},
		{Group: "off", Topic: "U", Lag: 1},
	}
	if len(lags) != len(want) {
		t.Fatalf("lags %+v, want %+v", lags, want)
	}
	for i, w := range want {
		got := lags[i]
		if got.Group != w.Group || got.Topic != w.Topic || got.Lag != w.Lag || got.Online != w.Online {
			t.Fatalf("lag %d: %+v, want %+v", i, got, w)
		}
		if (got.Lag > 0) != (got.EarliestUnconsumed > 0) {
			t.Fatalf("lag %d: earliest unconsumed %d with lag %d", i, got.EarliestUnconsumed, got.Lag)
		}
	}

	g := e.b.Gauges()
	if g.Topics < 2 || g.OnlineGroups != 1 || g.Connections < 1 || g.QueuedSends != 0 || g.HeldPulls != 0 || g.Uptime <= 0 {
		t.Fatalf("gauges %+v", g)
	}
}

// TestClientCounts: producer and consumer connections are counted per
// language and version, consumers per group and consume type too.
func TestClientCounts(t *testing.T) {
	e := startEnv(t, nil)
	if p, c := e.b.ClientCounts(); len(p) != 0 || len(c) != 0 {
		t.Fatalf("fresh broker: %+v %+v", p, c)
	}
	wantCode(t, "consumer c1", e.call(protocol.ReqHeartBeat, nil, heartbeatBody("10.0.0.1@c1", "g1")), protocol.RespSuccess)
	wantCode(t, "consumer c2", e.call(protocol.ReqHeartBeat, nil, heartbeatBody("10.0.0.1@c2", "g1")), protocol.RespSuccess)
	hb := broker.HeartbeatData{ClientID: "10.0.0.1@p1", ProducerDataSet: []broker.ProducerData{{GroupName: "pg1"}, {GroupName: "pg2"}}}
	body, err := json.Marshal(hb)
	if err != nil {
		t.Fatal(err)
	}
	req := remoting.NewRequest(protocol.ReqHeartBeat, nil)
	req.Body = body
	req.Language, req.Version = remoting.LanguageJava, 453
	resp, err := e.client.InvokeSync(t.Context(), e.b.Addr(), req)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "producer", resp, protocol.RespSuccess)

	producers, consumers := e.b.ClientCounts()
	if len(producers) != 1 || producers[0] != (broker.ClientCount{Language: "JAVA", Version: 453, Count: 2}) {
		t.Fatalf("producers %+v, want one JAVA 453 client in two groups", producers)
	}
	if len(consumers) != 1 || consumers[0].Group != "g1" || consumers[0].ConsumeType != "CONSUME_PASSIVELY" || consumers[0].Count != 2 {
		t.Fatalf("consumers %+v, want two push members of g1", consumers)
	}
}

package compat_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/proxy"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

// grpcCluster is a broker over engine/store with its gRPC front end
// (--grpc-listen), the way the RocketMQ 5 SDKs reach it; transaction checks
// run every 100 ms on halves older than 500 ms.
func grpcCluster(t *testing.T) (*cluster, *proxy.Server) {
	t.Helper()
	cfg := broker.DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.HA.ListenAddr = "127.0.0.1:0"
	cfg.Logger = quiet
	cfg.TimerPrecision = 100 * time.Millisecond
	cfg.TransactionCheckInterval = 100 * time.Millisecond
	cfg.TransactionTimeout = 500 * time.Millisecond
	scfg := store.DefaultConfig(t.TempDir())
	scfg.CommitLog.Flush = flush.DefaultConfig(flush.Group)
	scfg.CommitLog.SegmentSize = 16 << 20
	scfg.CleanInterval = 0
	scfg.Logger = quiet
	b, err := broker.New(cfg, broker.OpenStore(scfg, cfg.DelayLevels))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	p, err := proxy.New(proxy.Config{Listen: "127.0.0.1:0", Broker: b, Logger: quiet, MinInvisible: time.Millisecond,
		LongPolling: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	c := &cluster{t: t, b: b, rc: remoting.NewClient(ccfg)}
	t.Cleanup(func() { _ = c.rc.Close() })
	return c, p
}

func typedTopic(t *testing.T, c *cluster, name string, queues int32, typ string) {
	t.Helper()
	tc := protocol.NewTopicConfig(name, queues)
	tc.Attributes["message.type"] = typ
	if _, err := c.b.Topics().Put(tc); err != nil {
		t.Fatal(err)
	}
}

// stored is how many messages the topic's queues hold.
func stored(c *cluster, topic string, queues int32) int64 {
	var n int64
	for q := range queues {
		n += c.maxOffset(topic, q)
	}
	return n
}

func v5Producer(t *testing.T, endpoint string, checker *rmq.TransactionChecker, topics ...string) rmq.Producer {
	t.Helper()
	opts := []rmq.ProducerOption{rmq.WithTopics(topics...)}
	if checker != nil {
		opts = append(opts, rmq.WithTransactionChecker(checker))
	}
	p, err := rmq.NewProducer(&rmq.Config{Endpoint: endpoint, Credentials: &credentials.SessionCredentials{}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.GracefulStop() })
	return p
}

// TestV5ProducerOverGRPC drives the broker's gRPC port with the official
// RocketMQ 5 Go client as its example programs do: normal, async, FIFO,
// delay and transactional sends (commit, rollback, check-back).
func TestV5ProducerOverGRPC(t *testing.T) {
	c, px := grpcCluster(t)
	typedTopic(t, c, "v5Normal", 4, "NORMAL")
	typedTopic(t, c, "v5Fifo", 4, "FIFO")
	typedTopic(t, c, "v5Delay", 1, "DELAY")
	typedTopic(t, c, "v5Txn", 1, "TRANSACTION")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var checked atomic.Int32
	checker := &rmq.TransactionChecker{Check: func(mv *rmq.MessageView) rmq.TransactionResolution {
		checked.Add(1)
		return rmq.COMMIT
	}}
	p := v5Producer(t, px.Addr(), checker, "v5Normal", "v5Fifo", "v5Delay", "v5Txn")

	t.Run("normal", func(t *testing.T) {
		for i := range 5 {
			m := &rmq.Message{Topic: "v5Normal", Body: []byte("normal " + strconv.Itoa(i))}
			m.SetKeys("a", "b")
			m.SetTag("ab")
			if r, err := p.Send(ctx, m); err != nil || len(r) != 1 || r[0].MessageID == "" {
				t.Fatalf("send: %v %v", r, err)
			}
		}
		waitUntil(t, "5 messages stored", 10*time.Second, func() bool { return stored(c, "v5Normal", 4) == 5 })
	})
	t.Run("async", func(t *testing.T) {
		var wg sync.WaitGroup
		var failed atomic.Int32
		for i := range 5 {
			wg.Add(1)
			p.SendAsync(ctx, &rmq.Message{Topic: "v5Normal", Body: []byte("async " + strconv.Itoa(i))},
				func(_ context.Context, _ []*rmq.SendReceipt, err error) {
					if err != nil {
						failed.Add(1)
					}
					wg.Done()
				})
		}
		wg.Wait()
		if failed.Load() != 0 {
			t.Fatalf("async: %d failed", failed.Load())
		}
		waitUntil(t, "10 messages stored", 10*time.Second, func() bool { return stored(c, "v5Normal", 4) == 10 })
	})
	t.Run("fifo", func(t *testing.T) {
		queues := map[int32]bool{}
		for i := range 4 {
			m := &rmq.Message{Topic: "v5Fifo", Body: []byte("fifo " + strconv.Itoa(i))}
			m.SetMessageGroup("fifoMessageGroup")
			r, err := p.Send(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			_ = r
		}
		waitUntil(t, "4 FIFO messages stored", 10*time.Second, func() bool { return stored(c, "v5Fifo", 4) == 4 })
		for q := range int32(4) {
			if c.maxOffset("v5Fifo", q) > 0 {
				queues[q] = true
			}
		}
		if len(queues) != 1 {
			t.Fatalf("one message group spread over queues %v", queues)
		}
	})
	t.Run("delay", func(t *testing.T) {
		m := &rmq.Message{Topic: "v5Delay", Body: []byte("delayed")}
		due := time.Now().Add(time.Second)
		m.SetDelayTimestamp(due)
		if _, err := p.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the delayed message in its topic", 10*time.Second, func() bool { return stored(c, "v5Delay", 1) == 1 })
		if time.Now().Before(due) {
			t.Fatal("delivered before its delivery time")
		}
	})
	t.Run("delay recall", func(t *testing.T) {
		// The official producer's Recall with the send's recall handle:
		// the recalled message is never delivered (a later one is, and the
		// timer counts the drop); a recall after the delivery time fails.
		base := stored(c, "v5Delay", 1)
		recalled := &rmq.Message{Topic: "v5Delay", Body: []byte("recalled")}
		recalled.SetDelayTimestamp(time.Now().Add(800 * time.Millisecond))
		later := &rmq.Message{Topic: "v5Delay", Body: []byte("later")}
		laterDue := time.Now().Add(1100 * time.Millisecond)
		later.SetDelayTimestamp(laterDue)
		r, err := p.Send(ctx, recalled)
		if err != nil || r[0].RecallHandle == "" {
			t.Fatalf("send: %v %v", r, err)
		}
		if _, err := p.Send(ctx, later); err != nil {
			t.Fatal(err)
		}
		id, err := p.Recall(ctx, "v5Delay", r[0].RecallHandle)
		if err != nil || id != r[0].MessageID {
			t.Fatalf("recall: %q %v, want id %q", id, err, r[0].MessageID)
		}
		waitUntil(t, "the later message delivered, the recalled one dropped", 10*time.Second, func() bool {
			return stored(c, "v5Delay", 1) == base+1 && c.b.TimerStats().Recalled == 1 && time.Now().After(laterDue)
		})
		if _, err := p.Recall(ctx, "v5Delay", r[0].RecallHandle); err == nil {
			t.Fatal("a recall after the delivery time succeeded")
		}
	})
	t.Run("transaction", func(t *testing.T) {
		commit := p.BeginTransaction()
		if _, err := p.SendWithTransaction(ctx, &rmq.Message{Topic: "v5Txn", Body: []byte("commit")}, commit); err != nil {
			t.Fatal(err)
		}
		if err := commit.Commit(); err != nil {
			t.Fatal(err)
		}
		rollback := p.BeginTransaction()
		if _, err := p.SendWithTransaction(ctx, &rmq.Message{Topic: "v5Txn", Body: []byte("rollback")}, rollback); err != nil {
			t.Fatal(err)
		}
		if err := rollback.RollBack(); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the committed message", 10*time.Second, func() bool { return stored(c, "v5Txn", 1) == 1 })
		// Neither committed nor rolled back: the broker asks the producer.
		orphan := p.BeginTransaction()
		if _, err := p.SendWithTransaction(ctx, &rmq.Message{Topic: "v5Txn", Body: []byte("checked")}, orphan); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the check-back commit", 15*time.Second, func() bool { return stored(c, "v5Txn", 1) == 2 })
		if checked.Load() == 0 {
			t.Fatal("the transaction checker was never asked")
		}
	})
}

// TestV5ConsumersOverGRPC: the official simple consumer (receive, ack,
// redelivery after the invisible time, change invisible duration) and push
// consumer against the broker's POP service.
func TestV5ConsumersOverGRPC(t *testing.T) {
	c, px := grpcCluster(t)
	typedTopic(t, c, "v5Simple", 2, "NORMAL")
	typedTopic(t, c, "v5Push", 2, "NORMAL")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := v5Producer(t, px.Addr(), nil, "v5Simple", "v5Push")
	for i := range 3 {
		if _, err := p.Send(ctx, &rmq.Message{Topic: "v5Simple", Body: []byte("s" + strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := rmq.NewSimpleConsumer(&rmq.Config{Endpoint: px.Addr(), ConsumerGroup: "v5SimpleG", Credentials: &credentials.SessionCredentials{}},
		rmq.WithSimpleAwaitDuration(time.Second),
		rmq.WithSimpleSubscriptionExpressions(map[string]*rmq.FilterExpression{"v5Simple": rmq.SUB_ALL}))
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.GracefulStop() })
	receive := func(invisible time.Duration) []*rmq.MessageView {
		mvs, err := sc.Receive(ctx, 16, invisible)
		if err != nil {
			return nil // MESSAGE_NOT_FOUND on an empty long poll
		}
		return mvs
	}
	seen := map[string]*rmq.MessageView{}
	waitUntil(t, "3 messages received", 15*time.Second, func() bool {
		for _, mv := range receive(500 * time.Millisecond) {
			seen[string(mv.GetBody())] = mv
		}
		return len(seen) == 3
	})
	// s0 acked, s1 kept invisible for a minute, s2 left to come back.
	if err := sc.Ack(ctx, seen["s0"]); err != nil {
		t.Fatalf("ack: %v", err)
	}
	if err := sc.ChangeInvisibleDuration(seen["s1"], time.Minute); err != nil {
		t.Fatalf("change invisible duration: %v", err)
	}
	var back *rmq.MessageView
	waitUntil(t, "s2 redelivered", 15*time.Second, func() bool {
		for _, mv := range receive(time.Minute) {
			if string(mv.GetBody()) != "s2" {
				t.Fatalf("redelivered %s", mv.GetBody())
			}
			back = mv
		}
		return back != nil
	})
	if back.GetDeliveryAttempt() != 2 {
		t.Fatalf("delivery attempt %d, want 2", back.GetDeliveryAttempt())
	}
	if err := sc.Ack(ctx, back); err != nil {
		t.Fatalf("ack of the redelivery: %v", err)
	}

	var got sync.Map
	var n atomic.Int32
	pc, err := rmq.NewPushConsumer(&rmq.Config{Endpoint: px.Addr(), ConsumerGroup: "v5PushG", Credentials: &credentials.SessionCredentials{}},
		rmq.WithPushSubscriptionExpressions(map[string]*rmq.FilterExpression{"v5Push": rmq.SUB_ALL}),
		rmq.WithPushMessageListener(&rmq.FuncMessageListener{Consume: func(mv *rmq.MessageView) rmq.ConsumerResult {
			if _, dup := got.LoadOrStore(string(mv.GetBody()), true); !dup {
				n.Add(1)
			}
			return rmq.SUCCESS
		}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.GracefulStop() })
	for i := range 5 {
		if _, err := p.Send(ctx, &rmq.Message{Topic: "v5Push", Body: []byte("p" + strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "5 messages pushed", 20*time.Second, func() bool { return n.Load() == 5 })
}

package compat_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/store"
)

// startTxnCluster is startCluster with the broker's transaction check every
// 300 ms for halves older than 1 s (Java: 60 s and 6 s).
func startTxnCluster(t *testing.T) *cluster {
	t.Helper()
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.b.Shutdown(ctx); err != nil {
		t.Fatalf("broker shutdown: %v", err)
	}
	cfg := broker.DefaultConfig()
	cfg.ListenAddr = c.listen
	cfg.HA.ListenAddr = "127.0.0.1:0"
	cfg.NamesrvAddrs = []string{c.ns.Addr()}
	cfg.Logger = quiet
	cfg.TransactionCheckInterval = 300 * time.Millisecond
	// 3 s: room for a commit or rollback (a oneway END_TRANSACTION) to
	// arrive before the broker would check it, also on a slow machine.
	cfg.TransactionTimeout = 3 * time.Second
	scfg := store.DefaultConfig(c.dir)
	scfg.CommitLog.Flush = flush.DefaultConfig(flush.Group)
	scfg.CommitLog.SegmentSize = 16 << 20
	scfg.ConsumeQueue = consumequeue.Config{UnitsPerFile: 10000}
	scfg.Index = index.Config{MaxHashSlots: 4096, MaxIndexNum: 16384, MaxQueryNum: 64}
	scfg.ReadCacheBytes = 1 << 20
	scfg.CleanInterval = 0
	scfg.Logger = quiet
	b, err := broker.New(cfg, broker.OpenStore(scfg, cfg.DelayLevels))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.b = b
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	return c
}

// txnListener decides by body prefix: "commit" commits, "rollback" rolls
// back, "unknown" answers unknown and then commit when the broker checks.
type txnListener struct {
	mu      sync.Mutex
	checked map[string]int // body → checks
}

func (l *txnListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	switch body := string(m.Body); {
	case strings.HasPrefix(body, "commit"):
		return primitive.CommitMessageState
	case strings.HasPrefix(body, "rollback"):
		return primitive.RollbackMessageState
	default:
		return primitive.UnkonwnState
	}
}

func (l *txnListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.checked[string(m.Body)]++
	if strings.HasPrefix(string(m.Body), "rollback") {
		return primitive.RollbackMessageState
	}
	return primitive.CommitMessageState
}

func (l *txnListener) checks() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.checked))
	for k, v := range l.checked {
		out[k] = v
	}
	return out
}

// TestTransactionProducer (issue 13 §4): the official client's transaction
// producer. Committed messages are consumed once, rolled-back ones never,
// and ones left unknown are checked back (CHECK_TRANSACTION_STATE to the
// producer group) and committed by the listener's answer. Halves that were
// committed or rolled back at once are never checked.
func TestTransactionProducer(t *testing.T) {
	// The client logs every non-commit local state at error level.
	rlog.SetLogLevel("fatal")
	t.Cleanup(func() { rlog.SetLogLevel("error") })
	c := startTxnCluster(t)
	const topic = "CompatTxn"
	createTopic(t, c, newAdmin(t, c), topic, 2)
	c.waitRoute(topic)

	rec := newReceived()
	startConsumer(t, c, "compat_txn_cg", "c", topic, rec, consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))

	l := &txnListener{checked: map[string]int{}}
	p, err := producer.NewTransactionProducer(l, producer.WithNsResolver(c.nsr), producer.WithGroupName("compat_txn_pg"), producer.WithRetry(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })

	commits, rollbacks, unknowns := bodies("commit", 6), bodies("rollback", 6), bodies("unknown", 6)
	for i := range commits {
		for _, b := range []string{commits[i], rollbacks[i], unknowns[i]} {
			res, err := p.SendMessageInTransaction(context.Background(), primitive.NewMessage(topic, []byte(b)))
			if err != nil || res.Status != primitive.SendOK {
				t.Fatalf("SendMessageInTransaction %s: %v %v", b, res, err)
			}
		}
	}

	waitUntil(t, "the committed messages", deliverLimit, func() bool { return rec.has("c", commits) })
	waitUntil(t, "the unknown ones, committed by the check", 20*time.Second, func() bool { return rec.has("c", unknowns) })
	// Checks sent before the commit arrived may be answered again; the
	// broker stores each transaction once.
	time.Sleep(2 * time.Second)
	for _, b := range append(append([]string{}, commits...), unknowns...) {
		if n := rec.deliveries(b); n != 1 {
			t.Errorf("%s delivered %d times", b, n)
		}
	}
	for _, b := range rollbacks {
		if n := rec.deliveries(b); n != 0 {
			t.Errorf("rolled-back %s delivered %d times", b, n)
		}
	}
	checks := l.checks()
	for _, b := range unknowns {
		if checks[b] == 0 {
			t.Errorf("%s was never checked", b)
		}
	}
	for _, b := range append(append([]string{}, commits...), rollbacks...) {
		if checks[b] != 0 {
			t.Errorf("%s was checked %d times though it was ended at once", b, checks[b])
		}
	}
	if d, u := rec.total(); d != len(commits)+len(unknowns) || u != d {
		t.Errorf("%d deliveries of %d bodies, want %d", d, u, len(commits)+len(unknowns))
	}
}

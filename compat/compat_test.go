package compat_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

const (
	topicMain    = "CompatT"
	topicTags    = "CompatTags"
	topicBcast   = "CompatBcast"
	topicPull    = "CompatPull"
	topicRetry   = "CompatRetry"
	groupMain    = "compat_cg"
	groupTags    = "compat_tags"
	groupBcast   = "compat_bc"
	groupPull    = "compat_pull"
	groupRetry   = "compat_retry"
	groupVerify  = "compat_verify"
	deliverLimit = 60 * time.Second
)

type shutdowner interface{ Shutdown() error }

// pushConsumer starts a push consumer of topic whose callback records into
// rec under name and answers with result(m).
func pushConsumer(t *testing.T, c *cluster, group, name, topic, expr string, model consumer.MessageModel,
	rec *received, result func(*primitive.MessageExt) consumer.ConsumeResult) shutdowner {
	t.Helper()
	pc, err := consumer.NewPushConsumer(consumer.WithNsResolver(c.nsr), consumer.WithGroupName(group),
		consumer.WithInstance(name), consumer.WithConsumerModel(model),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatalf("new push consumer %s: %v", name, err)
	}
	err = pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: expr},
		func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			res := consumer.ConsumeSuccess
			for _, m := range ms {
				rec.add(name, m)
				if result != nil && result(m) == consumer.ConsumeRetryLater {
					res = consumer.ConsumeRetryLater
				}
			}
			return res, nil
		})
	if err != nil {
		t.Fatalf("subscribe %s: %v", name, err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("start push consumer %s: %v", name, err)
	}
	return pc
}

func bodies(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return out
}

func msg(topic, body, tag string) *primitive.Message {
	m := primitive.NewMessage(topic, []byte(body))
	if tag != "" {
		m = m.WithTag(tag)
	}
	return m
}

// sendSync sends bodies one by one, or in batches of batch, and returns the
// acknowledged ones.
func sendSync(t *testing.T, p interface {
	SendSync(context.Context, ...*primitive.Message) (*primitive.SendResult, error)
}, topic, tag string, bs []string, batch int) []string {
	t.Helper()
	ctx := context.Background()
	var acked []string
	for i := 0; i < len(bs); i += batch {
		chunk := bs[i:min(i+batch, len(bs))]
		var ms []*primitive.Message
		for _, b := range chunk {
			ms = append(ms, msg(topic, b, tag))
		}
		res, err := p.SendSync(ctx, ms...)
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("SendSync %s: res %v err %v", chunk[0], res, err)
		}
		if batch > 1 && len(strings.Split(res.OffsetMsgID, ",")) != len(chunk) {
			t.Fatalf("batch of %d answered with msgId %q", len(chunk), res.OffsetMsgID)
		}
		acked = append(acked, chunk...)
	}
	return acked
}

func TestOfficialClient(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()

	// Admin CreateTopic goes to the broker, which registers at once.
	adm, err := admin.NewAdmin(admin.WithResolver(c.nsr))
	if err != nil {
		t.Fatal(err)
	}
	for topic, queues := range map[string]int{topicMain: 8, topicTags: 4, topicBcast: 4, topicPull: 4, topicRetry: 2,
		"%RETRY%" + groupRetry: 1} { // the retry route, so the consumer learns it before its 30 s route refresh
		if err := adm.CreateTopic(ctx, admin.WithTopicCreate(topic), admin.WithBrokerAddrCreate(c.b.Addr()),
			admin.WithReadQueueNums(queues), admin.WithWriteQueueNums(queues)); err != nil {
			t.Fatalf("CreateTopic %s: %v", topic, err)
		}
	}
	_ = adm.Close()
	for _, topic := range []string{topicMain, topicTags, topicBcast, topicPull, topicRetry, "%RETRY%" + groupRetry} {
		c.waitRoute(topic)
	}

	// Consumers first, so the clustering pair is balanced before messages flow.
	mainRec, tagRec, bcastRec, retryRec, pullRec := newReceived(), newReceived(), newReceived(), newReceived(), newReceived()
	c1 := pushConsumer(t, c, groupMain, "c1", topicMain, "*", consumer.Clustering, mainRec, nil)
	c2 := pushConsumer(t, c, groupMain, "c2", topicMain, "*", consumer.Clustering, mainRec, nil)
	tags := pushConsumer(t, c, groupTags, "tags", topicTags, "TagA || TagB", consumer.Clustering, tagRec, nil)
	b1 := pushConsumer(t, c, groupBcast, "b1", topicBcast, "*", consumer.BroadCasting, bcastRec, nil)
	b2 := pushConsumer(t, c, groupBcast, "b2", topicBcast, "*", consumer.BroadCasting, bcastRec, nil)
	var firstTries sync.Map
	retry := pushConsumer(t, c, groupRetry, "retry", topicRetry, "*", consumer.Clustering, retryRec,
		func(m *primitive.MessageExt) consumer.ConsumeResult {
			if m.ReconsumeTimes == 0 {
				firstTries.Store(string(m.Body), true)
				return consumer.ConsumeRetryLater
			}
			return consumer.ConsumeSuccess
		})
	pull, err := consumer.NewPullConsumer(consumer.WithNsResolver(c.nsr), consumer.WithGroupName(groupPull),
		consumer.WithInstance("pull"), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	if err := pull.Subscribe(topicPull, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}); err != nil {
		t.Fatal(err)
	}
	if err := pull.Start(); err != nil {
		t.Fatalf("start pull consumer: %v", err)
	}
	waitUntil(t, "both clustering consumers registered", 10*time.Second, func() bool { return len(c.members(groupMain)) == 2 })

	p, err := producer.NewDefaultProducer(producer.WithNsResolver(c.nsr), producer.WithGroupName("compat_pg"), producer.WithRetry(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("start producer: %v", err)
	}
	defer func() { _ = p.Shutdown() }()

	// SendSync single and batch, SendAsync and SendOneWay to the main topic.
	acked := sendSync(t, p, topicMain, "T", bodies("sync", 100), 1)
	acked = append(acked, sendSync(t, p, topicMain, "T", bodies("batch", 100), 10)...)
	var asyncMu sync.Mutex
	var asyncWG sync.WaitGroup
	var asyncFailed atomic.Int32
	for _, b := range bodies("async", 50) {
		asyncWG.Add(1)
		err := p.SendAsync(ctx, func(_ context.Context, res *primitive.SendResult, err error) {
			defer asyncWG.Done()
			if err != nil || res.Status != primitive.SendOK {
				asyncFailed.Add(1)
				return
			}
			asyncMu.Lock()
			acked = append(acked, b)
			asyncMu.Unlock()
		}, msg(topicMain, b, "T"))
		if err != nil {
			t.Fatalf("SendAsync: %v", err)
		}
	}
	oneway := bodies("oneway", 20)
	for _, b := range oneway {
		if err := p.SendOneWay(ctx, msg(topicMain, b, "T")); err != nil {
			t.Fatalf("SendOneWay: %v", err)
		}
	}
	asyncWG.Wait()
	if n := asyncFailed.Load(); n != 0 {
		t.Fatalf("%d async sends failed", n)
	}

	// The other scenarios' messages.
	var tagAB, tagC []string
	for i, b := range bodies("tag", 30) {
		tag := []string{"TagA", "TagB", "TagC"}[i%3]
		sendSync(t, p, topicTags, tag, []string{b}, 1)
		if tag == "TagC" {
			tagC = append(tagC, b)
		} else {
			tagAB = append(tagAB, b)
		}
	}
	bcast := sendSync(t, p, topicBcast, "", bodies("bcast", 20), 1)
	pulled := sendSync(t, p, topicPull, "", bodies("pull", 40), 5)
	retried := sendSync(t, p, topicRetry, "", bodies("retry", 10), 1)

	// Pull consumer: poll until everything arrived, acknowledging each batch.
	pullDone := make(chan struct{})
	go func() {
		defer close(pullDone)
		deadline := time.Now().Add(deliverLimit)
		for !pullRec.has("", pulled) && time.Now().Before(deadline) {
			cr, err := pull.Poll(ctx, time.Second)
			if err != nil {
				continue
			}
			for _, m := range cr.GetMsgList() {
				pullRec.add("pull", m)
			}
			pull.ACK(ctx, cr, consumer.ConsumeSuccess)
		}
	}()

	all := append(append([]string(nil), acked...), oneway...)
	waitUntil(t, "clustering consumers to get every message", deliverLimit, func() bool { return mainRec.has("", all) })
	waitUntil(t, "tag consumer to get TagA and TagB", deliverLimit, func() bool { return tagRec.has("", tagAB) })
	waitUntil(t, "broadcast consumer b1 to get everything", deliverLimit, func() bool { return bcastRec.has("b1", bcast) })
	waitUntil(t, "broadcast consumer b2 to get everything", deliverLimit, func() bool { return bcastRec.has("b2", bcast) })
	waitUntil(t, "retried messages to come back", deliverLimit, func() bool { return retryRec.has("", retried) && retriedTwice(retryRec, retried) })
	<-pullDone
	if m := pullRec.missing("", pulled); len(m) > 0 {
		t.Fatalf("pull consumer missed %d messages, e.g. %s", len(m), m[0])
	}

	deliveries, unique := mainRec.total()
	t.Logf("clustering: %d messages, %d deliveries (%d duplicates); c1 %d, c2 %d", unique, deliveries, deliveries-unique,
		len(mainRec.of("c1")), len(mainRec.of("c2")))
	if len(mainRec.of("c1")) == 0 || len(mainRec.of("c2")) == 0 {
		t.Fatalf("one clustering consumer got nothing: c1 %d, c2 %d", len(mainRec.of("c1")), len(mainRec.of("c2")))
	}
	for _, b := range tagC {
		if tagRec.deliveries(b) > 0 {
			t.Fatalf("tag consumer of TagA || TagB got %s (TagC)", b)
		}
	}
	if n := c.maxOffset("%RETRY%"+groupRetry, 0); n != int64(len(retried)) {
		t.Fatalf("the retry topic holds %d messages, want %d: redelivery did not go through it", n, len(retried))
	}
	for _, b := range retried {
		if _, ok := firstTries.Load(b); !ok {
			t.Fatalf("%s was never delivered a first time", b)
		}
		if topic := retryRec.topicOf(b); topic != topicRetry {
			t.Fatalf("redelivered %s carries topic %q", b, topic)
		}
	}

	// Committed offsets survive a consumer restart: c3 replaces c1 and c2 and
	// gets exactly the messages sent after they stopped.
	_ = c1.Shutdown()
	_ = c2.Shutdown()
	// The client persists its offsets at shutdown with a one-way request:
	// wait until the broker holds them (every queue consumed to its end)
	// before the new consumer reads them, or it starts from older ones.
	waitUntil(t, "the stopped consumers' offsets at the broker", deliverLimit, func() bool {
		for q := int32(0); q < 8; q++ {
			if c.committedOffset(groupMain, topicMain, q) != c.maxOffset(topicMain, q) {
				return false
			}
		}
		return true
	})
	c3 := pushConsumer(t, c, groupMain, "c3", topicMain, "*", consumer.Clustering, mainRec, nil)
	later := sendSync(t, p, topicMain, "T", bodies("later", 16), 1)
	waitUntil(t, "the restarted group to get the new messages", deliverLimit, func() bool { return mainRec.has("c3", later) })
	if got := len(mainRec.of("c3")); got != len(later) {
		t.Fatalf("restarted consumer got %d messages, want only the %d new ones: committed offsets were not used", got, len(later))
	}
	acked = append(acked, later...)

	for _, s := range []shutdowner{c3, tags, b1, b2, retry, pull} {
		_ = s.Shutdown()
	}

	// Every acknowledged message survives a broker restart; the producer
	// carries on against the restarted broker.
	c.restartBroker()
	c.waitRoute(topicMain)
	acked = append(acked, sendSync(t, p, topicMain, "T", bodies("after-restart", 4), 1)...)
	verifyRec := newReceived()
	verify := pushConsumer(t, c, groupVerify, "verify", topicMain, "*", consumer.Clustering, verifyRec, nil)
	defer func() { _ = verify.Shutdown() }()
	waitUntil(t, "every acknowledged message after the broker restart", deliverLimit, func() bool { return verifyRec.has("", acked) })
	if m := verifyRec.missing("", oneway); len(m) > 0 {
		t.Logf("%d oneway messages not stored (oneway sends are not acknowledged)", len(m))
	}
}

// retriedTwice reports whether every body came back with reconsumeTimes ≥ 1
// (delivered at least twice).
func retriedTwice(r *received, bs []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range bs {
		if r.count[b] < 2 {
			return false
		}
	}
	return true
}

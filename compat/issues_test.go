package compat_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// createTopic creates topic on the cluster's broker with the official admin
// and fails t on an error.
func createTopic(t *testing.T, c *cluster, adm admin.Admin, topic string, queues int) {
	t.Helper()
	if err := adm.CreateTopic(context.Background(), admin.WithTopicCreate(topic), admin.WithBrokerAddrCreate(c.b.Addr()),
		admin.WithReadQueueNums(queues), admin.WithWriteQueueNums(queues)); err != nil {
		t.Fatalf("CreateTopic %s: %v", topic, err)
	}
}

func newAdmin(t *testing.T, c *cluster) admin.Admin {
	t.Helper()
	adm, err := admin.NewAdmin(admin.WithResolver(c.nsr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adm.Close() })
	return adm
}

// syncProducer is the part of the client's producer these tests use.
type syncProducer interface {
	SendSync(context.Context, ...*primitive.Message) (*primitive.SendResult, error)
}

func newProducer(t *testing.T, c *cluster, group string) syncProducer {
	t.Helper()
	p, err := producer.NewDefaultProducer(producer.WithNsResolver(c.nsr), producer.WithGroupName(group), producer.WithRetry(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

// startConsumer starts a clustering push consumer of topic with the given
// extra options (none: the client's defaults, ConsumeFromLastOffset among
// them) recording into rec under name.
func startConsumer(t *testing.T, c *cluster, group, name, topic string, rec *received, opts ...consumer.Option) {
	t.Helper()
	opts = append([]consumer.Option{consumer.WithNsResolver(c.nsr), consumer.WithGroupName(group),
		consumer.WithInstance(name)}, opts...)
	pc, err := consumer.NewPushConsumer(opts...)
	if err != nil {
		t.Fatal(err)
	}
	err = pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range ms {
				rec.add(name, m)
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
}

// TestDefaultConsumeFromLastOffsetGetsBacklog (issue 11 §1): a new group
// with the client's default ConsumeFromWhere (the last offset) on a fresh
// topic gets the messages sent before it started, because the broker answers
// QUERY_CONSUMER_OFFSET for a group without an offset as Java's does (0 while
// the queue starts at 0 and its first message is in memory). A second new
// group started after the first one consumed everything gets them too.
func TestDefaultConsumeFromLastOffsetGetsBacklog(t *testing.T) {
	c := startCluster(t)
	const topic = "CompatLastOffset"
	createTopic(t, c, newAdmin(t, c), topic, 4)
	c.waitRoute(topic)
	p := newProducer(t, c, "compat_last_pg")
	backlog := sendSync(t, p, topic, "", bodies("backlog", 40), 1)

	rec := newReceived()
	startConsumer(t, c, "compat_last_a", "a", topic, rec) // no WithConsumeFromWhere: the default
	waitUntil(t, "the backlog for a new group starting from the last offset", deliverLimit,
		func() bool { return rec.has("a", backlog) })
	// Messages sent while it runs arrive as well.
	live := sendSync(t, p, topic, "", bodies("live", 8), 1)
	waitUntil(t, "live messages", deliverLimit, func() bool { return rec.has("a", live) })

	rec2 := newReceived()
	startConsumer(t, c, "compat_last_b", "b", topic, rec2, consumer.WithConsumeFromWhere(consumer.ConsumeFromLastOffset))
	waitUntil(t, "the whole topic for a second new group", deliverLimit,
		func() bool { return rec2.has("b", append(append([]string{}, backlog...), live...)) })
}

// TestWaitFalsePropertyIsConsumed (issue 10 §1): a message the official
// client sends with the user property WAIT=false (RocketMQ's
// PROPERTY_WAIT_STORE_MSG_OK: the producer does not wait for the flush) is
// stored and consumed like any other, set with WithProperty or with the
// properties map.
func TestWaitFalsePropertyIsConsumed(t *testing.T) {
	c := startCluster(t)
	const topic = "CompatWaitFalse"
	createTopic(t, c, newAdmin(t, c), topic, 2)
	c.waitRoute(topic)
	p := newProducer(t, c, "compat_wait_pg")
	ctx := context.Background()
	var sent []string
	for i := range 6 {
		body := fmt.Sprintf("wait-false-%d", i)
		m := primitive.NewMessage(topic, []byte(body))
		if i%2 == 0 {
			m.WithProperty("WAIT", "false")
		} else {
			m.WithProperties(map[string]string{"WAIT": "false", "k": "v"})
		}
		res, err := p.SendSync(ctx, m)
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send %s: %v %v", body, res, err)
		}
		sent = append(sent, body)
	}
	rec := newReceived()
	startConsumer(t, c, "compat_wait_cg", "w", topic, rec, consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	waitUntil(t, "messages sent with WAIT=false", deliverLimit, func() bool { return rec.has("w", sent) })
}

// TestAdminCreateThenDeleteLoop (issue 18): the official admin's own
// example — create a topic, then delete it at once, which looks the route
// up on the name server to find the broker — never misses the route,
// iteration after iteration; the delete removes the route.
func TestAdminCreateThenDeleteLoop(t *testing.T) {
	c := startCluster(t)
	adm := newAdmin(t, c)
	ctx := context.Background()
	const n = 100
	for i := range n {
		topic := fmt.Sprintf("CompatCreateDelete%03d", i)
		createTopic(t, c, adm, topic, 2)
		if err := adm.DeleteTopic(ctx, admin.WithTopicDelete(topic)); err != nil {
			t.Fatalf("iteration %d: DeleteTopic %s right after the create: %v", i, topic, err)
		}
		if _, ok := c.ns.TopicRoute(topic); ok {
			t.Fatalf("iteration %d: route of %s survives the delete", i, topic)
		}
	}
	// And created topics are routable for a producer at once.
	p := newProducer(t, c, "compat_create_pg")
	for i := range 20 {
		topic := fmt.Sprintf("CompatCreateSend%02d", i)
		createTopic(t, c, adm, topic, 2)
		res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte("x")))
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("iteration %d: send to %s right after the create: %v %v", i, topic, res, err)
		}
	}
	if _, ok := c.ns.TopicRoute("CompatCreateSend00"); !ok {
		t.Fatal("no route for a created topic")
	}
}

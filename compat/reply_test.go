package compat_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
)

// startSelectorConsumer starts a push consumer of topic with selector from
// the first offset, recording into rec under name and calling each (if
// not nil) for every message.
func startSelectorConsumer(t *testing.T, c *cluster, group, name, topic string, sel consumer.MessageSelector, rec *received,
	each func(*primitive.MessageExt)) {
	t.Helper()
	pc, err := consumer.NewPushConsumer(consumer.WithNsResolver(c.nsr), consumer.WithGroupName(group),
		consumer.WithInstance(name), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	err = pc.Subscribe(topic, sel, func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range ms {
			if each != nil {
				each(m)
			}
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

// TestSQL92SelectorGetsOnlyMatchingMessages (issue 13 §4): a push consumer
// subscribed with consumer.SQL92 "a > 5 AND b = 'x'" receives exactly the
// messages whose properties match; missing or non-numeric properties do
// not match (Java's null and conversion semantics), and a TAG consumer of
// the same topic still gets its tag.
func TestSQL92SelectorGetsOnlyMatchingMessages(t *testing.T) {
	c := startCluster(t)
	adm := newAdmin(t, c)
	const topic = "SqlSelectT"
	createTopic(t, c, adm, topic, 1) // one queue: the last message's arrival means all before it were filtered
	c.waitRoute(topic)
	p := newProducer(t, c, "sql-pg")

	type msg struct {
		body  string
		props map[string]string
		match bool
	}
	msgs := []msg{
		{"m0", map[string]string{"a": "6", "b": "x"}, true},
		{"m1", map[string]string{"a": "5", "b": "x"}, false},
		{"m2", map[string]string{"a": "10", "b": "y"}, false},
		{"m3", map[string]string{"b": "x"}, false},
		{"m4", map[string]string{"a": "six", "b": "x"}, false},
		{"m5", map[string]string{"a": "7"}, false},
		{"m6", map[string]string{"a": "1000", "b": "x"}, true},
		{"m7", map[string]string{"a": "-3", "b": "x"}, false},
		{"m8", map[string]string{"a": "42", "b": "x"}, true},
	}
	var want []string
	for _, m := range msgs {
		pm := primitive.NewMessage(topic, []byte(m.body))
		pm.WithProperties(m.props) // replaces the properties: before WithTag
		pm.WithTag("TagA")
		if m.match {
			want = append(want, m.body)
		}
		if _, err := p.SendSync(context.Background(), pm); err != nil {
			t.Fatalf("send %s: %v", m.body, err)
		}
	}
	rec := newReceived()
	startSelectorConsumer(t, c, "sql-group", "sql", topic,
		consumer.MessageSelector{Type: consumer.SQL92, Expression: "a > 5 AND b = 'x'"}, rec, nil)
	startSelectorConsumer(t, c, "tag-group", "tag", topic,
		consumer.MessageSelector{Type: consumer.TAG, Expression: "TagA"}, rec, nil)
	waitUntil(t, "the matching messages", 20*time.Second, func() bool { return rec.has("sql", want) })
	waitUntil(t, "the tag consumer", 20*time.Second, func() bool { return len(rec.of("tag")) == len(msgs) })
	got := make([]string, 0)
	for body := range rec.of("sql") {
		got = append(got, body)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("SQL92 consumer received %v, want exactly %v", got, want)
	}
}

// TestRequestReply (issue 13 §4): producer.Request sends a request to a
// topic; a consumer answers with consumer.CreateReplyMessage sent by its
// own producer (SEND_REPLY_MESSAGE to <cluster>_REPLY_TOPIC); the broker
// pushes the reply to the requesting client (PUSH_REPLY_MESSAGE_TO_CLIENT),
// which completes Request with it. RequestAsync gets its reply through the
// callback.
func TestRequestReply(t *testing.T) {
	c := startCluster(t)
	adm := newAdmin(t, c)
	const topic = "RpcRequestT"
	createTopic(t, c, adm, topic, 2)
	c.waitRoute(topic)
	c.waitRoute(protocol.ReplyTopic("DefaultCluster"))

	replier, err := producer.NewDefaultProducer(producer.WithNsResolver(c.nsr), producer.WithGroupName("rpc-reply-pg"),
		producer.WithRetry(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := replier.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = replier.Shutdown() })

	replyErrs := make(chan error, 8)
	rec := newReceived()
	startSelectorConsumer(t, c, "rpc-server", "server", topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}, rec,
		func(m *primitive.MessageExt) {
			body := []byte("re:" + string(m.Body))
			reply, err := consumer.CreateReplyMessage(m, body)
			if err != nil {
				replyErrs <- err
				return
			}
			// CreateReplyMessage parses body as properties and leaves Body
			// empty (a client quirk); the body is set here.
			reply.Body = body
			if _, err := replier.SendSync(context.Background(), reply); err != nil {
				replyErrs <- fmt.Errorf("send reply: %w", err)
			}
		})

	requester, err := producer.NewDefaultProducer(producer.WithNsResolver(c.nsr), producer.WithGroupName("rpc-request-pg"),
		producer.WithRetry(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := requester.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = requester.Shutdown() })

	// The consumer must be subscribed before the request goes out; its
	// rebalance takes a moment, so the first request may need a retry.
	var reply *primitive.Message
	deadline := time.Now().Add(15 * time.Second)
	for reply == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		reply, err = requester.Request(ctx, 3*time.Second, primitive.NewMessage(topic, []byte("ping")))
		cancel()
		select {
		case e := <-replyErrs:
			t.Fatalf("replier: %v", e)
		default:
		}
		if err != nil && time.Now().After(deadline) {
			t.Fatalf("Request: %v", err)
		}
	}
	if string(reply.Body) != "re:ping" {
		t.Fatalf("reply body %q", reply.Body)
	}
	if reply.GetProperty(primitive.PropertyCorrelationID) == "" || reply.GetProperty(primitive.PropertyMsgType) != "reply" ||
		reply.GetProperty(broker.PropertyPushReplyTime) == "" {
		t.Fatalf("reply properties %v", reply.GetProperties())
	}

	got := make(chan string, 1)
	err = requester.RequestAsync(context.Background(), 10*time.Second, func(_ context.Context, m *primitive.Message, err error) {
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(m.Body)
	}, primitive.NewMessage(topic, []byte("pong")))
	if err != nil {
		t.Fatalf("RequestAsync: %v", err)
	}
	select {
	case body := <-got:
		if body != "re:pong" {
			t.Fatalf("RequestAsync reply %q", body)
		}
	case e := <-replyErrs:
		t.Fatalf("replier: %v", e)
	case <-time.After(15 * time.Second):
		t.Fatal("RequestAsync got no reply")
	}
}

// TestRequestReplyEmptyBody (issue 29 item 5): a consumer answers with the
// client's own consumer.CreateReplyMessage and sends it as built, Body
// empty (what the client's request-reply example does); the requester gets
// that reply. As Java's ReplyMessageProcessor, the broker pushes it before
// it would store it, and its store refuses the empty body: the replier's
// send still succeeds (message id "0").
func TestRequestReplyEmptyBody(t *testing.T) {
	c := startCluster(t)
	adm := newAdmin(t, c)
	const topic = "RpcEmptyReplyT"
	createTopic(t, c, adm, topic, 1)
	c.waitRoute(topic)
	c.waitRoute(protocol.ReplyTopic("DefaultCluster"))

	type requestProducer interface {
		SendSync(ctx context.Context, msgs ...*primitive.Message) (*primitive.SendResult, error)
		Request(ctx context.Context, ttl time.Duration, msg *primitive.Message) (*primitive.Message, error)
	}
	start := func(group string) requestProducer {
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
	replier := start("rpc-empty-reply-pg")
	replyErrs := make(chan error, 8)
	sent := make(chan *primitive.SendResult, 8)
	startSelectorConsumer(t, c, "rpc-empty-server", "server", topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}, newReceived(),
		func(m *primitive.MessageExt) {
			reply, err := consumer.CreateReplyMessage(m, nil)
			if err != nil {
				replyErrs <- err
				return
			}
			if len(reply.Body) != 0 {
				replyErrs <- fmt.Errorf("CreateReplyMessage set a %d-byte body", len(reply.Body))
				return
			}
			res, err := replier.SendSync(context.Background(), reply)
			if err != nil {
				replyErrs <- fmt.Errorf("send empty reply: %w", err)
				return
			}
			sent <- res
		})
	requester := start("rpc-empty-request-pg")

	// The consumer must be subscribed before the request goes out; its
	// rebalance takes a moment, so the first request may need a retry.
	var reply *primitive.Message
	var err error
	deadline := time.Now().Add(20 * time.Second)
	for reply == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		reply, err = requester.Request(ctx, 3*time.Second, primitive.NewMessage(topic, []byte("ping")))
		cancel()
		select {
		case e := <-replyErrs:
			t.Fatalf("replier: %v", e)
		default:
		}
		if err != nil && time.Now().After(deadline) {
			t.Fatalf("Request: %v", err)
		}
	}
	if len(reply.Body) != 0 {
		t.Fatalf("reply body %q, want empty", reply.Body)
	}
	if reply.GetProperty(primitive.PropertyCorrelationID) == "" || reply.GetProperty(primitive.PropertyMsgType) != "reply" ||
		reply.GetProperty(broker.PropertyPushReplyTime) == "" {
		t.Fatalf("reply properties %v", reply.GetProperties())
	}
	select {
	case res := <-sent:
		if res.Status != primitive.SendOK || res.OffsetMsgID != "0" {
			t.Fatalf("replier's send: %v", res)
		}
	case e := <-replyErrs:
		t.Fatalf("replier: %v", e)
	case <-time.After(15 * time.Second):
		t.Fatal("the replier's send did not return")
	}
}

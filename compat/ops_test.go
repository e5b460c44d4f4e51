package compat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// call sends a raw request to the cluster's broker with brokerlab's own
// remoting client (for codes the Go client's admin has no API for).
func (c *cluster) call(code int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := remoting.NewRequest(code, ext)
	req.Body = body
	resp, err := c.rc.InvokeSync(ctx, c.b.Addr(), req)
	if err != nil {
		c.t.Fatalf("%s: %v", protocol.RequestCodeName(code), err)
	}
	return resp
}

func wantOK(t *testing.T, what string, resp *remoting.Command) {
	t.Helper()
	if resp.Code != protocol.RespSuccess {
		t.Fatalf("%s: code %d %q", what, resp.Code, resp.Remark)
	}
}

// sendBodies sends each body to topic with the official producer.
func sendBodies(t *testing.T, p syncProducer, topic string, bodies []string) {
	t.Helper()
	for _, b := range bodies {
		res, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(b)))
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send %s: %v %v", b, res, err)
		}
	}
}

// TestOpsDeleteTopicThenRecreate (issue 13 §1): the official admin's
// DeleteTopic removes the topic's queues and the group's offsets, so the
// re-created topic starts empty and the same group consumes only what is
// sent after it.
func TestOpsDeleteTopicThenRecreate(t *testing.T) {
	c := startCluster(t)
	adm := newAdmin(t, c)
	const topic, group = "CompatOpsDelete", "compat_ops_delete_cg"
	createTopic(t, c, adm, topic, 2)
	p := newProducer(t, c, "compat_ops_delete_pg")
	old := []string{"old-1", "old-2", "old-3", "old-4"}
	sendBodies(t, p, topic, old)
	rec := newReceived()
	first, err := consumer.NewPushConsumer(consumer.WithNsResolver(c.nsr), consumer.WithGroupName(group),
		consumer.WithInstance("first"), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range ms {
				rec.add("first", m)
			}
			return consumer.ConsumeSuccess, nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the old messages", 15*time.Second, func() bool { return rec.has("first", old) })
	waitUntil(t, "committed offsets", 15*time.Second, func() bool {
		off0, ok0 := c.b.Offsets().Query(group, topic, 0)
		off1, ok1 := c.b.Offsets().Query(group, topic, 1)
		return ok0 && ok1 && off0+off1 == int64(len(old))
	})
	// The group's consumers stop before the deletion: a live client keeps
	// its offsets in memory and would commit them for the new topic.
	if err := first.Shutdown(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the group offline", 10*time.Second, func() bool { return len(c.members(group)) == 0 })

	if err := adm.DeleteTopic(context.Background(), admin.WithTopicDelete(topic), admin.WithBrokerAddrDelete(c.b.Addr())); err != nil {
		t.Fatalf("DeleteTopic: %v", err)
	}
	createTopic(t, c, adm, topic, 2)
	for q := range int32(2) {
		if m := c.maxOffset(topic, q); m != 0 {
			t.Fatalf("re-created %s/%d has max offset %d", topic, q, m)
		}
		if off, ok := c.b.Offsets().Query(group, topic, q); ok && off > 0 {
			t.Fatalf("the group's old offset %d of queue %d survived", off, q)
		}
	}
	fresh := []string{"new-1", "new-2"}
	sendBodies(t, p, topic, fresh)
	rec2 := newReceived()
	startConsumer(t, c, group, "second", topic, rec2, consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	waitUntil(t, "the new messages", 15*time.Second, func() bool { return rec2.has("second", fresh) })
	time.Sleep(500 * time.Millisecond)
	for _, b := range old {
		if n := rec2.deliveries(b); n != 0 {
			t.Fatalf("old message %s delivered again from the re-created topic", b)
		}
	}
}

// TestOpsSubscriptionGroupsWithGoAdmin: a group created with
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP is listed by the official admin's
// GetAllSubscriptionGroup with its settings, and so is a group a consumer's
// heartbeat created; a deleted group is not.
func TestOpsSubscriptionGroupsWithGoAdmin(t *testing.T) {
	c := startCluster(t)
	adm := newAdmin(t, c)
	body := `{"groupName":"compat_ops_sg","consumeEnable":false,"retryMaxTimes":3,"consumeBroadcastEnable":true}`
	wantOK(t, "create group", c.call(protocol.ReqUpdateAndCreateSubscriptionGroup, nil, []byte(body)))
	wantOK(t, "create group 2", c.call(protocol.ReqUpdateAndCreateSubscriptionGroup, nil, []byte(`{"groupName":"compat_ops_gone"}`)))
	wantOK(t, "delete group", c.call(protocol.ReqDeleteSubscriptionGroup, remoting.ExtFields{"groupName": "compat_ops_gone"}, nil))
	createTopic(t, c, adm, "CompatOpsSG", 1)
	startConsumer(t, c, "compat_ops_live", "c", "CompatOpsSG", newReceived())

	waitUntil(t, "the heartbeat's group", 10*time.Second, func() bool {
		w, err := adm.GetAllSubscriptionGroup(context.Background(), c.b.Addr(), 3*time.Second)
		if err != nil {
			t.Fatalf("GetAllSubscriptionGroup: %v", err)
		}
		_, live := w.SubscriptionGroupTable["compat_ops_live"]
		return live
	})
	w, err := adm.GetAllSubscriptionGroup(context.Background(), c.b.Addr(), 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sg, ok := w.SubscriptionGroupTable["compat_ops_sg"]
	if !ok || sg.ConsumeEnable || sg.RetryMaxTimes != 3 || !sg.ConsumeFromMinEnable || sg.RetryQueueNums != 1 || w.DataVersion.Counter < 3 {
		t.Fatalf("group as the Go admin reads it: %+v (version %+v)", sg, w.DataVersion)
	}
	if _, ok := w.SubscriptionGroupTable["compat_ops_gone"]; ok {
		t.Fatal("a deleted group is listed")
	}
}

// TestOpsResetOffsetReachesGoConsumer: INVOKE_BROKER_TO_RESET_OFFSET pushes
// RESET_CONSUMER_CLIENT_OFFSET with a fastjson ResetOffsetBody the official
// push consumer parses and applies: it consumes the topic again from the
// start. (The Go client waits 10 s inside its reset handler.)
func TestOpsResetOffsetReachesGoConsumer(t *testing.T) {
	c := startCluster(t)
	adm := newAdmin(t, c)
	const topic, group = "CompatOpsReset", "compat_ops_reset_cg"
	createTopic(t, c, adm, topic, 1)
	p := newProducer(t, c, "compat_ops_reset_pg")
	bodies := []string{"r-1", "r-2", "r-3"}
	sendBodies(t, p, topic, bodies)
	rec := newReceived()
	startConsumer(t, c, group, "c", topic, rec, consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	waitUntil(t, "first consumption", 15*time.Second, func() bool { return rec.has("c", bodies) })
	waitUntil(t, "committed offset", 15*time.Second, func() bool {
		off, ok := c.b.Offsets().Query(group, topic, 0)
		return ok && off == 3
	})

	resp := c.call(protocol.ReqInvokeBrokerToResetOffset, remoting.ExtFields{"group": group, "topic": topic,
		"timestamp": "0", "isForce": "true"}, nil)
	wantOK(t, "reset", resp)
	want := fmt.Sprintf(`{"offsetTable":{{"brokerName":%q,"queueId":0,"topic":%q}:0}}`, c.b.Config().BrokerName, topic)
	if string(resp.Body) != want {
		t.Fatalf("ResetOffsetBody %s, want %s", resp.Body, want)
	}
	waitUntil(t, "consumption after the reset", 20*time.Second, func() bool {
		for _, b := range bodies {
			if rec.deliveries(b) < 2 {
				return false
			}
		}
		return true
	})
}

// TestOpsStatsBodiesParse: the runtime info, topic stats, consume stats and
// connection bodies of a live cluster used by the official clients decode
// as Java's tools decode them.
func TestOpsStatsBodiesParse(t *testing.T) {
	c := startCluster(t)
	adm := newAdmin(t, c)
	const topic, group = "CompatOpsStats", "compat_ops_stats_cg"
	createTopic(t, c, adm, topic, 2)
	p := newProducer(t, c, "compat_ops_stats_pg")
	bodies := []string{"s-1", "s-2", "s-3", "s-4"}
	sendBodies(t, p, topic, bodies)
	rec := newReceived()
	startConsumer(t, c, group, "c", topic, rec, consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	waitUntil(t, "consumption", 15*time.Second, func() bool { return rec.has("c", bodies) })

	var kv struct {
		Table map[string]string `json:"table"`
	}
	resp := c.call(protocol.ReqGetBrokerRuntimeInfo, nil, nil)
	wantOK(t, "runtime info", resp)
	if err := json.Unmarshal(resp.Body, &kv); err != nil {
		t.Fatal(err)
	}
	if kv.Table["msgPutTotalTodayNow"] != "4" || kv.Table["brokerVersionDesc"] == "" || kv.Table["commitLogMaxOffset"] == "0" {
		t.Fatalf("runtime info %v", kv.Table)
	}
	if n, err := strconv.Atoi(kv.Table["msgGetTotalTodayNow"]); err != nil || n < 4 {
		t.Fatalf("msgGetTotalTodayNow %q", kv.Table["msgGetTotalTodayNow"])
	}

	resp = c.call(protocol.ReqGetTopicStatsInfo, remoting.ExtFields{"topic": topic}, nil)
	wantOK(t, "topic stats", resp)
	raw, _ := broker.FieldOf(resp.Body, "offsetTable")
	tab, err := broker.ParseMQMap(raw)
	if err != nil || len(tab) != 2 {
		t.Fatalf("topic stats %s: %v", resp.Body, err)
	}
	total := int64(0)
	for _, v := range tab {
		var to protocol.TopicOffset
		if err := json.Unmarshal(v, &to); err != nil {
			t.Fatal(err)
		}
		total += to.MaxOffset
	}
	if total != 4 {
		t.Fatalf("topic stats count %d messages", total)
	}

	waitUntil(t, "consume stats without lag", 15*time.Second, func() bool {
		resp = c.call(protocol.ReqGetConsumeStats, remoting.ExtFields{"consumerGroup": group, "topic": topic}, nil)
		raw, _ := broker.FieldOf(resp.Body, "offsetTable")
		tab, err := broker.ParseMQMap(raw)
		if err != nil || len(tab) != 2 {
			t.Fatalf("consume stats %s: %v", resp.Body, err)
		}
		lag := int64(0)
		for _, v := range tab {
			var w protocol.OffsetWrapper
			_ = json.Unmarshal(v, &w)
			lag += w.BrokerOffset - w.ConsumerOffset
		}
		return lag == 0
	})

	resp = c.call(protocol.ReqGetConsumerConnectionList, remoting.ExtFields{"consumerGroup": group}, nil)
	wantOK(t, "consumer connections", resp)
	var cc protocol.ConsumerConnection
	if err := json.Unmarshal(resp.Body, &cc); err != nil || len(cc.ConnectionSet) != 1 || cc.ConnectionSet[0].Language != "GO" ||
		cc.MessageModel != "Clustering" && cc.MessageModel != "CLUSTERING" || cc.SubscriptionTable[topic].Topic != topic {
		t.Fatalf("consumer connection %s (%v)", resp.Body, err)
	}
	resp = c.call(protocol.ReqGetProducerConnectionList, remoting.ExtFields{"producerGroup": "compat_ops_stats_pg"}, nil)
	wantOK(t, "producer connections", resp)
	if !strings.Contains(string(resp.Body), `"language":"GO"`) {
		t.Fatalf("producer connection %s", resp.Body)
	}
	resp = c.call(protocol.ReqQueryTopicConsumeByWho, remoting.ExtFields{"topic": topic}, nil)
	wantOK(t, "consume by who", resp)
	if string(resp.Body) != `{"groupList":["`+group+`"]}` {
		t.Fatalf("group list %s", resp.Body)
	}

	// INVOKE_BROKER_TO_GET_CONSUMER_STATUS asks the Go consumer itself
	// (GET_CONSUMER_STATUS_FROM_CLIENT) and relays its offsets.
	resp = c.call(protocol.ReqInvokeBrokerToGetConsumerStatus, remoting.ExtFields{"topic": topic, "group": group}, nil)
	wantOK(t, "consumer status", resp)
	raw, ok := broker.FieldOf(resp.Body, "consumerTable")
	if !ok || !strings.Contains(string(raw), `"`+cc.ConnectionSet[0].ClientID+`":{{`) {
		t.Fatalf("consumer status %s", resp.Body)
	}
	inner, _ := broker.FieldOf(raw, cc.ConnectionSet[0].ClientID)
	offs, err := broker.ParseMQMap(inner)
	if err != nil || len(offs) != 2 {
		t.Fatalf("client offsets %s: %v", inner, err)
	}
	sum := 0
	for _, v := range offs {
		n, _ := strconv.Atoi(string(v))
		sum += n
	}
	if sum != len(bodies) {
		t.Fatalf("client offsets %s sum to %d", inner, sum)
	}
}

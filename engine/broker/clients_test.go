package broker_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

func consumerList(t *testing.T, e *env, group string) []string {
	t.Helper()
	resp := e.call(protocol.ReqGetConsumerListByGroup, remoting.ExtFields{"consumerGroup": group}, nil)
	if resp.Code != protocol.RespSuccess {
		return nil
	}
	var body struct {
		ConsumerIDList []string `json:"consumerIdList"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.ConsumerIDList
}

// waitNotify waits for a NOTIFY_CONSUMER_IDS_CHANGED for group.
func waitNotify(t *testing.T, pushes <-chan *remoting.Command, group string) {
	t.Helper()
	timeout := time.After(waitLimit)
	for {
		select {
		case req := <-pushes:
			if req.Code == protocol.ReqNotifyConsumerIDsChanged && req.ExtFields["consumerGroup"] == group {
				return
			}
		case <-timeout:
			t.Fatalf("no NOTIFY_CONSUMER_IDS_CHANGED for %s", group)
		}
	}
}

func drain(ch <-chan *remoting.Command) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func TestHeartbeatMembershipAndNotify(t *testing.T) {
	e := startEnv(t, nil)
	c2, pushes2 := newClient(t)

	wantCode(t, "hb c1", e.call(protocol.ReqHeartBeat, nil, heartbeatBody("10.0.0.1@c1", "g")), protocol.RespSuccess)
	waitNotify(t, e.pushes, "g") // c1 itself joined
	if got := consumerList(t, e, "g"); !slices.Equal(got, []string{"10.0.0.1@c1"}) {
		t.Fatalf("members %v", got)
	}
	// The clustering group got its retry topic, registered with the name server.
	eventually(t, "retry topic route", func() bool { _, ok := e.ns.TopicRoute(protocol.RetryTopic("g")); return ok })

	drain(e.pushes)
	wantCode(t, "hb c2", callWith(t, c2, e.b.Addr(), protocol.ReqHeartBeat, nil, heartbeatBody("10.0.0.1@c2", "g")), protocol.RespSuccess)
	waitNotify(t, e.pushes, "g")
	waitNotify(t, pushes2, "g")
	if got := consumerList(t, e, "g"); !slices.Equal(got, []string{"10.0.0.1@c1", "10.0.0.1@c2"}) {
		t.Fatalf("members %v", got)
	}

	// A repeated heartbeat changes nothing and notifies nobody.
	drain(e.pushes)
	wantCode(t, "hb c1 again", e.call(protocol.ReqHeartBeat, nil, heartbeatBody("10.0.0.1@c1", "g")), protocol.RespSuccess)

	// c2's connection closes: c1 is told, c2 is gone.
	_ = c2.Close()
	waitNotify(t, e.pushes, "g")
	if got := consumerList(t, e, "g"); !slices.Equal(got, []string{"10.0.0.1@c1"}) {
		t.Fatalf("members after close %v", got)
	}

	// A heartbeat is authoritative: c1 leaving g for h leaves g empty.
	wantCode(t, "hb c1 moves", e.call(protocol.ReqHeartBeat, nil, heartbeatBody("10.0.0.1@c1", "h")), protocol.RespSuccess)
	wantCode(t, "empty group", e.call(protocol.ReqGetConsumerListByGroup, remoting.ExtFields{"consumerGroup": "g"}, nil), protocol.RespSystemError)

	// UNREGISTER_CLIENT.
	wantCode(t, "unregister", e.call(protocol.ReqUnregisterClient, remoting.ExtFields{"clientID": "10.0.0.1@c1", "consumerGroup": "h"}, nil), protocol.RespSuccess)
	if got := consumerList(t, e, "h"); len(got) != 0 {
		t.Fatalf("members after unregister %v", got)
	}

	wantCode(t, "bad body", e.call(protocol.ReqHeartBeat, nil, []byte("{")), protocol.RespSystemError)
}

func TestHeartbeatSubscriptionFiltersPulls(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	hb := broker.HeartbeatData{ClientID: "c", ConsumerDataSet: []broker.ConsumerData{{
		GroupName: "g", ConsumeType: "CONSUME_PASSIVELY", MessageModel: broker.Clustering,
		SubscriptionDataSet: []broker.SubscriptionData{{Topic: "T", SubString: "A", TagsSet: []string{"A"}, SubVersion: 1 << 60, ExpressionType: "TAG"}},
	}}}
	body, _ := json.Marshal(hb)
	wantCode(t, "hb", e.call(protocol.ReqHeartBeat, nil, body), protocol.RespSuccess)
	e.mustSend("T", 0, "b", props("TAGS", "B"))
	e.mustSend("T", 0, "a", props("TAGS", "A"))
	resp := e.pull("g", "T", 0, 0, 32) // no subscription flag: the heartbeat's is used
	if recs := decodeAll(t, resp.Body); len(recs) != 1 || string(recs[0].Body) != "a" {
		t.Fatalf("filtered pull returned %d records", len(recs))
	}
	if recs := decodeAll(t, e.pull("other", "T", 0, 0, 32).Body); len(recs) != 2 {
		t.Fatalf("a group without subscription sees %d records", len(recs))
	}
}

func TestHeartbeatCodeSetAsStringsOrNumbers(t *testing.T) {
	e := startEnv(t, nil)
	goStyle := `{"clientID":"192.0.2.2@21913","producerDataSet":[{"groupName":"pg"}],"consumerDataSet":[{"groupName":"g_tags",` +
		`"consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET",` +
		`"subscriptionDataSet":[{"classFilterMode":false,"topic":"TagT","subString":"TagA || TagB","tagsSet":["TagA","TagB"],` +
		`"codeSet":["2598919","2598920"],"subVersion":1796023473371056779,"expressionType":"TAG"}],"unitMode":false}]}`
	javaStyle := `{"clientID":"192.0.2.3@1","producerDataSet":[],"consumerDataSet":[{"groupName":"g_tags","consumeType":"CONSUME_ACTIVELY",` +
		`"messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[{"classFilterMode":false,` +
		`"topic":"TagT","subString":"*","tagsSet":[],"codeSet":[2598919],"subVersion":1796023473371056780,"expressionType":"TAG"}],"unitMode":false}],"withoutSub":false}`
	wantCode(t, "go heartbeat", e.call(protocol.ReqHeartBeat, remoting.ExtFields{}, []byte(goStyle)), protocol.RespSuccess)
	wantCode(t, "java heartbeat", e.call(protocol.ReqHeartBeat, remoting.ExtFields{}, []byte(javaStyle)), protocol.RespSuccess)
	if got := consumerList(t, e, "g_tags"); len(got) != 2 {
		t.Fatalf("members %v", got)
	}
}

func TestClientsExpireWithoutHeartbeat(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) {
		c.ClientChannelExpiry = 50 * time.Millisecond
		c.ClientScanInterval = 10 * time.Millisecond
	})
	c2, _ := newClient(t)
	wantCode(t, "hb", callWith(t, c2, e.b.Addr(), protocol.ReqHeartBeat, nil, heartbeatBody("x@1", "g")), protocol.RespSuccess)
	eventually(t, "the silent client to expire", func() bool { return len(consumerList(t, e, "g")) == 0 })
}

func TestLockBatchMQ(t *testing.T) {
	e := startEnv(t, nil)
	mqs := []protocol.MessageQueue{{Topic: "T", BrokerName: "broker-a", QueueID: 0}, {Topic: "T", BrokerName: "broker-a", QueueID: 1}}
	lock := func(client string, code int32) []protocol.MessageQueue {
		body, _ := json.Marshal(map[string]any{"consumerGroup": "g", "clientId": client, "onlyThisBroker": false, "mqSet": mqs})
		resp := e.call(code, nil, body)
		wantCode(t, "lock", resp, protocol.RespSuccess)
		var out struct {
			LockOKMQSet []protocol.MessageQueue `json:"lockOKMQSet"`
		}
		if code == protocol.ReqLockBatchMQ {
			if err := json.Unmarshal(resp.Body, &out); err != nil {
				t.Fatal(err)
			}
		}
		return out.LockOKMQSet
	}
	if got := lock("a", protocol.ReqLockBatchMQ); len(got) != 2 {
		t.Fatalf("a locked %v", got)
	}
	if got := lock("b", protocol.ReqLockBatchMQ); len(got) != 0 {
		t.Fatalf("b locked %v while a holds them", got)
	}
	lock("a", protocol.ReqUnlockBatchMQ)
	if got := lock("b", protocol.ReqLockBatchMQ); len(got) != 2 {
		t.Fatalf("b locked %v after a unlocked", got)
	}
}

func TestAdminAnswers(t *testing.T) {
	e := startEnv(t, nil)
	wantCode(t, "hb", e.call(protocol.ReqHeartBeat, nil, heartbeatBody("x@1", "g1")), protocol.RespSuccess)
	resp := e.call(protocol.ReqGetAllSubscriptionGroupConfig, nil, nil)
	wantCode(t, "subscription groups", resp, protocol.RespSuccess)
	var body struct {
		SubscriptionGroupTable map[string]struct {
			GroupName     string `json:"groupName"`
			RetryMaxTimes int32  `json:"retryMaxTimes"`
		} `json:"subscriptionGroupTable"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil || body.SubscriptionGroupTable["g1"].RetryMaxTimes != 16 {
		t.Fatalf("subscription groups %s (%v)", resp.Body, err)
	}
	wantCode(t, "end transaction", e.call(protocol.ReqEndTransaction, remoting.ExtFields{"commitLogOffset": "0"}, nil), protocol.RespSystemError) // header incomplete (txn_test.go)
	wantCode(t, "lock with a bad body", e.call(protocol.ReqLockBatchMQ, nil, []byte("{")), protocol.RespSystemError)
}

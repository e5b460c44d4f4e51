package broker_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// mqTable decodes the MessageQueue-keyed map in field of a fastjson body.
func mqTable[V any](t *testing.T, body []byte, field string) map[protocol.MessageQueue]V {
	t.Helper()
	raw, ok := broker.FieldOf(body, field)
	if !ok {
		t.Fatalf("no %s in %s", field, body)
	}
	m, err := broker.ParseMQMap(raw)
	if err != nil {
		t.Fatalf("%s: %v in %s", field, err, raw)
	}
	out := map[protocol.MessageQueue]V{}
	for mq, v := range m {
		var x V
		if err := json.Unmarshal(v, &x); err != nil {
			t.Fatalf("%v: %v", mq, err)
		}
		out[mq] = x
	}
	return out
}

func mq(topic string, q int32) protocol.MessageQueue {
	return protocol.MessageQueue{Topic: topic, BrokerName: "broker-a", QueueID: q}
}

func (e *env) commitOffset(group, topic string, q int32, off int64) {
	e.t.Helper()
	ext := remoting.ExtFields{"consumerGroup": group, "topic": topic}
	ext.SetInt32("queueId", q)
	ext.SetInt64("commitOffset", off)
	wantCode(e.t, "commit offset", e.call(protocol.ReqUpdateConsumerOffset, ext, nil), protocol.RespSuccess)
}

func (e *env) groupOffset(group, topic string, q int32) *remoting.Command {
	e.t.Helper()
	ext := remoting.ExtFields{"consumerGroup": group, "topic": topic}
	ext.SetInt32("queueId", q)
	return e.call(protocol.ReqQueryConsumerOffset, ext, nil)
}

func (e *env) heartbeat(body []byte) {
	e.t.Helper()
	wantCode(e.t, "heartbeat", e.call(protocol.ReqHeartBeat, nil, body), protocol.RespSuccess)
}

func (e *env) runtimeInfo() map[string]string {
	e.t.Helper()
	resp := e.call(protocol.ReqGetBrokerRuntimeInfo, nil, nil)
	wantCode(e.t, "runtime info", resp, protocol.RespSuccess)
	var kv struct {
		Table map[string]string `json:"table"`
	}
	if err := json.Unmarshal(resp.Body, &kv); err != nil {
		e.t.Fatalf("KVTable: %v: %s", err, resp.Body)
	}
	return kv.Table
}

func TestOpsRuntimeInfo(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	for i := range 3 {
		e.mustSend("T", 0, "body-"+strconv.Itoa(i), "")
	}
	if n := len(decodeAll(t, e.pull("g", "T", 0, 0, 32).Body)); n != 3 {
		t.Fatalf("pulled %d", n)
	}
	e.pull("g", "T", 0, 3, 32) // a miss
	kv := e.runtimeInfo()
	want := map[string]string{
		"brokerVersionDesc": broker.BrokerVersionDesc, "msgPutTotalTodayNow": "3", "msgGetTotalTodayNow": "3",
		"putMessageTimesTotal": "3", "putMessageSizeTotal": "18", "putMessageAverageSize": "6.0",
		"sendThreadPoolQueueCapacity": "10000", "brokerActive": "true", "putMessageFailedTimes": "0",
	}
	for k, v := range want {
		if kv[k] != v {
			t.Errorf("%s = %q, want %q", k, kv[k], v)
		}
	}
	if ok, _ := regexp.MatchString(`^\[ 0 days, 0 hours, \d+ minutes, \d+ seconds \]$`, kv["runtime"]); !ok {
		t.Errorf("runtime %q", kv["runtime"])
	}
	if boot, err := strconv.ParseInt(kv["bootTimestamp"], 10, 64); err != nil || time.Since(time.UnixMilli(boot)) > time.Minute {
		t.Errorf("bootTimestamp %q", kv["bootTimestamp"])
	}
	for _, k := range []string{"putTps", "getTransferredTps", "getFoundTps", "getMissTps", "getTotalTps"} {
		if f := strings.Fields(kv[k]); len(f) != 3 {
			t.Errorf("%s = %q, want three rates", k, kv[k])
		}
	}
	st := e.b.RuntimeStats()
	if st.MsgsIn != 3 || st.MsgsOut != 3 || st.GetFound != 1 || st.GetMiss != 1 || st.Topics["T"].MsgsIn != 3 ||
		st.Topics["T"].MsgsOut != 3 || st.Groups["g@T"].Msgs != 3 {
		t.Fatalf("RuntimeStats %+v", st)
	}
}

func TestOpsTopicStats(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 2)
	for range 3 {
		e.mustSend("T", 0, "x", "")
	}
	e.mustSend("T", 1, "y", "")
	resp := e.call(protocol.ReqGetTopicStatsInfo, remoting.ExtFields{"topic": "T"}, nil)
	wantCode(t, "topic stats", resp, protocol.RespSuccess)
	if !strings.HasPrefix(string(resp.Body), `{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:{`) {
		t.Fatalf("not fastjson's MessageQueue-keyed form: %s", resp.Body)
	}
	tab := mqTable[protocol.TopicOffset](t, resp.Body, "offsetTable")
	q0, q1 := tab[mq("T", 0)], tab[mq("T", 1)]
	if len(tab) != 2 || q0.MaxOffset != 3 || q0.MinOffset != 0 || q1.MaxOffset != 1 ||
		time.Since(time.UnixMilli(q0.LastUpdateTimestamp)) > time.Minute || q1.LastUpdateTimestamp == 0 {
		t.Fatalf("offset table %+v", tab)
	}
	if _, ok := broker.FieldOf(resp.Body, "topicPutTps"); !ok {
		t.Fatalf("no topicPutTps: %s", resp.Body)
	}
	wantCode(t, "unknown topic", e.call(protocol.ReqGetTopicStatsInfo, remoting.ExtFields{"topic": "nope"}, nil), protocol.RespTopicNotExist)
}

func TestOpsConsumeStats(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 2)
	for range 3 {
		e.mustSend("T", 0, "x", "")
	}
	e.commitOffset("g", "T", 0, 2)
	e.commitOffset("g", "T", 1, 0)
	for _, ext := range []remoting.ExtFields{{"consumerGroup": "g", "topic": "T"}, {"consumerGroup": "g"}, {"consumerGroup": "g", "topicList": "T;"}} {
		resp := e.call(protocol.ReqGetConsumeStats, ext, nil)
		wantCode(t, "consume stats", resp, protocol.RespSuccess)
		tab := mqTable[protocol.OffsetWrapper](t, resp.Body, "offsetTable")
		q0, q1 := tab[mq("T", 0)], tab[mq("T", 1)]
		if len(tab) != 2 || q0.BrokerOffset != 3 || q0.ConsumerOffset != 2 || q0.PullOffset != 2 || q0.LastTimestamp == 0 ||
			q1.BrokerOffset != 0 || q1.ConsumerOffset != 0 || q1.LastTimestamp != 0 {
			t.Fatalf("%v: offset table %+v", ext, tab)
		}
		if _, ok := broker.FieldOf(resp.Body, "consumeTps"); !ok {
			t.Fatalf("no consumeTps: %s", resp.Body)
		}
	}
	// A group without offsets has an empty table.
	resp := e.call(protocol.ReqGetConsumeStats, remoting.ExtFields{"consumerGroup": "other"}, nil)
	if string(resp.Body) != `{"consumeTps":0.0,"offsetTable":{}}` {
		t.Fatalf("empty group: %s", resp.Body)
	}
}

func producerHeartbeat(clientID, group string) []byte {
	b, _ := json.Marshal(broker.HeartbeatData{ClientID: clientID, ProducerDataSet: []broker.ProducerData{{GroupName: group}}})
	return b
}

func TestOpsConnections(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	e.heartbeat(heartbeatBody("10.0.0.1@c1", "g"))
	e.heartbeat(producerHeartbeat("10.0.0.1@p1", "pg"))

	resp := e.call(protocol.ReqGetConsumerConnectionList, remoting.ExtFields{"consumerGroup": "g"}, nil)
	wantCode(t, "consumer connections", resp, protocol.RespSuccess)
	var cc protocol.ConsumerConnection
	if err := json.Unmarshal(resp.Body, &cc); err != nil {
		t.Fatal(err)
	}
	if len(cc.ConnectionSet) != 1 || cc.ConnectionSet[0].ClientID != "10.0.0.1@c1" || cc.ConnectionSet[0].Language != "GO" ||
		cc.ConnectionSet[0].Version != remoting.DefaultVersion || !strings.HasPrefix(cc.ConnectionSet[0].ClientAddr, "127.0.0.1:") ||
		cc.ConsumeType != "CONSUME_PASSIVELY" || cc.MessageModel != "CLUSTERING" || cc.ConsumeFromWhere != "CONSUME_FROM_FIRST_OFFSET" {
		t.Fatalf("consumer connection %s", resp.Body)
	}
	if sd := cc.SubscriptionTable["T"]; sd.Topic != "T" || sd.SubString != "*" || sd.ExpressionType != "TAG" || len(cc.SubscriptionTable) != 2 {
		t.Fatalf("subscription table %s", resp.Body)
	}
	wantCode(t, "offline group", e.call(protocol.ReqGetConsumerConnectionList, remoting.ExtFields{"consumerGroup": "nobody"}, nil),
		protocol.RespConsumerNotOnline)

	resp = e.call(protocol.ReqGetProducerConnectionList, remoting.ExtFields{"producerGroup": "pg"}, nil)
	wantCode(t, "producer connections", resp, protocol.RespSuccess)
	var pc protocol.ProducerConnection
	if err := json.Unmarshal(resp.Body, &pc); err != nil || len(pc.ConnectionSet) != 1 || pc.ConnectionSet[0].ClientID != "10.0.0.1@p1" {
		t.Fatalf("producer connection %s (%v)", resp.Body, err)
	}
	wantCode(t, "unknown producer group", e.call(protocol.ReqGetProducerConnectionList, remoting.ExtFields{"producerGroup": "x"}, nil),
		protocol.RespSystemError)

	// QUERY_TOPIC_CONSUME_BY_WHO: the online subscriber and a group with offsets.
	e.commitOffset("offline", "T", 0, 0)
	resp = e.call(protocol.ReqQueryTopicConsumeByWho, remoting.ExtFields{"topic": "T"}, nil)
	wantCode(t, "consume by who", resp, protocol.RespSuccess)
	if string(resp.Body) != `{"groupList":["g","offline"]}` {
		t.Fatalf("group list %s", resp.Body)
	}
}

func (e *env) subGroups() protocol.SubscriptionGroupWrapper {
	e.t.Helper()
	resp := e.call(protocol.ReqGetAllSubscriptionGroupConfig, nil, nil)
	wantCode(e.t, "get all subscription groups", resp, protocol.RespSuccess)
	var w protocol.SubscriptionGroupWrapper
	if err := json.Unmarshal(resp.Body, &w); err != nil {
		e.t.Fatal(err)
	}
	return w
}

func (e *env) putSubGroup(body string) *remoting.Command {
	e.t.Helper()
	return e.call(protocol.ReqUpdateAndCreateSubscriptionGroup, nil, []byte(body))
}

func TestOpsSubscriptionGroups(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	e.mustSend("T", 0, "x", "")
	if w := e.subGroups(); len(w.SubscriptionGroupTable) != 0 {
		t.Fatalf("fresh broker has groups %v", w.SubscriptionGroupTable)
	}
	// A heartbeat creates its group with the defaults (autoCreateSubscriptionGroup).
	e.heartbeat(heartbeatBody("10.0.0.1@c1", "g"))
	w := e.subGroups()
	if c, ok := w.SubscriptionGroupTable["g"]; !ok || !c.ConsumeEnable || c.RetryMaxTimes != 16 || c.RetryQueueNums != 1 ||
		c.WhichBrokerWhenConsumeSlowly != 1 || string(c.GroupRetryPolicy) != `{"type":"CUSTOMIZED"}` {
		t.Fatalf("auto-created group %+v", w.SubscriptionGroupTable)
	}
	v1 := w.DataVersion.Counter

	// Create one that may not consume: its pulls get NO_PERMISSION.
	wantCode(t, "create", e.putSubGroup(`{"groupName":"sg","consumeEnable":false,"retryMaxTimes":2}`), protocol.RespSuccess)
	w = e.subGroups()
	c := w.SubscriptionGroupTable["sg"]
	if c.ConsumeEnable || c.RetryMaxTimes != 2 || !c.ConsumeFromMinEnable || c.RetryQueueNums != 1 || w.DataVersion.Counter <= v1 {
		t.Fatalf("created %+v version %+v", c, w.DataVersion)
	}
	resp := e.pull("sg", "T", 0, 0, 1)
	wantCode(t, "pull of a disabled group", resp, protocol.RespNoPermission)
	if resp.Remark != "subscription group no permission, sg" {
		t.Fatalf("remark %q", resp.Remark)
	}
	wantCode(t, "enable", e.putSubGroup(`{"groupName":"sg","consumeEnable":true}`), protocol.RespSuccess)
	wantCode(t, "pull of the enabled group", e.pull("sg", "T", 0, 0, 1), protocol.RespSuccess)

	for _, bad := range []string{`{"groupName":""}`, `{"groupName":"a b"}`, `{"groupName":"` + strings.Repeat("x", 121) + `"}`} {
		wantCode(t, "bad name "+bad, e.putSubGroup(bad), protocol.RespInvalidParameter)
	}
	wantCode(t, "bad body", e.putSubGroup(`{`), protocol.RespSystemError)

	// A broadcasting group whose config forbids broadcast consumption.
	var hb broker.HeartbeatData
	if err := json.Unmarshal(heartbeatBody("10.0.0.1@c2", "bg"), &hb); err != nil {
		t.Fatal(err)
	}
	hb.ConsumerDataSet[0].MessageModel = broker.Broadcasting
	body, _ := json.Marshal(hb)
	e.heartbeat(body)
	wantCode(t, "broadcast pull", e.pull("bg", "T", 0, 0, 1), protocol.RespSuccess)
	wantCode(t, "no broadcast", e.putSubGroup(`{"groupName":"bg","consumeBroadcastEnable":false}`), protocol.RespSuccess)
	if resp := e.pull("bg", "T", 0, 0, 1); resp.Code != protocol.RespNoPermission ||
		resp.Remark != "the consumer group[bg] can not consume by broadcast way" {
		t.Fatalf("broadcast pull of a group without consumeBroadcastEnable: %d %q", resp.Code, resp.Remark)
	}

	// Delete with cleanOffset drops the group's offsets too.
	e.commitOffset("sg", "T", 0, 1)
	wantCode(t, "delete", e.call(protocol.ReqDeleteSubscriptionGroup, remoting.ExtFields{"groupName": "sg", "cleanOffset": "true"}, nil),
		protocol.RespSuccess)
	if _, ok := e.subGroups().SubscriptionGroupTable["sg"]; ok {
		t.Fatal("deleted group still listed")
	}
	if _, ok := e.b.Offsets().Query("sg", "T", 0); ok {
		t.Fatal("offsets of the deleted group kept")
	}
}

func TestOpsSubscriptionGroupAutoCreateOff(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) { c.AutoCreateSubscriptionGroup = false })
	e.createTopic("T", 1)
	e.mustSend("T", 0, "x", "")
	wantCode(t, "pull of an unknown group", e.pull("g", "T", 0, 0, 1), protocol.RespSubscriptionGroupNotExist)
	e.heartbeat(heartbeatBody("10.0.0.1@c1", "g"))
	if n := len(e.subGroups().SubscriptionGroupTable); n != 0 {
		t.Fatalf("heartbeat created %d groups with auto-creation off", n)
	}
	wantCode(t, "create", e.putSubGroup(`{"groupName":"g"}`), protocol.RespSuccess)
	wantCode(t, "pull of the created group", e.pull("g", "T", 0, 0, 1), protocol.RespSuccess)
	// Turned on at run time, unknown groups are created on their first pull.
	wantCode(t, "update config", e.call(protocol.ReqUpdateBrokerConfig, nil, []byte("autoCreateSubscriptionGroup=true\n")), protocol.RespSuccess)
	wantCode(t, "pull of a new group", e.pull("g2", "T", 0, 0, 1), protocol.RespSuccess)
	if _, ok := e.subGroups().SubscriptionGroupTable["g2"]; !ok {
		t.Fatal("g2 not created by its pull")
	}
}

// The group's retryMaxTimes bounds send-back when the request does not
// carry maxReconsumeTimes.
func TestOpsRetryMaxTimesFromGroup(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	wantCode(t, "create", e.putSubGroup(`{"groupName":"g","retryMaxTimes":1}`), protocol.RespSuccess)
	e.mustSend("T", 0, "payload", "")
	orig := e.onlyRecord("T")
	back := func(phys int64) {
		ext := sendBackExt("g", phys, 0, 0)
		delete(ext, "maxReconsumeTimes")
		wantCode(t, "send back", e.call(protocol.ReqConsumerSendMsgBack, ext, nil), protocol.RespSuccess)
	}
	back(orig.PhysicalOffset) // reconsumeTimes 0 < 1: retried
	eventually(t, "delivery to the retry topic", func() bool { return e.maxOffset(protocol.RetryTopic("g"), 0) == 1 })
	if e.maxOffset(protocol.DLQTopic("g"), 0) != 0 {
		t.Fatal("dead-lettered at once")
	}
	back(e.onlyRecord(protocol.RetryTopic("g")).PhysicalOffset) // reconsumeTimes 1 ≥ 1: dead letter
	if dead := e.onlyRecord(protocol.DLQTopic("g")); string(dead.Body) != "payload" {
		t.Fatalf("dead letter %q", dead.Body)
	}
}

func TestOpsResetOffset(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 2)
	for range 3 {
		e.mustSend("T", 0, "old", "")
	}
	time.Sleep(20 * time.Millisecond)
	ts := time.Now().UnixMilli()
	time.Sleep(20 * time.Millisecond)
	e.mustSend("T", 0, "new", "")
	e.mustSend("T", 0, "new", "")
	reset := func(group string, ts int64, force bool) *remoting.Command {
		return e.call(protocol.ReqInvokeBrokerToResetOffset, remoting.ExtFields{"group": group, "topic": "T",
			"timestamp": strconv.FormatInt(ts, 10), "isForce": strconv.FormatBool(force)}, nil)
	}
	wantCode(t, "group without offsets", reset("g", ts, true), protocol.RespSystemError)

	e.commitOffset("g", "T", 0, 5)
	e.commitOffset("g", "T", 1, 0)
	// No live consumer: SUCCESS (RocketMQ 5's server-side reset), the offsets are committed.
	wantCode(t, "offline group", reset("g", ts, true), protocol.RespSuccess)
	if off := extInt(t, e.groupOffset("g", "T", 0), "offset"); off != 3 {
		t.Fatalf("offset after reset %d, want 3", off)
	}

	e.commitOffset("g", "T", 0, 5)
	e.heartbeat(heartbeatBody("10.0.0.1@c1", "g"))
	resp := reset("g", ts, true)
	wantCode(t, "reset", resp, protocol.RespSuccess)
	want := `{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:3,{"brokerName":"broker-a","queueId":1,"topic":"T"}:0}}`
	if string(resp.Body) != want {
		t.Fatalf("ResetOffsetBody %s", resp.Body)
	}
	var push *remoting.Command
	for push == nil {
		select {
		case p := <-e.pushes:
			if p.Code == protocol.ReqResetConsumerClientOffset {
				push = p
			}
		case <-time.After(waitLimit):
			t.Fatal("no RESET_CONSUMER_CLIENT_OFFSET pushed")
		}
	}
	{
		if push.Code != protocol.ReqResetConsumerClientOffset || push.ExtFields["group"] != "g" || push.ExtFields["topic"] != "T" ||
			push.ExtFields["timestamp"] != strconv.FormatInt(ts, 10) || push.ExtFields["isForce"] != "true" || string(push.Body) != want {
			t.Fatalf("push %d %v %s", push.Code, push.ExtFields, push.Body)
		}
	}
	// Not forced, a later target keeps the smaller current offset; -1 is the max offset.
	e.commitOffset("g", "T", 0, 1)
	wantCode(t, "reset to max, not forced", reset("g", -1, false), protocol.RespSuccess)
	if off := extInt(t, e.groupOffset("g", "T", 0), "offset"); off != 1 {
		t.Fatalf("unforced reset moved the offset to %d", off)
	}
	wantCode(t, "reset to max, forced", reset("g", -1, true), protocol.RespSuccess)
	if off := extInt(t, e.groupOffset("g", "T", 0), "offset"); off != 5 {
		t.Fatalf("forced reset to max gave %d", off)
	}
}

func TestOpsBrokerConfig(t *testing.T) {
	e := startEnv(t, nil)
	get := func() (map[string]string, int64) {
		resp := e.call(protocol.ReqGetBrokerConfig, nil, nil)
		wantCode(t, "get config", resp, protocol.RespSuccess)
		var ver struct {
			Counter int64 `json:"counter"`
		}
		if err := json.Unmarshal([]byte(resp.ExtFields["version"]), &ver); err != nil {
			t.Fatalf("version %q: %v", resp.ExtFields["version"], err)
		}
		m := map[string]string{}
		lines := strings.Split(strings.TrimSuffix(string(resp.Body), "\n"), "\n")
		for i, l := range lines {
			k, v, ok := strings.Cut(l, "=")
			if !ok || (i > 0 && lines[i-1] > l) {
				t.Fatalf("line %q (unsorted or not key=value)", l)
			}
			m[k] = v
		}
		return m, ver.Counter
	}
	m, v0 := get()
	if m["brokerName"] != "broker-a" || m["brokerClusterName"] != "DefaultCluster" || m["longPollingEnable"] != "true" ||
		m["autoCreateTopicEnable"] != "true" || m["brokerRole"] != "ASYNC_MASTER" || m["listenPort"] == "" {
		t.Fatalf("config %v", m)
	}
	update := func(body string) *remoting.Command {
		return e.call(protocol.ReqUpdateBrokerConfig, nil, []byte(body))
	}
	wantCode(t, "update", update("# comment\nlongPollingEnable=false\nshortPollingTimeMills = 50\n"), protocol.RespSuccess)
	m, v1 := get()
	if m["longPollingEnable"] != "false" || m["shortPollingTimeMills"] != "50" || v1 != v0+1 {
		t.Fatalf("after update: %v version %d→%d", m, v0, v1)
	}
	// The change is live: an empty suspended pull is now held only 50 ms.
	e.createTopic("T", 1)
	start := time.Now()
	resp := e.call(protocol.ReqPullMessage, pullExt("g", "T", 0, 0, 1, protocol.PullFlagSuspend, 20000), nil)
	wantCode(t, "short-polled pull", resp, protocol.RespPullNotFound)
	if time.Since(start) > 5*time.Second {
		t.Fatal("pull was long-polled after longPollingEnable=false")
	}

	wantCode(t, "read-only key", update("listenPort=1"), protocol.RespInvalidParameter)
	wantCode(t, "black-listed key", update("brokerConfigPath=/x"), protocol.RespNoPermission)
	wantCode(t, "bad value", update("longPollingEnable=maybe\nautoCreateTopicEnable=false"), protocol.RespInvalidParameter)
	if m, v := get(); m["autoCreateTopicEnable"] != "true" || v != v1 {
		t.Fatalf("a refused update changed something: %v %d", m, v)
	}
	// Java's Properties.load reads "no separator here" as key "no" (not a
	// changeable key); only a malformed \uXXXX escape fails string2Properties.
	wantCode(t, "key without separator", update("no separator here"), protocol.RespInvalidParameter)
	wantCode(t, "not properties", update(`longPollingEnable=\uZZZZ`), protocol.RespSystemError)
}

// DELETE_TOPIC_IN_BROKER over engine/store: re-creating the topic starts
// empty — no old messages, offsets or key lookups — also after a restart.
func TestOpsDeleteTopicRealStore(t *testing.T) {
	for _, pol := range flush.Kinds() {
		t.Run("flush="+string(pol), func(t *testing.T) {
			ns := startNamesrv(t)
			dir := t.TempDir()
			e := startRealEnv(t, dir, pol, ns.Addr())
			e.ns = ns
			e.createTopic("T", 2)
			for range 5 {
				e.mustSend("T", 0, "old", props(record.PropertyKeys, "k-old"))
			}
			e.mustSend("T", 1, "old", "")
			e.createTopic("U", 1)
			e.mustSend("U", 0, "other topic", "")
			e.commitOffset("g", "T", 0, 4)
			e.commitOffset("g", "U", 0, 1)
			if kv := e.runtimeInfo(); kv["commitLogMaxOffset"] == "0" || kv["commitLogMaxOffset"] == "" || kv["commitLogMinOffset"] != "0" {
				t.Fatalf("store keys %v", kv)
			}

			wantCode(t, "delete", e.call(protocol.ReqDeleteTopicInBroker, remoting.ExtFields{"topic": "T"}, nil), protocol.RespSuccess)
			e.createTopic("T", 2)
			checkEmpty := func(when string) {
				t.Helper()
				for q := range int32(2) {
					if m := e.maxOffset("T", q); m != 0 {
						t.Fatalf("%s: max offset of T/%d is %d", when, q, m)
					}
				}
				wantCode(t, when+": old offset", e.groupOffset("g", "T", 0), protocol.RespQueryNotFound)
				qm := e.call(protocol.ReqQueryMessage, remoting.ExtFields{"topic": "T", "key": "k-old", "maxNum": "32",
					"beginTimestamp": "0", "endTimestamp": strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)}, nil)
				wantCode(t, when+": key of a deleted message", qm, protocol.RespQueryNotFound)
				if off := extInt(t, e.groupOffset("g", "U", 0), "offset"); off != 1 || e.maxOffset("U", 0) != 1 {
					t.Fatalf("%s: the other topic lost data", when)
				}
			}
			checkEmpty("re-created")
			resp := e.mustSend("T", 0, "new", "")
			if extInt(t, resp, "queueOffset") != 0 {
				t.Fatalf("first message of the re-created topic at queue offset %s", resp.ExtFields["queueOffset"])
			}
			eventually(t, "dispatch of the new message", func() bool { return e.maxOffset("T", 0) == 1 })
			if r := e.onlyRecord("T"); string(r.Body) != "new" {
				t.Fatalf("re-created topic serves %q", r.Body)
			}

			// After a restart (recovery re-dispatches from the commit log) the
			// old records stay out.
			if err := e.b.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			e = startRealEnv(t, dir, pol, ns.Addr())
			e.ns = ns
			if r := e.onlyRecord("T"); string(r.Body) != "new" || e.maxOffset("T", 0) != 1 || e.maxOffset("T", 1) != 0 {
				t.Fatalf("after restart T/0 max %d serves %q", e.maxOffset("T", 0), r.Body)
			}
			if _, ok := e.b.Offsets().Query("g", "T", 0); ok {
				t.Fatal("the old offset is back after a restart")
			}
			if off, ok := e.b.Offsets().Query("g", "U", 0); !ok || off != 1 {
				t.Fatal("the other topic's offset was lost")
			}
		})
	}
}

// Subscription groups persist in the store's config/subscriptionGroup.json.
func TestOpsSubscriptionGroupsPersist(t *testing.T) {
	ns := startNamesrv(t)
	dir := t.TempDir()
	e := startRealEnv(t, dir, flush.Async, ns.Addr())
	wantCode(t, "create", e.putSubGroup(`{"groupName":"sg","consumeEnable":false,"retryMaxTimes":3}`), protocol.RespSuccess)
	wantCode(t, "create 2", e.putSubGroup(`{"groupName":"gone"}`), protocol.RespSuccess)
	wantCode(t, "delete", e.call(protocol.ReqDeleteSubscriptionGroup, remoting.ExtFields{"groupName": "gone"}, nil), protocol.RespSuccess)
	if err := e.b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	e = startRealEnv(t, dir, flush.Async, ns.Addr())
	w := e.subGroups()
	c, ok := w.SubscriptionGroupTable["sg"]
	if !ok || c.ConsumeEnable || c.RetryMaxTimes != 3 || len(w.SubscriptionGroupTable) != 1 || w.DataVersion.Counter < 3 {
		t.Fatalf("after restart %+v", w)
	}
	e.createTopic("T", 1)
	wantCode(t, "pull of the disabled group after restart", e.pull("sg", "T", 0, 0, 1), protocol.RespNoPermission)
}

func TestOpsGetConsumerStatus(t *testing.T) {
	e := startEnv(t, nil)
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	ccfg.RequestProcessor = remoting.ProcessorFunc(func(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
		if req.Code != protocol.ReqGetConsumerStatusFromClient || req.ExtFields["group"] != "g" {
			return nil, nil
		}
		resp := remoting.NewResponse(protocol.RespSuccess, "")
		// The Go client's ConsumerStatus.Encode form.
		resp.Body = []byte(`{"messageQueueTable":{{"topic":"` + req.ExtFields["topic"] + `","brokerName":"broker-a","queueId":1}:7,` +
			`{"topic":"` + req.ExtFields["topic"] + `","brokerName":"broker-a","queueId":0}:5}}`)
		return resp, nil
	})
	c := remoting.NewClient(ccfg)
	t.Cleanup(func() { _ = c.Close() })
	wantCode(t, "heartbeat", callWith(t, c, e.b.Addr(), protocol.ReqHeartBeat, nil, heartbeatBody("10.0.0.1@c1", "g")), protocol.RespSuccess)

	resp := e.call(protocol.ReqInvokeBrokerToGetConsumerStatus, remoting.ExtFields{"topic": "T", "group": "g"}, nil)
	wantCode(t, "consumer status", resp, protocol.RespSuccess)
	want := `{"consumerTable":{"10.0.0.1@c1":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:5,` +
		`{"brokerName":"broker-a","queueId":1,"topic":"T"}:7}},"messageQueueTable":{}}`
	if string(resp.Body) != want {
		t.Fatalf("GetConsumerStatusBody\n%s\nwant\n%s", resp.Body, want)
	}
	resp = e.call(protocol.ReqInvokeBrokerToGetConsumerStatus, remoting.ExtFields{"topic": "T", "group": "g", "clientAddr": "other"}, nil)
	if string(resp.Body) != `{"consumerTable":{},"messageQueueTable":{}}` {
		t.Fatalf("another client's status: %s", resp.Body)
	}
	wantCode(t, "offline group", e.call(protocol.ReqInvokeBrokerToGetConsumerStatus, remoting.ExtFields{"topic": "T", "group": "x"}, nil),
		protocol.RespSystemError)
}

// retryQueueNums sizes the group's retry topic; notifyConsumerIdsChangedEnable
// =false keeps membership changes from being pushed to the group.
func TestOpsGroupRetryQueuesAndNotify(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	wantCode(t, "create", e.putSubGroup(`{"groupName":"g","retryQueueNums":3,"notifyConsumerIdsChangedEnable":false}`), protocol.RespSuccess)
	wantCode(t, "create 2", e.putSubGroup(`{"groupName":"n"}`), protocol.RespSuccess)
	e.heartbeat(heartbeatBody("10.0.0.1@c1", "g", "n"))
	route, ok := e.ns.TopicRoute(protocol.RetryTopic("g"))
	if !ok || len(route.QueueDatas) != 1 || route.QueueDatas[0].WriteQueueNums != 3 {
		t.Fatalf("retry topic route %+v", route)
	}
	// c1's own join and a second member joining both groups: only n's
	// members are told, twice.
	other, _ := newClient(t)
	wantCode(t, "heartbeat 2", callWith(t, other, e.b.Addr(), protocol.ReqHeartBeat, nil, heartbeatBody("10.0.0.2@c2", "g", "n")),
		protocol.RespSuccess)
	// The pushes go out after the heartbeats' replies, each on its own
	// goroutine: wait for two (however slow the machine), then a while
	// longer for a third that must not come.
	deadline := time.After(waitLimit)
	var told []string
	for done := false; !done; {
		select {
		case p := <-e.pushes:
			if p.Code == protocol.ReqNotifyConsumerIDsChanged {
				told = append(told, p.ExtFields["consumerGroup"])
				if len(told) == 2 {
					deadline = time.After(300 * time.Millisecond)
				}
			}
		case <-deadline:
			done = true
		}
	}
	if strings.Join(told, ",") != "n,n" {
		t.Fatalf("NOTIFY_CONSUMER_IDS_CHANGED for %v, want n twice", told)
	}
}

// A slave copies its master's subscription groups and applies them.
func TestOpsSlaveCopiesSubscriptionGroups(t *testing.T) {
	ns := startNamesrv(t)
	master := haBroker(t, ns.Addr(), broker.AsyncMaster, 0, nil)
	slave := haBroker(t, ns.Addr(), broker.Slave, 1, func(c *broker.Config) { c.SlaveReadEnable = true })
	c, _ := newClient(t)
	createTopicOn(t, c, master.Addr(), "T", 1)
	wantCode(t, "create group", callWith(t, c, master.Addr(), protocol.ReqUpdateAndCreateSubscriptionGroup, nil,
		[]byte(`{"groupName":"sg","consumeEnable":false,"retryMaxTimes":5}`)), protocol.RespSuccess)
	eventually(t, "the slave to copy the group", func() bool {
		resp := callWith(t, c, slave.Addr(), protocol.ReqGetAllSubscriptionGroupConfig, nil, nil)
		var w protocol.SubscriptionGroupWrapper
		if json.Unmarshal(resp.Body, &w) != nil {
			return false
		}
		g, ok := w.SubscriptionGroupTable["sg"]
		return ok && !g.ConsumeEnable && g.RetryMaxTimes == 5
	})
	eventually(t, "the slave to know T", func() bool {
		resp := callWith(t, c, slave.Addr(), protocol.ReqPullMessage, pullExt("sg", "T", 0, 0, 1, 0, 0), nil)
		return resp.Code != protocol.RespTopicNotExist
	})
	resp := callWith(t, c, slave.Addr(), protocol.ReqPullMessage, pullExt("sg", "T", 0, 0, 1, 0, 0), nil)
	wantCode(t, "pull of a disabled group from the slave", resp, protocol.RespNoPermission)
}

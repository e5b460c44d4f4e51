package mqadmin

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

func TestNormalize(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{}`, `{}`},
		{` { "a" : [ 1 , 2.5 , true , null ] } `, `{"a":[1,2.5,true,null]}`},
		{`{0:"x",1:"y"}`, `{"0":"x","1":"y"}`},
		{`{-1:"x"}`, `{"-1":"x"}`},
		{`{"s":"a\"}{:,b"}`, `{"s":"a\"}{:,b"}`},
		{`{{"brokerName":"b","queueId":0,"topic":"t"}:{"maxOffset":3}}`,
			`{"{\"brokerName\":\"b\",\"queueId\":0,\"topic\":\"t\"}":{"maxOffset":3}}`},
		// Whitespace inside an object key is dropped, so equal keys compare equal.
		{`{ { "topic" : "t" } : 1 }`, `{"{\"topic\":\"t\"}":1}`},
		// A key object holding a string with quotes and a nested map key.
		{`{{"topic":"a\"b","m":{1:2}}:0}`, `{"{\"topic\":\"a\\\"b\",\"m\":{\"1\":2}}":0}`},
		{`[{[1,2]:3}]`, `[{"[1,2]":3}]`},
	}
	for _, c := range cases {
		got, err := Normalize([]byte(c.in))
		if err != nil {
			t.Errorf("Normalize(%s): %v", c.in, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("Normalize(%s) = %s, want %s", c.in, got, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("Normalize(%s) = %s is not valid JSON", c.in, got)
		}
	}
}

func TestNormalizeErrors(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a"}`, `{"a":}`, `{"a":1,}x`, `[1 2]`, `{"a":1}}`, `"open`, `{{"a":1}}`,
		strings.Repeat("[", 300) + strings.Repeat("]", 300)} {
		if out, err := Normalize([]byte(in)); err == nil {
			t.Errorf("Normalize(%q) = %s, want an error", in, out)
		} else if !errors.Is(err, ErrMalformed) {
			t.Errorf("Normalize(%q): %v is not ErrMalformed", in, err)
		}
	}
}

// A TopicStatsTable as the Java broker writes it (fastjson, queue objects as keys).
const javaTopicStats = `{"offsetTable":{{"brokerName":"broker-b","queueId":1,"topic":"T"}:{"lastUpdateTimestamp":1700000000123,"maxOffset":7,"minOffset":2},` +
	`{"brokerName":"broker-a","queueId":1,"topic":"T"}:{"lastUpdateTimestamp":0,"maxOffset":5,"minOffset":0},` +
	`{"brokerName":"broker-a","queueId":0,"topic":"T"}:{"lastUpdateTimestamp":1700000000000,"maxOffset":4,"minOffset":1}},"topicPutTps":1.5}`

func TestDecodeTopicStats(t *testing.T) {
	ts, err := DecodeTopicStats([]byte(javaTopicStats))
	if err != nil {
		t.Fatal(err)
	}
	want := []TopicOffset{
		{protocol.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}, 1, 4, 1700000000000},
		{protocol.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 1}, 0, 5, 0},
		{protocol.MessageQueue{Topic: "T", BrokerName: "broker-b", QueueID: 1}, 2, 7, 1700000000123},
	}
	if !reflect.DeepEqual(ts.Queues, want) || ts.TopicPutTps != 1.5 {
		t.Fatalf("got %+v tps %v\nwant %+v", ts.Queues, ts.TopicPutTps, want)
	}
	// Empty table and missing fields decode to an empty, non-nil result.
	ts, err = DecodeTopicStats([]byte(`{"offsetTable":{}}`))
	if err != nil || ts.Queues == nil || len(ts.Queues) != 0 {
		t.Fatalf("empty table: %+v %v", ts, err)
	}
	for _, bad := range []string{``, `{"offsetTable":{"notAQueue":{}}}`, `{"offsetTable":{{"queueId":"x"}:{}}}`, `{"offsetTable":[}`} {
		if _, err := DecodeTopicStats([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeTopicStats(%q): %v, want ErrMalformed", bad, err)
		}
	}
}

func TestDecodeConsumeStats(t *testing.T) {
	body := `{"consumeTps":2.25,"offsetTable":{` +
		`{"brokerName":"a","queueId":1,"topic":"T"}:{"brokerOffset":10,"consumerOffset":4,"lastTimestamp":1700000000000,"pullOffset":6},` +
		`{"brokerName":"a","queueId":0,"topic":"%RETRY%g"}:{"brokerOffset":3,"consumerOffset":3,"lastTimestamp":0,"pullOffset":3},` +
		`{"brokerName":"a","queueId":0,"topic":"T"}:{"brokerOffset":8,"consumerOffset":8,"lastTimestamp":1700000000001,"pullOffset":8}}}`
	cs, err := DecodeConsumeStats([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []OffsetWrapper{
		{protocol.MessageQueue{Topic: "%RETRY%g", BrokerName: "a", QueueID: 0}, 3, 3, 3, 0, 0, 0},
		{protocol.MessageQueue{Topic: "T", BrokerName: "a", QueueID: 0}, 8, 8, 8, 1700000000001, 0, 0},
		{protocol.MessageQueue{Topic: "T", BrokerName: "a", QueueID: 1}, 10, 4, 6, 1700000000000, 6, 2},
	}
	if !reflect.DeepEqual(cs.Queues, want) || cs.ConsumeTps != 2.25 || cs.DiffTotal() != 6 {
		t.Fatalf("got %+v tps %v diff %d", cs.Queues, cs.ConsumeTps, cs.DiffTotal())
	}
}

func TestDecodeResetOffsetBody(t *testing.T) {
	offs, err := DecodeResetOffsetBody([]byte(`{"offsetTable":{{"brokerName":"a","queueId":1,"topic":"T"}:12,{"brokerName":"a","queueId":0,"topic":"T"}:0}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []QueueOffset{{protocol.MessageQueue{Topic: "T", BrokerName: "a", QueueID: 0}, 0}, {protocol.MessageQueue{Topic: "T", BrokerName: "a", QueueID: 1}, 12}}
	if !reflect.DeepEqual(offs, want) {
		t.Fatalf("got %+v", offs)
	}
}

func TestDecodeConnections(t *testing.T) {
	body := `{"connectionSet":[{"clientAddr":"10.0.0.2:5000","clientId":"10.0.0.2@2","language":"GO","version":317},` +
		`{"clientAddr":"10.0.0.1:5000","clientId":"10.0.0.1@1","language":0,"version":479}],` +
		`"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING",` +
		`"subscriptionTable":{"T":{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"a || b","subVersion":17,"tagsSet":["b","a"],"topic":"T"},` +
		`"%RETRY%g":{"expressionType":"TAG","subString":"*","subVersion":1,"tagsSet":[]}}}`
	cc, err := DecodeConsumerConnection([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	wantConns := []Connection{
		{"10.0.0.1@1", "10.0.0.1:5000", "JAVA", 479, "V5_3_3"},
		{"10.0.0.2@2", "10.0.0.2:5000", "GO", 317, "V4_5_2"},
	}
	if !reflect.DeepEqual(cc.Connections, wantConns) {
		t.Fatalf("connections %+v", cc.Connections)
	}
	if cc.ConsumeType != "CONSUME_PASSIVELY" || cc.MessageModel != "CLUSTERING" || cc.ConsumeFromWhere != "CONSUME_FROM_LAST_OFFSET" {
		t.Fatalf("enums %+v", cc)
	}
	if len(cc.Subscriptions) != 2 || cc.Subscriptions[0].Topic != "%RETRY%g" || cc.Subscriptions[1].SubString != "a || b" ||
		!reflect.DeepEqual(cc.Subscriptions[1].TagsSet, []string{"a", "b"}) {
		t.Fatalf("subscriptions %+v", cc.Subscriptions)
	}
	pc, err := DecodeProducerConnection([]byte(`{"connectionSet":[{"clientAddr":"h:1","clientId":"p@1","language":"JAVA","version":401}]}`))
	if err != nil || len(pc) != 1 || pc[0].VersionDesc != "V4_9_4" || pc[0].Language != "JAVA" {
		t.Fatalf("producer connections %+v %v", pc, err)
	}
}

func TestDecodeSmallBodies(t *testing.T) {
	groups, err := DecodeGroupList([]byte(`{"groupList":["b","a"]}`))
	if err != nil || !reflect.DeepEqual(groups, []string{"a", "b"}) {
		t.Fatalf("group list %v %v", groups, err)
	}
	kv, err := DecodeKVTable([]byte(`{"table":{"brokerVersionDesc":"V5_3_3","putTps":"1.0 2.0 3.0"}}`))
	if err != nil || kv["brokerVersionDesc"] != "V5_3_3" || kv["putTps"] != "1.0 2.0 3.0" {
		t.Fatalf("kv %v %v", kv, err)
	}
	topics, err := DecodeTopicList([]byte(`{"topicList":["T2","T1"]}`))
	if err != nil || !reflect.DeepEqual(topics, []string{"T1", "T2"}) {
		t.Fatalf("topics %v %v", topics, err)
	}
	subs, err := DecodeSubscriptionGroups([]byte(`{"dataVersion":{"counter":1},"subscriptionGroupTable":{` +
		`"g2":{"groupName":"g2","consumeEnable":false,"retryMaxTimes":3},"g1":{"retryQueueNums":2}}}`))
	if err != nil || len(subs) != 2 || subs[0].GroupName != "g1" || subs[0].RetryQueueNums != 2 ||
		subs[1].ConsumeEnable || subs[1].RetryMaxTimes != 3 {
		t.Fatalf("subscription groups %+v %v", subs, err)
	}
}

func TestVersionDesc(t *testing.T) {
	for v, want := range map[int32]string{0: "V3_0_0_SNAPSHOT", 15: "V3_0_0_FINAL", 37: "V3_0_11", 317: "V4_5_2",
		401: "V4_9_4", 479: "V5_3_3", 611: "V5_9_9", 612: "HIGHER_VERSION", 9999: "HIGHER_VERSION", -1: "-1"} {
		if got := VersionDesc(v); got != want {
			t.Errorf("VersionDesc(%d) = %s, want %s", v, got, want)
		}
	}
}

func TestProperties(t *testing.T) {
	in := "# comment\n! also\nbrokerName=broker-a\nlisten : 10911\n  spaced   value with spaces\n" +
		"multi=one\\\n    two\nesc\\=key=a\\tb\\u0041\nempty=\n"
	p, err := ParseProperties(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"brokerName": "broker-a", "listen": "10911", "spaced": "value with spaces",
		"multi": "onetwo", "esc=key": "a\tbA", "empty": ""}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got %q", p)
	}
	if _, err := ParseProperties("k=\\u12"); err == nil {
		t.Fatal("short \\u escape accepted")
	}
	if got := FormatProperties(map[string]string{"b": "2", "a": "1"}); got != "a=1\nb=2\n" {
		t.Fatalf("FormatProperties = %q", got)
	}
	back, err := ParseProperties(FormatProperties(map[string]string{"x": "1", "y": "two words"}))
	if err != nil || back["x"] != "1" || back["y"] != "two words" {
		t.Fatalf("round trip %v %v", back, err)
	}
}

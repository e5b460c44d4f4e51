package broker_test

import (
	"testing"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

func sendBackExt(group string, phys int64, delayLevel, maxTimes int32) remoting.ExtFields {
	ext := remoting.ExtFields{"group": group, "originMsgId": "", "originTopic": "T", "unitMode": "false", "bname": "broker-a"}
	ext.SetInt64("offset", phys)
	ext.SetInt32("delayLevel", delayLevel)
	ext.SetInt32("maxReconsumeTimes", maxTimes)
	return ext
}

// onlyRecord pulls queue 0 of topic and expects exactly one record.
func (e *env) onlyRecord(topic string) record.Record {
	e.t.Helper()
	resp := e.pull("g", topic, 0, 0, 32)
	wantCode(e.t, "pull "+topic, resp, protocol.RespSuccess)
	recs := decodeAll(e.t, resp.Body)
	if len(recs) != 1 {
		e.t.Fatalf("%s holds %d records", topic, len(recs))
	}
	return recs[0]
}

func (e *env) maxOffset(topic string, queueID int32) int64 {
	e.t.Helper()
	return extInt(e.t, e.call(protocol.ReqGetMaxOffset, remoting.ExtFields{"topic": topic, "queueId": itoa(int64(queueID))}, nil), "offset")
}

func prop(r record.Record, name string) string {
	v, _ := record.PropertyBytes(r.Properties, name)
	return string(v)
}

func TestConsumerSendMsgBackRetriesThenDeadLetters(t *testing.T) {
	e := startEnv(t, nil) // delay levels 20/20/30/40 ms
	e.createTopic("T", 1)
	sent := e.mustSend("T", 0, "payload", props(record.PropertyTags, "A"))
	orig := e.onlyRecord("T")
	retry := protocol.RetryTopic("g")

	// First failure: level 0 means 3 + reconsumeTimes, so the message waits in
	// the schedule topic's queue 2, then lands in %RETRY%g.
	wantCode(t, "send back", e.call(protocol.ReqConsumerSendMsgBack, sendBackExt("g", orig.PhysicalOffset, 0, 2), nil), protocol.RespSuccess)
	if e.maxOffset(protocol.ScheduleTopic, 2) != 1 {
		t.Fatal("the retried message is not in the schedule queue of level 3")
	}
	eventually(t, "delivery to the retry topic", func() bool { return e.maxOffset(retry, 0) == 1 })
	r1 := e.onlyRecord(retry)
	if string(r1.Body) != "payload" || r1.ReconsumeTimes != 1 || prop(r1, broker.PropertyRetryTopic) != "T" ||
		prop(r1, record.PropertyTags) != "A" || prop(r1, broker.PropertyOriginMessageID) != sent.ExtFields["transactionId"] {
		t.Fatalf("retry record: body %q reconsume %d props %q", r1.Body, r1.ReconsumeTimes, r1.Properties)
	}
	for _, p := range []string{record.PropertyDelayTimeLevel, record.PropertyRealTopic, record.PropertyRealQueueID} {
		if prop(r1, p) != "" {
			t.Fatalf("retry record keeps %s: %q", p, r1.Properties)
		}
	}

	// Second failure (reconsumeTimes 1 < 2): retried again, from the retry topic.
	wantCode(t, "send back 2", e.call(protocol.ReqConsumerSendMsgBack, sendBackExt("g", r1.PhysicalOffset, 0, 2), nil), protocol.RespSuccess)
	eventually(t, "second delivery", func() bool { return e.maxOffset(retry, 0) == 2 })
	r2 := decodeAll(t, e.pull("g", retry, 0, 1, 1).Body)[0]
	if r2.ReconsumeTimes != 2 || prop(r2, broker.PropertyRetryTopic) != "T" {
		t.Fatalf("second retry: reconsume %d props %q", r2.ReconsumeTimes, r2.Properties)
	}

	// Third failure: reconsumeTimes 2 reached the max → %DLQ%g at once.
	wantCode(t, "send back 3", e.call(protocol.ReqConsumerSendMsgBack, sendBackExt("g", r2.PhysicalOffset, 0, 2), nil), protocol.RespSuccess)
	dead := e.onlyRecord(protocol.DLQTopic("g"))
	if string(dead.Body) != "payload" || dead.ReconsumeTimes != 3 {
		t.Fatalf("dead letter: body %q reconsume %d", dead.Body, dead.ReconsumeTimes)
	}
	if _, ok := e.ns.TopicRoute(protocol.DLQTopic("g")); !ok {
		eventually(t, "DLQ route", func() bool { _, ok := e.ns.TopicRoute(protocol.DLQTopic("g")); return ok })
	}
}

func TestSendMsgBackNegativeLevelGoesToDLQ(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	e.mustSend("T", 0, "x", "")
	orig := e.onlyRecord("T")
	wantCode(t, "send back", e.call(protocol.ReqConsumerSendMsgBack, sendBackExt("g", orig.PhysicalOffset, -1, 16), nil), protocol.RespSuccess)
	e.onlyRecord(protocol.DLQTopic("g"))
	wantCode(t, "unknown offset", e.call(protocol.ReqConsumerSendMsgBack, sendBackExt("g", 1<<40, 0, 16), nil), protocol.RespSystemError)
}

// The Go client's fallback when CONSUMER_SEND_MSG_BACK fails: SEND_MESSAGE to
// %RETRY%group itself, with DELAY and reconsumeTimes set.
func TestClientSideRetrySend(t *testing.T) {
	e := startEnv(t, nil)
	retry := protocol.RetryTopic("g")
	h := sendHeader(retry, 0, props(record.PropertyDelayTimeLevel, "1", broker.PropertyRetryTopic, "T"))
	h.ProducerGroup, h.ReconsumeTimes, h.MaxReconsumeTimes = "CLIENT_INNER_PRODUCER", 1, 16
	wantCode(t, "retry send", e.call(protocol.ReqSendMessage, h.ExtFields(false), []byte("r")), protocol.RespSuccess)
	eventually(t, "delayed delivery", func() bool { return e.maxOffset(retry, 0) == 1 })

	// Java's rule: reconsumeTimes > max goes to the DLQ; = max is one more retry.
	h.ReconsumeTimes = 16
	wantCode(t, "retry send at max", e.call(protocol.ReqSendMessage, h.ExtFields(false), []byte("m")), protocol.RespSuccess)
	eventually(t, "delayed delivery at max", func() bool { return e.maxOffset(retry, 0) == 2 })
	if e.maxOffset(protocol.DLQTopic("g"), 0) != 0 {
		t.Fatal("reconsumeTimes == max went to the DLQ")
	}
	h.ReconsumeTimes = 17
	wantCode(t, "retry send past max", e.call(protocol.ReqSendMessage, h.ExtFields(false), []byte("d")), protocol.RespSuccess)
	if r := e.onlyRecord(protocol.DLQTopic("g")); string(r.Body) != "d" || prop(r, record.PropertyDelayTimeLevel) != "" {
		t.Fatalf("dead letter %q props %q", r.Body, r.Properties)
	}
	// A header without maxReconsumeTimes uses the broker's (16).
	ext := h.ExtFields(false)
	delete(ext, "maxReconsumeTimes")
	ext["reconsumeTimes"] = "16"
	wantCode(t, "retry send at the broker's max", e.call(protocol.ReqSendMessage, ext, []byte("n")), protocol.RespSuccess)
	eventually(t, "delayed delivery at the broker's max", func() bool { return e.maxOffset(retry, 0) == 3 })
	if e.maxOffset(protocol.DLQTopic("g"), 0) != 1 {
		t.Fatal("reconsumeTimes == the broker's max went to the DLQ")
	}
}

func TestDelayedMessageFromProducer(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 2)
	resp := e.mustSend("T", 1, "later", props(record.PropertyDelayTimeLevel, "99")) // capped at the last level
	if extInt(t, resp, "queueId") != 1 {
		t.Fatalf("reply queueId %v", resp.ExtFields)
	}
	if e.maxOffset("T", 1) != 0 || e.maxOffset(protocol.ScheduleTopic, 3) != 1 {
		t.Fatal("a delayed message must wait in the schedule topic's last level")
	}
	eventually(t, "delayed delivery", func() bool { return e.maxOffset("T", 1) == 1 })
	r := decodeAll(t, e.pull("g", "T", 1, 0, 1).Body)[0]
	if string(r.Body) != "later" || prop(r, record.PropertyDelayTimeLevel) != "" || prop(r, record.PropertyUniqKey) != resp.ExtFields["transactionId"] {
		t.Fatalf("delivered %q props %q", r.Body, r.Properties)
	}
}

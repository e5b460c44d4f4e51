package pop_test

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/pop"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

func decodeBody(t *testing.T, body []byte) []record.Record {
	t.Helper()
	out, err := record.DecodeAll(body, true)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// popRemoting pops over POP_MESSAGE until n messages came.
func (e *env) popRemoting(h protocol.PopMessageRequestHeader, n int) ([]record.Record, *remoting.Command) {
	e.t.Helper()
	var out []record.Record
	var last *remoting.Command
	eventually(e.t, "popped messages", func() bool {
		resp := e.call(protocol.ReqPopMessage, h.Fields(), nil)
		switch resp.Code {
		case protocol.RespSuccess:
			out = append(out, decodeBody(e.t, resp.Body)...)
			last = resp
		case protocol.RespPullNotFound, protocol.RespPollingTimeout:
		default:
			e.t.Fatalf("pop: %d %q", resp.Code, resp.Remark)
		}
		return len(out) >= n
	})
	return out, last
}

func popCK(t *testing.T, r record.Record) string {
	t.Helper()
	v, ok := r.Property(protocol.PropertyPopCK)
	if !ok {
		t.Fatalf("message %s without POP_CK", r.Body)
	}
	return string(v)
}

// POP_MESSAGE, ACK_MESSAGE, BATCH_ACK_MESSAGE and
// CHANGE_MESSAGE_INVISIBLETIME over remoting, beside a classic pull group
// on the same topic that sees every message.
func TestRemotingPopAckAndPullGroup(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	for i := range 4 {
		e.send("T", 0, strconv.Itoa(i), "")
	}
	h := protocol.PopMessageRequestHeader{ConsumerGroup: "pg", Topic: "T", QueueID: -1, MaxMsgNums: 32,
		InvisibleTime: 60000, BornTime: time.Now().UnixMilli(), InitMode: protocol.ConsumeInitMin}
	recs, resp := e.popRemoting(h, 4)
	if len(recs) != 4 {
		t.Fatalf("popped %d", len(recs))
	}
	if resp.ExtFields["startOffsetInfo"] != "0 0 0" || resp.ExtFields["msgOffsetInfo"] != "0 0 0,1,2,3" {
		t.Fatalf("response header %v", resp.ExtFields)
	}
	// 0: ACK_MESSAGE; 1, 2: BATCH_ACK; 3: CHANGE_INVISIBLETIME to 50 ms,
	// then it comes back.
	ck0 := popCK(t, recs[0])
	ack := protocol.AckMessageRequestHeader{ConsumerGroup: "pg", Topic: "T", QueueID: 0, ExtraInfo: ck0, Offset: 0}
	if r := e.call(protocol.ReqAckMessage, ack.Fields(), nil); r.Code != protocol.RespSuccess {
		t.Fatalf("ack: %d %q", r.Code, r.Remark)
	}
	hd, err := pop.ParseHandle(ck0)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(protocol.BatchAckMessageRequestBody{BrokerName: hd.BrokerName, Acks: []protocol.BatchAck{{
		ConsumerGroup: "pg", Topic: "T", Retry: "0", StartOffset: hd.StartOffset, QueueID: 0, ReviveQueueID: hd.ReviveQid,
		PopTime: hd.PopTime, InvisibleTime: hd.InvisibleTime, BitSet: []byte{0b110}}}})
	if r := e.call(protocol.ReqBatchAckMessage, nil, body); r.Code != protocol.RespSuccess {
		t.Fatalf("batch ack: %d %q", r.Code, r.Remark)
	}
	ci := protocol.ChangeInvisibleTimeRequestHeader{ConsumerGroup: "pg", Topic: "T", QueueID: 0,
		ExtraInfo: popCK(t, recs[3]), Offset: 3, InvisibleTime: 50}
	if r := e.call(protocol.ReqChangeMessageInvisibleTime, ci.Fields(), nil); r.Code != protocol.RespSuccess {
		t.Fatalf("change invisible: %d %q", r.Code, r.Remark)
	}
	h.PollTime = 2000
	again, _ := e.popRemoting(h, 1)
	if len(again) != 1 || string(again[0].Body) != "3" || again[0].ReconsumeTimes != 1 || string(again[0].Topic) != "T" {
		t.Fatalf("redelivered %d messages, first %s (reconsume %d, topic %s)", len(again), again[0].Body,
			again[0].ReconsumeTimes, again[0].Topic)
	}
	rh, _ := pop.ParseHandle(popCK(t, again[0]))
	if !rh.Retry {
		t.Fatalf("redelivery's handle %q is not the retry topic's", popCK(t, again[0]))
	}
	ack = protocol.AckMessageRequestHeader{ConsumerGroup: "pg", Topic: "T", QueueID: rh.QueueID, ExtraInfo: popCK(t, again[0]), Offset: rh.Offset}
	if r := e.call(protocol.ReqAckMessage, ack.Fields(), nil); r.Code != protocol.RespSuccess {
		t.Fatalf("ack of the retry: %d %q", r.Code, r.Remark)
	}
	h.PollTime = 300
	if r := e.call(protocol.ReqPopMessage, h.Fields(), nil); r.Code != protocol.RespPollingTimeout {
		t.Fatalf("pop after all acks: %d %q (%d bytes)", r.Code, r.Remark, len(r.Body))
	}

	// A classic pull group reads the same topic from its own offset.
	var pulled []string
	pull := remoting.ExtFields{"consumerGroup": "pullg", "topic": "T", "queueId": "0", "queueOffset": "0",
		"maxMsgNums": "32", "sysFlag": "0", "commitOffset": "0", "suspendTimeoutMillis": "0", "subVersion": "0"}
	pr := e.call(protocol.ReqPullMessage, pull, nil)
	if pr.Code != protocol.RespSuccess {
		t.Fatalf("pull: %d %q", pr.Code, pr.Remark)
	}
	for _, r := range decodeBody(t, pr.Body) {
		pulled = append(pulled, string(r.Body))
	}
	sort.Strings(pulled)
	if strings.Join(pulled, ",") != "0,1,2,3" {
		t.Fatalf("pull group read %v", pulled)
	}
}

// PEEK_MESSAGE reads without leasing; NOTIFICATION tells a message is
// there; POLLING_INFO counts waiting pops.
func TestRemotingPeekNotificationPollingInfo(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	n := protocol.NotificationRequestHeader{ConsumerGroup: "g", Topic: "T", QueueID: -1, PollTime: 0}
	if r := e.call(protocol.ReqNotification, n.Fields(), nil); r.Code != protocol.RespSuccess || r.ExtFields["hasMsg"] != "false" {
		t.Fatalf("notification on an empty topic: %d %v", r.Code, r.ExtFields)
	}
	e.send("T", 0, "m", "")
	if r := e.call(protocol.ReqNotification, n.Fields(), nil); r.ExtFields["hasMsg"] != "true" {
		t.Fatalf("notification: %v", r.ExtFields)
	}
	pk := protocol.PeekMessageRequestHeader{ConsumerGroup: "g", Topic: "T", QueueID: 0, MaxMsgNums: 4}
	for range 2 {
		r := e.call(protocol.ReqPeekMessage, pk.Fields(), nil)
		if r.Code != protocol.RespSuccess || len(decodeBody(t, r.Body)) != 1 {
			t.Fatalf("peek: %d %q", r.Code, r.Remark)
		}
	}
	pi := protocol.PollingInfoRequestHeader{ConsumerGroup: "g", Topic: "T", QueueID: 0}
	if r := e.call(protocol.ReqPollingInfo, pi.Fields(), nil); r.Code != protocol.RespSuccess || r.ExtFields["pollingNum"] != "0" {
		t.Fatalf("polling info: %d %v", r.Code, r.ExtFields)
	}
}

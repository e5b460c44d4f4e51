package broker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// TestEmptyBodiesAsJava (issue 29 item 5) over engine/store: Java's broker
// refuses a single send without body bytes (its remoting decoder leaves the
// body null and its store hook refuses a null body: MESSAGE_ILLEGAL), but
// stores a batch's empty items with BODYLENGTH 0 and BODYCRC 0. Those
// records are pulled, viewed by id, found by key, sent back for a retry
// (through the schedule topic) and survive a restart.
func TestEmptyBodiesAsJava(t *testing.T) {
	ns := startNamesrv(t)
	dir := t.TempDir()
	e := startRealEnv(t, dir, flush.Kinds()[0], ns.Addr())
	e.ns = ns
	e.createTopic("T", 1)

	for _, v2 := range []bool{false, true} {
		code := protocol.ReqSendMessage
		if v2 {
			code = protocol.ReqSendMessageV2
		}
		resp := e.call(code, sendHeader("T", 0, "").ExtFields(v2), nil)
		wantCode(t, "single send without body", resp, protocol.RespMessageIllegal)
		if !strings.Contains(resp.Remark, "body is empty") {
			t.Fatalf("remark %q", resp.Remark)
		}
	}

	var batch []byte
	for _, it := range []record.BatchItem{
		{Flag: 0, Body: []byte("full"), Properties: props(record.PropertyKeys, "kfull")},
		{Flag: 1, Body: nil, Properties: props(record.PropertyKeys, "kempty", record.PropertyTags, "E")},
		{Flag: 2, Body: []byte{}},
	} {
		batch = record.AppendBatchItem(batch, it)
	}
	h := sendHeader("T", 0, "")
	h.Batch = true
	br := e.call(protocol.ReqSendBatchMessage, h.ExtFields(true), batch)
	wantCode(t, "batch with empty items", br, protocol.RespSuccess)
	ids := strings.Split(br.ExtFields["msgId"], ",")
	if len(ids) != 3 {
		t.Fatalf("batch answered %v", br.ExtFields)
	}
	eventually(t, "dispatch", func() bool { return e.maxOffset("T", 0) == 3 })

	checkPulled := func(e *env, what string) {
		t.Helper()
		recs := decodeAll(t, e.pull("g", "T", 0, 0, 32).Body) // checks every BODYCRC
		if len(recs) != 3 || string(recs[0].Body) != "full" {
			t.Fatalf("%s: pulled %d records", what, len(recs))
		}
		for i, r := range recs[1:] {
			if len(r.Body) != 0 || r.BodyCRC != 0 || r.Flag != int32(i+1) {
				t.Fatalf("%s: record %d body %q crc %#x flag %d", what, i+1, r.Body, r.BodyCRC, r.Flag)
			}
		}
		if tag, _ := recs[1].Property(record.PropertyTags); string(tag) != "E" {
			t.Fatalf("%s: tags %q", what, tag)
		}
	}
	checkPulled(e, "before restart")

	_, phys, err := record.ParseOffsetMsgID(ids[1])
	if err != nil {
		t.Fatal(err)
	}
	view := e.call(protocol.ReqViewMessageByID, remoting.ExtFields{"offset": itoa(phys)}, nil)
	wantCode(t, "view", view, protocol.RespSuccess)
	if got := decodeAll(t, view.Body); len(got) != 1 || len(got[0].Body) != 0 || got[0].BodyCRC != 0 {
		t.Fatalf("viewed %v", got)
	}
	q := e.call(protocol.ReqQueryMessage, remoting.ExtFields{"topic": "T", "key": "kempty", "maxNum": "8", "beginTimestamp": "0", "endTimestamp": "9999999999999"}, nil)
	wantCode(t, "query by key", q, protocol.RespSuccess)
	if got := decodeAll(t, q.Body); len(got) != 1 || len(got[0].Body) != 0 || got[0].Flag != 1 {
		t.Fatalf("queried %v", got)
	}

	// A retry of the empty message goes through the schedule topic and
	// arrives in the retry topic still empty.
	wantCode(t, "send back", e.call(protocol.ReqConsumerSendMsgBack, sendBackExt("g", phys, 1, 16), nil), protocol.RespSuccess)
	retry := protocol.RetryTopic("g")
	eventually(t, "retry delivery", func() bool { return e.maxOffset(retry, 0) == 1 })
	recs := decodeAll(t, e.pull("g", retry, 0, 0, 32).Body)
	if len(recs) != 1 || len(recs[0].Body) != 0 || recs[0].BodyCRC != 0 || recs[0].ReconsumeTimes != 1 {
		t.Fatalf("retry topic holds %v", recs)
	}

	if err := e.b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	e2 := startRealEnv(t, dir, flush.Kinds()[0], ns.Addr())
	checkPulled(e2, "after restart")
	if got := decodeAll(t, e2.pull("g", retry, 0, 0, 32).Body); len(got) != 1 || len(got[0].Body) != 0 {
		t.Fatalf("retry topic after restart: %v", got)
	}
}

// TestEmptyReplyPushedNotStored: a reply without body (what the official Go
// client's consumer.CreateReplyMessage builds) is pushed to the requester
// and answered SUCCESS, as Java's ReplyMessageProcessor does before it
// tries to store; Java's store refuses the null body, so the answer keeps
// msgId "0" and the reply topic stays empty.
func TestEmptyReplyPushedNotStored(t *testing.T) {
	e := startEnv(t, nil)
	topic := protocol.ReplyTopic("DefaultCluster")
	r := newRequester(t, e, "127.0.0.1@req", protocol.RespSuccess)
	for _, code := range []int32{protocol.ReqSendReplyMessage, protocol.ReqSendReplyMessageV2} {
		h := sendHeader(topic, 0, replyProps("127.0.0.1@req", "corr-empty"))
		h.SysFlag = record.FlagCompressed // a compressed flag on an empty body changes nothing here
		resp := e.call(code, h.ExtFields(code == protocol.ReqSendReplyMessageV2), nil)
		wantCode(t, "empty reply", resp, protocol.RespSuccess)
		if resp.ExtFields["msgId"] != "0" || resp.ExtFields["queueOffset"] != "0" {
			t.Fatalf("empty reply answered %v", resp.ExtFields)
		}
		select {
		case push := <-r.pushes:
			if len(push.Body) != 0 || record.DecodeProperties(push.ExtFields["properties"])[broker.PropertyCorrelationID] != "corr-empty" ||
				push.ExtFields["sysFlag"] != itoa(int64(record.FlagCompressed)) {
				t.Fatalf("pushed %v body %q", push.ExtFields, push.Body)
			}
		case <-time.After(waitLimit):
			t.Fatal("empty reply not pushed")
		}
	}
	// A reply with a body is still stored: the reply topic holds only it.
	h := sendHeader(topic, 0, replyProps("127.0.0.1@req", "corr-full"))
	wantCode(t, "reply", e.call(protocol.ReqSendReplyMessage, h.ExtFields(false), []byte("full")), protocol.RespSuccess)
	select {
	case <-r.pushes:
	case <-time.After(waitLimit):
		t.Fatal("reply not pushed")
	}
	if recs := decodeAll(t, e.pull("g", topic, 0, 0, 32).Body); len(recs) != 1 || string(recs[0].Body) != "full" {
		t.Fatalf("reply topic holds %d records", len(recs))
	}
	// A reply's other checks still come before any push.
	bad := e.call(protocol.ReqSendReplyMessage, sendHeader("bad topic!", 0, replyProps("127.0.0.1@req", "c")).ExtFields(false), nil)
	wantCode(t, "empty reply to a bad topic", bad, protocol.RespInvalidParameter)
	select {
	case p := <-r.pushes:
		t.Fatalf("a refused reply was pushed: %v", p.ExtFields)
	default:
	}
}

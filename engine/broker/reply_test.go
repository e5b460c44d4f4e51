package broker_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// sqlHeartbeat registers client id's consumer group on topic T with one
// subscription.
func sqlHeartbeat(t *testing.T, e *env, id, group, expr, typ string) {
	t.Helper()
	hb := broker.HeartbeatData{ClientID: id, ConsumerDataSet: []broker.ConsumerData{{
		GroupName: group, ConsumeType: "CONSUME_PASSIVELY", MessageModel: broker.Clustering,
		SubscriptionDataSet: []broker.SubscriptionData{{Topic: "T", SubString: expr, TagsSet: []string{}, SubVersion: time.Now().UnixNano(), ExpressionType: typ}},
	}}}
	body, err := json.Marshal(hb)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "heartbeat "+group, e.call(protocol.ReqHeartBeat, nil, body), protocol.RespSuccess)
}

// bodies pulls queue 0 of T from offset 0 and returns the bodies found.
func bodies(t *testing.T, e *env, ext remoting.ExtFields) (int32, []string) {
	t.Helper()
	resp := e.call(protocol.ReqPullMessage, ext, nil)
	var out []string
	if resp.Code == protocol.RespSuccess {
		for _, r := range decodeAll(t, resp.Body) {
			out = append(out, string(r.Body))
		}
	}
	return resp.Code, out
}

// sendSQLMessages sends m0..m5 with properties a and b (and tags) to T.
func sendSQLMessages(e *env) {
	for i, kv := range [][]string{
		{"a", "6", "b", "x", record.PropertyTags, "TagA"}, // m0 matches a > 5 AND b = 'x'
		{"a", "5", "b", "x", record.PropertyTags, "TagB"}, // m1 a too small
		{"a", "9", "b", "y", record.PropertyTags, "TagA"}, // m2 b differs
		{"b", "x"},             // m3 a absent: NULL
		{"a", "abc", "b", "x"}, // m4 a not a number: evaluation error
		{"a", "100", "b", "x", record.PropertyTags, "TagB"}, // m5 matches
	} {
		e.mustSend("T", 0, "m"+itoa(int64(i)), props(kv...))
	}
}

func testSQL92Pulls(t *testing.T, e *env) {
	e.createTopic("T", 1)
	sendSQLMessages(e)
	const expr = "a > 5 AND b = 'x'"
	sqlHeartbeat(t, e, "c1", "gsql", expr, broker.ExpressionSQL92)
	sqlHeartbeat(t, e, "c2", "gtag", "TagA", broker.ExpressionTag)

	// The heartbeat's subscription filters pulls without the subscription
	// flag (engine/store dispatches to the consume queue after the send is
	// answered: wait for all six).
	eventually(t, "six messages readable", func() bool {
		_, all := bodies(t, e, pullExt("nofilter", "T", 0, 0, 32, 0, 0))
		return len(all) == 6
	})
	code, got := bodies(t, e, pullExt("gsql", "T", 0, 0, 32, 0, 0))
	if code != protocol.RespSuccess || strings.Join(got, ",") != "m0,m5" {
		t.Fatalf("SQL92 group pulled %d %v, want m0,m5", code, got)
	}
	// The same expression in the request (subscription flag) filters alike,
	// and a different one is compiled for the request.
	ext := pullExt("gsql", "T", 0, 0, 32, protocol.PullFlagSubscription, 0)
	ext["subscription"], ext["expressionType"] = expr, broker.ExpressionSQL92
	if code, got = bodies(t, e, ext); code != protocol.RespSuccess || strings.Join(got, ",") != "m0,m5" {
		t.Fatalf("SQL92 pull with subscription %d %v", code, got)
	}
	ext["subscription"] = "a IS NULL OR TAGS IN ('TagB')"
	if code, got = bodies(t, e, ext); code != protocol.RespSuccess || strings.Join(got, ",") != "m1,m3,m5" {
		t.Fatalf("SQL92 pull with another expression %d %v", code, got)
	}
	// Nothing matches in range: retry at once past the scanned units.
	ext["subscription"] = "a = 'none'"
	if code, _ = bodies(t, e, ext); code != protocol.RespPullRetryImmediately {
		t.Fatalf("no match: code %d", code)
	}
	// Tags keep working beside SQL92.
	if code, got = bodies(t, e, pullExt("gtag", "T", 0, 0, 32, 0, 0)); strings.Join(got, ",") != "m0,m2" {
		t.Fatalf("tag group pulled %d %v", code, got)
	}
	// A bad expression: in the request SUBSCRIPTION_PARSE_FAILED; from a
	// heartbeat (which succeeds) FILTER_DATA_NOT_EXIST, as Java answers.
	ext["subscription"] = "a > 'x'"
	if code, _ = bodies(t, e, ext); code != protocol.RespSubscriptionParseFailed {
		t.Fatalf("bad request expression: code %d", code)
	}
	sqlHeartbeat(t, e, "c3", "gbad", "a >>> 5", broker.ExpressionSQL92)
	resp := e.call(protocol.ReqPullMessage, pullExt("gbad", "T", 0, 0, 32, 0, 0), nil)
	wantCode(t, "bad heartbeat expression", resp, protocol.RespFilterDataNotExist)
	if !strings.Contains(resp.Remark, "filter data is not exist") {
		t.Fatalf("remark %q", resp.Remark)
	}
}

func TestSQL92PullMemstore(t *testing.T) {
	testSQL92Pulls(t, startEnv(t, nil))
}

func TestSQL92PullRealStore(t *testing.T) {
	for _, pol := range flush.Kinds() {
		t.Run("flush="+string(pol), func(t *testing.T) {
			ns := startNamesrv(t)
			e := startRealEnv(t, t.TempDir(), pol, ns.Addr())
			e.ns = ns
			testSQL92Pulls(t, e)
		})
	}
}

func TestSQL92Disabled(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) { c.EnablePropertyFilter = false })
	e.createTopic("T", 1)
	sendSQLMessages(e)
	sqlHeartbeat(t, e, "c1", "gsql", "a > 5", broker.ExpressionSQL92)
	resp := e.call(protocol.ReqPullMessage, pullExt("gsql", "T", 0, 0, 32, 0, 0), nil)
	wantCode(t, "disabled", resp, protocol.RespSystemError)
	if resp.Remark != "The broker does not support consumer to filter message by SQL92" {
		t.Fatalf("remark %q", resp.Remark)
	}
	if _, got := bodies(t, e, pullExt("other", "T", 0, 0, 32, 0, 0)); len(got) != 6 {
		t.Fatalf("unfiltered pull found %v", got)
	}
	body := `{"clientId":"c1","group":"gsql","subscriptionData":{"topic":"T","subString":"a > 5","expressionType":"SQL92"}}`
	resp = e.call(protocol.ReqCheckClientConfig, nil, []byte(body))
	wantCode(t, "check disabled", resp, protocol.RespSystemError)
}

func TestCheckClientConfig(t *testing.T) {
	e := startEnv(t, nil)
	check := func(typ, expr string, code int32) *remoting.Command {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"clientId": "c", "group": "g",
			"subscriptionData": map[string]any{"topic": "T", "subString": expr, "expressionType": typ, "subVersion": 1}})
		resp := e.call(protocol.ReqCheckClientConfig, nil, body)
		wantCode(t, typ+" "+expr, resp, code)
		return resp
	}
	check("TAG", "a || b", protocol.RespSuccess)
	check("TAG", "a > (((", protocol.RespSuccess) // tags are not checked
	check("SQL92", "a > 5 AND b IN ('x')", protocol.RespSuccess)
	if resp := check("SQL92", "a > 'x'", protocol.RespSubscriptionParseFailed); resp.Remark == "" {
		t.Fatal("parse failure without remark")
	}
	check("SQL92", "", protocol.RespSubscriptionParseFailed)
	check("CLASS", "x", protocol.RespSubscriptionParseFailed)
	wantCode(t, "no body", e.call(protocol.ReqCheckClientConfig, nil, nil), protocol.RespSuccess)
	wantCode(t, "bad body", e.call(protocol.ReqCheckClientConfig, nil, []byte("{")), protocol.RespSystemError)
}

// requester is a client that heartbeats as a producer and answers pushed
// replies with code (recording them).
type requester struct {
	c      *remoting.Client
	pushes chan *remoting.Command
}

func newRequester(t *testing.T, e *env, id string, code int32) *requester {
	t.Helper()
	r := &requester{pushes: make(chan *remoting.Command, 16)}
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	ccfg.RequestProcessor = remoting.ProcessorFunc(func(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
		if req.Code != protocol.ReqPushReplyMessageToClient {
			return nil, nil
		}
		r.pushes <- req
		return remoting.NewResponse(code, "test answer"), nil
	})
	r.c = remoting.NewClient(ccfg)
	t.Cleanup(func() { _ = r.c.Close() })
	hb, _ := json.Marshal(broker.HeartbeatData{ClientID: id, ProducerDataSet: []broker.ProducerData{{GroupName: "req-group"}}})
	wantCode(t, "requester heartbeat", callWith(t, r.c, e.b.Addr(), protocol.ReqHeartBeat, nil, hb), protocol.RespSuccess)
	return r
}

func replyProps(to, corr string) string {
	kv := []string{broker.PropertyCorrelationID, corr, broker.PropertyMessageType, broker.ReplyMessageType,
		broker.PropertyMessageTTL, "3", record.PropertyCluster, "DefaultCluster"}
	if to != "" {
		kv = append(kv, broker.PropertyReplyToClient, to)
	}
	return props(kv...)
}

func TestReplyPushedAndStored(t *testing.T) {
	e := startEnv(t, nil)
	topic := protocol.ReplyTopic("DefaultCluster")
	r := newRequester(t, e, "127.0.0.1@req", protocol.RespSuccess)

	for _, code := range []int32{protocol.ReqSendReplyMessage, protocol.ReqSendReplyMessageV2} {
		corr := "corr-" + itoa(int64(code))
		h := sendHeader(topic, 0, replyProps("127.0.0.1@req", corr))
		resp := e.call(code, h.ExtFields(code == protocol.ReqSendReplyMessageV2), []byte("answer"))
		wantCode(t, "reply", resp, protocol.RespSuccess)
		if _, _, err := record.ParseOffsetMsgID(resp.ExtFields["msgId"]); err != nil {
			t.Fatalf("stored reply msgId %q: %v", resp.ExtFields["msgId"], err)
		}
		var push *remoting.Command
		select {
		case push = <-r.pushes:
		case <-time.After(waitLimit):
			t.Fatal("no reply pushed")
		}
		x := push.ExtFields
		if string(push.Body) != "answer" || x["topic"] != topic || x["producerGroup"] != "pg" || x["queueId"] != "0" ||
			x["bornHost"] == "" || x["storeHost"] != e.b.Addr() || x["storeTimestamp"] == "" || x["bornTimestamp"] != itoa(h.BornTimestamp) {
			t.Fatalf("push %v body %q", x, push.Body)
		}
		pm := record.DecodeProperties(x["properties"])
		if pm[broker.PropertyCorrelationID] != corr || pm[broker.PropertyPushReplyTime] == "" || pm[broker.PropertyMessageType] != "reply" {
			t.Fatalf("pushed properties %v", pm)
		}
	}
	// Both replies are stored in the reply topic.
	resp := e.pull("g", topic, 0, 0, 32)
	if recs := decodeAll(t, resp.Body); len(recs) != 2 || string(recs[0].Body) != "answer" {
		t.Fatalf("reply topic holds %d records", len(recs))
	}
	// The reply topic is routable: it was registered with the name server.
	route := callWith(t, e.client, e.ns.Addr(), protocol.ReqGetRouteInfoByTopic, remoting.ExtFields{"topic": topic}, nil)
	wantCode(t, "reply topic route", route, protocol.RespSuccess)
}

func TestReplyFailures(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) { c.StoreReplyMessage = false })
	topic := protocol.ReplyTopic("DefaultCluster")
	newRequester(t, e, "127.0.0.1@refuser", protocol.RespSystemError)
	ok := newRequester(t, e, "127.0.0.1@ok", protocol.RespSuccess)

	send := func(to string) *remoting.Command {
		return e.call(protocol.ReqSendReplyMessage, sendHeader(topic, 0, replyProps(to, "c")).ExtFields(false), []byte("x"))
	}
	cases := []struct{ to, remark string }{
		{"", "reply message properties[REPLY_TO_CLIENT] is null"},
		{"127.0.0.1@gone", "push reply message fail, channel of <127.0.0.1@gone> not found."},
		{"127.0.0.1@refuser", "push reply message to 127.0.0.1@refuserfail."},
	}
	for _, c := range cases {
		resp := send(c.to)
		wantCode(t, "reply to "+c.to, resp, protocol.RespSystemError)
		if resp.Remark != c.remark {
			t.Errorf("reply to %q: remark %q, want %q", c.to, resp.Remark, c.remark)
		}
	}
	// Without StoreReplyMessage a pushed reply answers msgId "0" and nothing is stored.
	resp := send("127.0.0.1@ok")
	wantCode(t, "reply", resp, protocol.RespSuccess)
	if resp.ExtFields["msgId"] != "0" || resp.ExtFields["queueOffset"] != "0" {
		t.Fatalf("unstored reply answered %v", resp.ExtFields)
	}
	<-ok.pushes
	if got := e.pull("g", topic, 0, 0, 32); got.Code != protocol.RespPullNotFound {
		t.Fatalf("reply topic pull: %d, want nothing stored", got.Code)
	}
	// A consumer group's client (no producer group) is not a reply target, as in Java.
	sqlHeartbeat(t, e, "127.0.0.1@consumer", "g", "*", broker.ExpressionTag)
	if resp := send("127.0.0.1@consumer"); resp.Code != protocol.RespSystemError {
		t.Fatalf("reply to a consumer-only client: %d", resp.Code)
	}
}

// TestReplyToRequestConnection: a requester that sent no heartbeat (the Go
// client's producer before its first one) is reached over the connection
// its request message came in on; once that connection closes it is not.
func TestReplyToRequestConnection(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("Req", 1)
	topic := protocol.ReplyTopic("DefaultCluster")
	pushes := make(chan *remoting.Command, 4)
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	ccfg.RequestProcessor = remoting.ProcessorFunc(func(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
		pushes <- req
		return remoting.NewResponse(protocol.RespSuccess, ""), nil
	})
	rc := remoting.NewClient(ccfg)
	defer rc.Close()

	send := func() *remoting.Command {
		return e.call(protocol.ReqSendReplyMessage, sendHeader(topic, 0, replyProps("127.0.0.1@quiet", "c1")).ExtFields(false), []byte("r"))
	}
	wantCode(t, "reply before any request", send(), protocol.RespSystemError)

	req := props(broker.PropertyReplyToClient, "127.0.0.1@quiet", broker.PropertyCorrelationID, "c1", broker.PropertyMessageTTL, "3")
	wantCode(t, "request", callWith(t, rc, e.b.Addr(), protocol.ReqSendMessageV2, sendHeader("Req", 0, req).ExtFields(true), []byte("q")),
		protocol.RespSuccess)
	wantCode(t, "reply", send(), protocol.RespSuccess)
	select {
	case p := <-pushes:
		if p.Code != protocol.ReqPushReplyMessageToClient || string(p.Body) != "r" {
			t.Fatalf("pushed %d %q", p.Code, p.Body)
		}
	case <-time.After(waitLimit):
		t.Fatal("no push over the request's connection")
	}
	_ = rc.Close()
	eventually(t, "the closed requester forgotten", func() bool { return send().Code == protocol.RespSystemError })
}

// TestReplyChecksLikeASend: a reply goes through a send's checks (an
// invalid or forbidden topic is refused before any push).
func TestReplyChecksLikeASend(t *testing.T) {
	e := startEnv(t, nil)
	r := newRequester(t, e, "127.0.0.1@req", protocol.RespSuccess)
	for topic, code := range map[string]int32{
		"bad topic!":          protocol.RespInvalidParameter,
		"SCHEDULE_TOPIC_XXXX": protocol.RespNoPermission,
	} {
		resp := e.call(protocol.ReqSendReplyMessage, sendHeader(topic, 0, replyProps("127.0.0.1@req", "c")).ExtFields(false), []byte("x"))
		wantCode(t, "reply to "+topic, resp, code)
	}
	select {
	case p := <-r.pushes:
		t.Fatalf("a refused reply was pushed: %v", p.ExtFields)
	default:
	}
}

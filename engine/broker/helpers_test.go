package broker_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/clustertest"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

const waitLimit = 10 * time.Second

// env is a name server and a broker over a memstore on loopback, and a
// client talking to them.
type env struct {
	t      *testing.T
	ns     *namesrv.Server
	store  *memstore.Store
	b      *broker.Broker
	client *remoting.Client
	pushes chan *remoting.Command // requests the broker pushed to client
}

func testConfig() broker.Config {
	cfg := clustertest.BrokerConfig("")
	cfg.RegisterInterval = time.Hour // registrations in tests come from topic changes
	cfg.LongPollingCheckInterval = time.Hour
	cfg.DelayLevels = []time.Duration{20 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond, 40 * time.Millisecond}
	cfg.ScheduleCheckInterval = 10 * time.Millisecond
	return cfg
}

func startNamesrv(t *testing.T) *namesrv.Server { return clustertest.StartNamesrv(t, nil) }

func startEnv(t *testing.T, mutate func(*broker.Config)) *env {
	t.Helper()
	e := &env{t: t, ns: startNamesrv(t), store: memstore.New()}
	cfg := testConfig()
	cfg.NamesrvAddrs = []string{e.ns.Addr()}
	if mutate != nil {
		mutate(&cfg)
	}
	e.b = e.startBroker(cfg)
	e.client, e.pushes = newClient(t)
	return e
}

func (e *env) startBroker(cfg broker.Config) *broker.Broker {
	e.t.Helper()
	return clustertest.StartBroker(e.t, cfg, broker.WithStore(e.store), nil)
}

func newClient(t *testing.T) (*remoting.Client, chan *remoting.Command) {
	pushes := make(chan *remoting.Command, 64)
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	ccfg.RequestProcessor = remoting.ProcessorFunc(func(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
		select {
		case pushes <- req:
		default:
		}
		return nil, nil
	})
	c := remoting.NewClient(ccfg)
	t.Cleanup(func() { _ = c.Close() })
	return c, pushes
}

func (e *env) call(code int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	e.t.Helper()
	return callWith(e.t, e.client, e.b.Addr(), code, ext, body)
}

func callWith(t *testing.T, c *remoting.Client, addr string, code int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	req := remoting.NewRequest(code, ext)
	req.Body = body
	resp, err := c.InvokeSync(ctx, addr, req)
	if err != nil {
		t.Fatalf("%s: %v", protocol.RequestCodeName(code), err)
	}
	return resp
}

func wantCode(t *testing.T, what string, resp *remoting.Command, code int32) {
	t.Helper()
	if resp.Code != code {
		t.Fatalf("%s: code %s (%q), want %s", what, protocol.ResponseCodeName(resp.Code), resp.Remark, protocol.ResponseCodeName(code))
	}
}

func (e *env) createTopic(topic string, queues int) {
	e.t.Helper()
	resp := e.call(protocol.ReqUpdateAndCreateTopic, remoting.ExtFields{
		"topic": topic, "defaultTopic": "defaultTopic", "readQueueNums": strconv.Itoa(queues),
		"writeQueueNums": strconv.Itoa(queues), "perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false",
	}, nil)
	wantCode(e.t, "create topic", resp, protocol.RespSuccess)
}

// sendHeader is a producer's header for topic/queue with properties props.
func sendHeader(topic string, queueID int32, props string) protocol.SendMessageHeader {
	return protocol.SendMessageHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: protocol.DefaultTopic,
		DefaultTopicQueueNums: 4, QueueID: queueID, BornTimestamp: time.Now().UnixMilli(), Properties: props}
}

func (e *env) send(topic string, queueID int32, body, props string) *remoting.Command {
	e.t.Helper()
	return e.call(protocol.ReqSendMessageV2, sendHeader(topic, queueID, props).ExtFields(true), []byte(body))
}

func (e *env) mustSend(topic string, queueID int32, body, props string) *remoting.Command {
	e.t.Helper()
	resp := e.send(topic, queueID, body, props)
	wantCode(e.t, "send", resp, protocol.RespSuccess)
	return resp
}

func pullExt(group, topic string, queueID int32, offset int64, maxNums int, sysFlag int32, suspendMs int64) remoting.ExtFields {
	ext := remoting.ExtFields{"consumerGroup": group, "topic": topic, "commitOffset": "-1", "subscription": "",
		"subVersion": "0", "expressionType": "TAG", "bname": "broker-a"}
	ext.SetInt32("queueId", queueID)
	ext.SetInt64("queueOffset", offset)
	ext.SetInt32("maxMsgNums", int32(maxNums))
	ext.SetInt32("sysFlag", sysFlag)
	ext.SetInt64("suspendTimeoutMillis", suspendMs)
	return ext
}

func (e *env) pull(group, topic string, queueID int32, offset int64, maxNums int) *remoting.Command {
	e.t.Helper()
	return e.call(protocol.ReqPullMessage, pullExt(group, topic, queueID, offset, maxNums, 0, 0), nil)
}

func decodeAll(t *testing.T, body []byte) []record.Record {
	t.Helper()
	var recs []record.Record
	for len(body) > 0 {
		r, err := record.Decode(body, true)
		if err != nil {
			t.Fatalf("decode pulled record: %v", err)
		}
		recs = append(recs, r)
		body = body[r.TotalSize:]
	}
	return recs
}

func extInt(t *testing.T, resp *remoting.Command, key string) int64 {
	t.Helper()
	v, err := resp.ExtFields.Int64(key)
	if err != nil {
		t.Fatalf("ext %s: %v (ext %v)", key, err, resp.ExtFields)
	}
	return v
}

// eventually polls cond every few milliseconds until it holds or waitLimit
// passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func props(kv ...string) string {
	var b []byte
	for i := 0; i+1 < len(kv); i += 2 {
		b = record.AppendProperty(b, kv[i], kv[i+1])
	}
	return string(b)
}

func heartbeatBody(clientID string, groups ...string) []byte {
	hb := broker.HeartbeatData{ClientID: clientID, ProducerDataSet: []broker.ProducerData{}}
	for _, g := range groups {
		hb.ConsumerDataSet = append(hb.ConsumerDataSet, broker.ConsumerData{
			GroupName: g, ConsumeType: "CONSUME_PASSIVELY", MessageModel: broker.Clustering,
			ConsumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
			SubscriptionDataSet: []broker.SubscriptionData{
				{Topic: "T", SubString: "*", TagsSet: []string{}, SubVersion: time.Now().UnixNano(), ExpressionType: "TAG"},
				{Topic: protocol.RetryTopic(g), SubString: "*", TagsSet: []string{}, SubVersion: time.Now().UnixNano(), ExpressionType: "TAG"},
			},
		})
	}
	b, err := json.Marshal(hb)
	if err != nil {
		panic(err)
	}
	return b
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

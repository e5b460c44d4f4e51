package pop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/broker/pop"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// waitLimit bounds every wait for a condition.
const waitLimit = 10 * time.Second

// env is a broker on loopback (no name server) and a remoting client.
type env struct {
	t      *testing.T
	b      *broker.Broker
	svc    *pop.Service
	client *remoting.Client
}

func testConfig() broker.Config {
	cfg := broker.DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.Logger = quiet
	cfg.RegisterInterval = time.Hour
	cfg.LongPollingCheckInterval = time.Hour
	cfg.SendQueueMaxWait = 10 * time.Second
	return cfg
}

// startEnv starts a broker over a memstore.
func startEnv(t *testing.T, mutate func(*broker.Config)) *env {
	t.Helper()
	return startWith(t, mutate, broker.WithStore(memstore.New()))
}

// smallStoreConfig is an engine/store config with small files in dir.
func smallStoreConfig(dir string) store.Config {
	cfg := store.DefaultConfig(dir)
	cfg.CommitLog.Flush = flush.DefaultConfig(flush.Async)
	cfg.CommitLog.Flush.Interval = 5 * time.Millisecond
	cfg.CommitLog.SegmentSize = 1 << 20
	cfg.ConsumeQueue = consumequeue.Config{UnitsPerFile: 1024}
	cfg.Index = index.Config{MaxHashSlots: 1024, MaxIndexNum: 4096, MaxQueryNum: 64}
	cfg.ReadCacheBytes = 1 << 20
	cfg.CleanInterval = 0
	cfg.Logger = quiet
	return cfg
}

// startReal starts a broker over engine/store in dir.
func startReal(t *testing.T, dir string) *env {
	t.Helper()
	cfg := testConfig()
	return startWith(t, nil, broker.OpenStore(smallStoreConfig(dir), cfg.DelayLevels))
}

func startWith(t *testing.T, mutate func(*broker.Config), open broker.StoreOpener) *env {
	t.Helper()
	cfg := testConfig()
	if mutate != nil {
		mutate(&cfg)
	}
	b, err := broker.New(cfg, open)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	c := remoting.NewClient(ccfg)
	t.Cleanup(func() { _ = c.Close() })
	return &env{t: t, b: b, svc: b.Pop(), client: c}
}

func (e *env) createTopic(topic string, queues int32) {
	e.t.Helper()
	if _, err := e.b.Topics().Put(protocol.NewTopicConfig(topic, queues)); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) call(code int32, ext map[string]string, body []byte) *remoting.Command {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	req := remoting.NewRequest(code, ext)
	req.Body = body
	resp, err := e.client.InvokeSync(ctx, e.b.Addr(), req)
	if err != nil {
		e.t.Fatalf("%s: %v", protocol.RequestCodeName(code), err)
	}
	return resp
}

// send stores one message with body and tag through SEND_MESSAGE_V2.
func (e *env) send(topic string, queueID int32, body, tag string) {
	e.t.Helper()
	props := string(record.AppendProperty(record.AppendProperty(nil, record.PropertyTags, tag),
		record.PropertyUniqKey, "id-"+body))
	h := remoting.SendMessageHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: protocol.DefaultTopic,
		DefaultTopicQueueNums: 4, QueueID: queueID, BornTimestamp: time.Now().UnixMilli(), Properties: props}
	resp := e.call(protocol.ReqSendMessageV2, h.ExtFields(true), []byte(body))
	if resp.Code != protocol.RespSuccess {
		e.t.Fatalf("send %s: code %d %q", body, resp.Code, resp.Remark)
	}
}

// pop is one Pop that must not fail.
func (e *env) pop(req pop.Request) []pop.Message {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit+req.Poll)
	defer cancel()
	msgs, err := e.svc.Pop(ctx, req)
	if err != nil {
		e.t.Fatalf("pop %+v: %v", req, err)
	}
	return msgs
}

// popUntil pops (with a long poll) until n messages came, or fails.
func (e *env) popUntil(req pop.Request, n int) []pop.Message {
	e.t.Helper()
	var out []pop.Message
	deadline := time.Now().Add(waitLimit)
	for len(out) < n {
		if time.Now().After(deadline) {
			e.t.Fatalf("popped %d messages (%s), want %d", len(out), bodies(out), n)
		}
		out = append(out, e.pop(req)...)
	}
	return out
}

func (e *env) ack(group, topic string, m pop.Message) {
	e.t.Helper()
	if err := e.svc.Ack(group, topic, m.Handle); err != nil {
		e.t.Fatalf("ack %s: %v", m.Record.Body, err)
	}
}

func wantInvalid(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, pop.ErrInvalidHandle) {
		t.Fatalf("%s: %v, want ErrInvalidHandle", what, err)
	}
}

func bodies(ms []pop.Message) string {
	s := ""
	for _, m := range ms {
		s += fmt.Sprintf("%s(q%d@%d #%d) ", m.Record.Body, m.Record.QueueID, m.Record.QueueOffset, m.DeliveryAttempt)
	}
	return s
}

// queueBodies reads every message of (topic, queueID) from the store.
func (e *env) queueBodies(topic string, queueID int32) []string {
	e.t.Helper()
	st := e.b.Store()
	var out []string
	for off := st.MinOffset(topic, queueID); off < st.MaxOffset(topic, queueID); {
		res := st.Get("check", topic, queueID, off, 32, nil)
		if res.Status != broker.GetFound {
			break
		}
		for buf := res.Buffer; len(buf) > 0; {
			size, _, err := record.PeekSize(buf)
			if err != nil {
				e.t.Fatal(err)
			}
			r, err := record.Decode(buf[:size], false)
			if err != nil {
				e.t.Fatal(err)
			}
			out = append(out, string(r.Body))
			buf = buf[size:]
		}
		off = res.NextBeginOffset
	}
	return out
}

// eventually waits for cond, polling.
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

// createGroup creates a subscription group with retryMaxTimes.
func (e *env) createGroup(group string, retryMaxTimes int32) {
	e.t.Helper()
	c := protocol.DefaultSubscriptionGroupConfig(group)
	c.RetryMaxTimes = retryMaxTimes
	body, err := json.Marshal(c)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp := e.call(protocol.ReqUpdateAndCreateSubscriptionGroup, nil, body); resp.Code != protocol.RespSuccess {
		e.t.Fatalf("create group: %d %q", resp.Code, resp.Remark)
	}
}

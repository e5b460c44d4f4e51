package promexport

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

var quiet = slog.New(slog.DiscardHandler)

// testEnv is a broker with the exporter serving on 127.0.0.1:0.
type testEnv struct {
	t       *testing.T
	b       *broker.Broker
	col     *BrokerCollector
	metrics *Server
	client  *remoting.Client
}

func brokerConfig() broker.Config {
	cfg := broker.DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.Logger = quiet
	cfg.RegisterInterval = time.Hour
	cfg.ClusterName = "MetricsCluster"
	cfg.BrokerName = "broker-m"
	return cfg
}

// storeConfig is an engine/store config with small files under dir.
func storeConfig(dir string, pol flush.Kind) store.Config {
	cfg := store.DefaultConfig(dir)
	cfg.CommitLog.Flush = flush.DefaultConfig(pol)
	cfg.CommitLog.Flush.Interval = 5 * time.Millisecond
	cfg.CommitLog.SegmentSize = 1 << 20
	cfg.ConsumeQueue = consumequeue.Config{UnitsPerFile: 1024}
	cfg.Index = index.Config{MaxHashSlots: 1024, MaxIndexNum: 4096, MaxQueryNum: 64}
	cfg.ReadCacheBytes = 1 << 20
	cfg.CleanInterval = 0
	cfg.Logger = quiet
	return cfg
}

// startEnv builds the broker over open, installs the collector before
// Start (as the broker command does), and serves the metrics.
func startEnv(t *testing.T, open broker.StoreOpener) *testEnv {
	t.Helper()
	return startEnvWith(t, open, nil)
}

// startEnvWith is startEnv with the broker config adjusted by tweak.
func startEnvWith(t *testing.T, open broker.StoreOpener, tweak func(*broker.Config)) *testEnv {
	t.Helper()
	cfg := brokerConfig()
	if tweak != nil {
		tweak(&cfg)
	}
	b, err := broker.New(cfg, open)
	if err != nil {
		t.Fatal(err)
	}
	col := NewBrokerCollector(b)
	reg, err := NewRegistry(col)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Shutdown(ctx)
	})
	srv, err := Listen("127.0.0.1:0", reg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	})
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	cl := remoting.NewClient(ccfg)
	t.Cleanup(func() { _ = cl.Close() })
	return &testEnv{t: t, b: b, col: col, metrics: srv, client: cl}
}

func (e *testEnv) call(code int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	e.t.Helper()
	resp, err := e.invoke(code, ext, body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// invoke is call for goroutines other than the test's.
func (e *testEnv) invoke(code int32, ext remoting.ExtFields, body []byte) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := remoting.NewRequest(code, ext)
	req.Body = body
	resp, err := e.client.InvokeSync(ctx, e.b.Addr(), req)
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", protocol.RequestCodeName(code), err)
	}
	return resp, nil
}

// waitMaxOffset waits (bounded) until the queue's messages are dispatched.
func (e *testEnv) waitMaxOffset(topic string, queueID int32, want int64) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.b.Store().MaxOffset(topic, queueID) < want {
		if time.Now().After(deadline) {
			e.t.Fatalf("%s/%d: max offset %d, want %d", topic, queueID, e.b.Store().MaxOffset(topic, queueID), want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (e *testEnv) mustCall(what string, code int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	e.t.Helper()
	resp := e.call(code, ext, body)
	if resp.Code != protocol.RespSuccess {
		e.t.Fatalf("%s: code %d remark %q", what, resp.Code, resp.Remark)
	}
	return resp
}

func (e *testEnv) createTopic(topic string, queues int) {
	e.t.Helper()
	e.mustCall("create topic", protocol.ReqUpdateAndCreateTopic, remoting.ExtFields{
		"topic": topic, "defaultTopic": protocol.DefaultTopic, "readQueueNums": strconv.Itoa(queues),
		"writeQueueNums": strconv.Itoa(queues), "perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false",
	}, nil)
}

func sendExt(topic string, queueID int32) remoting.ExtFields {
	return protocol.SendMessageHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: protocol.DefaultTopic,
		DefaultTopicQueueNums: 4, QueueID: queueID, BornTimestamp: time.Now().UnixMilli()}.ExtFields(true)
}

func (e *testEnv) send(topic string, queueID int32, body string) *remoting.Command {
	e.t.Helper()
	return e.call(protocol.ReqSendMessageV2, sendExt(topic, queueID), []byte(body))
}

func pullExt(group, topic string, queueID int32, offset int64, maxNums int) remoting.ExtFields {
	ext := remoting.ExtFields{"consumerGroup": group, "topic": topic, "commitOffset": "-1", "subscription": "",
		"subVersion": "0", "expressionType": "TAG", "suspendTimeoutMillis": "0", "sysFlag": "0"}
	ext.SetInt32("queueId", queueID)
	ext.SetInt64("queueOffset", offset)
	ext.SetInt32("maxMsgNums", int32(maxNums))
	return ext
}

func (e *testEnv) commitOffset(group, topic string, queueID int32, offset int64) {
	e.t.Helper()
	ext := remoting.ExtFields{"consumerGroup": group, "topic": topic}
	ext.SetInt32("queueId", queueID)
	ext.SetInt64("commitOffset", offset)
	e.mustCall("commit offset", protocol.ReqUpdateConsumerOffset, ext, nil)
}

// families is one parsed scrape.
type families map[string]*dto.MetricFamily

// scrapeURL fetches and parses a /metrics page.
func scrapeURL(url string) (families, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

func scrape(t *testing.T, addr string) families {
	t.Helper()
	fs, err := scrapeURL("http://" + addr + Path)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// find returns the series of name whose labels include want, or nil.
func (fs families) find(name string, want map[string]string) *dto.Metric {
	f := fs[name]
	if f == nil {
		return nil
	}
	for _, m := range f.Metric {
		ok := true
		for k, v := range want {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
					break
				}
			}
			if !found {
				ok = false
				break
			}
		}
		if ok {
			return m
		}
	}
	return nil
}

// value is a counter's or gauge's value, NaN when the series is missing.
func (fs families) value(name string, labels map[string]string) float64 {
	m := fs.find(name, labels)
	switch {
	case m == nil:
		return math.NaN()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return math.NaN()
}

// histCount is a histogram's sample count, -1 when the series is missing.
func (fs families) histCount(name string, labels map[string]string) int64 {
	m := fs.find(name, labels)
	if m == nil || m.Histogram == nil {
		return -1
	}
	return int64(m.Histogram.GetSampleCount())
}

// scrapeUntil scrapes until cond holds (bounded): answers are observed
// after their write, which may finish after the client read them.
func scrapeUntil(t *testing.T, addr, what string, cond func(families) bool) families {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		fs := scrape(t, addr)
		if cond(fs) {
			return fs
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

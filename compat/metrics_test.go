package compat_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/promexport"
	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

// metricsCluster is a cluster whose name server and broker export their
// metrics (the collectors are installed before Start, as the commands do).
type metricsCluster struct {
	*cluster
	nsMetrics, brokerMetrics string
}

func serveMetrics(t *testing.T, c prometheus.Collector) string {
	t.Helper()
	reg, err := promexport.NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := promexport.Listen("127.0.0.1:0", reg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	return srv.Addr()
}

func startMetricsCluster(t *testing.T) *metricsCluster {
	t.Helper()
	ncfg := namesrv.DefaultConfig()
	ncfg.Remoting.Addr = "127.0.0.1:0"
	ncfg.Logger = quiet
	ns := namesrv.New(ncfg)
	mc := &metricsCluster{nsMetrics: serveMetrics(t, promexport.NewNamesrvCollector(ns, "compat-ns"))}
	if err := ns.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ns.Shutdown(context.Background()) })

	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	c := &cluster{t: t, ns: ns, dir: t.TempDir(), listen: "127.0.0.1:0", rc: remoting.NewClient(ccfg),
		nsr: primitive.NewPassthroughResolver([]string{ns.Addr()})}
	t.Cleanup(func() { _ = c.rc.Close() })

	cfg := broker.DefaultConfig()
	cfg.ListenAddr = c.listen
	cfg.HA.ListenAddr = "127.0.0.1:0"
	cfg.NamesrvAddrs = []string{ns.Addr()}
	cfg.Logger = quiet
	scfg := store.DefaultConfig(c.dir)
	scfg.CommitLog.Flush = flush.DefaultConfig(flush.Group)
	scfg.CommitLog.SegmentSize = 16 << 20
	scfg.ConsumeQueue = consumequeue.Config{UnitsPerFile: 10000}
	scfg.Index = index.Config{MaxHashSlots: 4096, MaxIndexNum: 16384, MaxQueryNum: 64}
	scfg.ReadCacheBytes = 1 << 20
	scfg.CleanInterval = 0
	scfg.Logger = quiet
	b, err := broker.New(cfg, broker.OpenStore(scfg, cfg.DelayLevels))
	if err != nil {
		t.Fatal(err)
	}
	mc.brokerMetrics = serveMetrics(t, promexport.NewBrokerCollector(b))
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	c.b = b
	mc.cluster = c
	return mc
}

// scrapeFamilies fetches and parses http://addr/metrics.
func scrapeFamilies(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + promexport.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// sumSeries adds up the values (counters, gauges) or sample counts
// (histograms) of name's series whose labels match: a value in want is
// equal, or with a trailing "*" a prefix.
func sumSeries(fs map[string]*dto.MetricFamily, name string, want map[string]string) (total float64, n int) {
	f := fs[name]
	if f == nil {
		return 0, 0
	}
next:
	for _, m := range f.Metric {
		for k, v := range want {
			ok := false
			for _, lp := range m.Label {
				if lp.GetName() != k {
					continue
				}
				if p, prefix := strings.CutSuffix(v, "*"); prefix {
					ok = strings.HasPrefix(lp.GetValue(), p)
				} else {
					ok = lp.GetValue() == v
				}
			}
			if !ok {
				continue next
			}
		}
		n++
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Histogram != nil:
			total += float64(m.Histogram.GetSampleCount())
		}
	}
	return total, n
}

// TestMetricsWithOfficialClient: the official Go client produces to and
// consumes from a broker with metrics on. The scraped counters match: the
// messages sent in, the sends in the latency histogram, the messages the
// group was served out; once the consumer stopped (committing its offsets)
// and more were sent, its lag is exactly those. The name server counts the
// client's route queries and the broker's registration.
func TestMetricsWithOfficialClient(t *testing.T) {
	mc := startMetricsCluster(t)
	c := mc.cluster
	const topic, group = "CompatMetrics", "compat_metrics_cg"
	createTopic(t, c, newAdmin(t, c), topic, 2)
	c.waitRoute(topic)
	p := newProducer(t, c, "compat_metrics_pg")
	const first, later = 20, 5
	sent := sendSync(t, p, topic, "", bodies("m", first), 1)

	rec := newReceived()
	pc, err := consumer.NewPushConsumer(consumer.WithNsResolver(c.nsr), consumer.WithGroupName(group),
		consumer.WithInstance("a"), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range ms {
				rec.add("a", m)
			}
			return consumer.ConsumeSuccess, nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "every message consumed", deliverLimit, func() bool { return rec.has("a", sent) })
	live := scrapeFamilies(t, mc.brokerMetrics)
	if got, _ := sumSeries(live, "rocketmq_consumer_connections", map[string]string{"consumer_group": group, "consume_mode": "push", "language": "go"}); got != 1 {
		t.Errorf("consumer connections of the live group %v, want 1", got)
	}
	if err := pc.Shutdown(); err != nil { // persists the consumed offsets
		t.Fatal(err)
	}
	sendSync(t, p, topic, "", bodies("later", later), 1)

	in := map[string]string{"topic": topic}
	sends := map[string]string{"request_code": "send_message*", "response_code": "success"}
	lag := map[string]string{"topic": topic, "consumer_group": group}
	var fs map[string]*dto.MetricFamily
	waitUntil(t, "the sends observed and the lag settled", 20*time.Second, func() bool {
		fs = scrapeFamilies(t, mc.brokerMetrics)
		n, _ := sumSeries(fs, "rocketmq_rpc_latency", sends)
		l, _ := sumSeries(fs, "rocketmq_consumer_lag_messages", lag)
		return n == first+later && l == later
	})
	if got, _ := sumSeries(fs, "rocketmq_messages_in_total", in); got != first+later {
		t.Errorf("messages in %v, want %d", got, first+later)
	}
	if got, _ := sumSeries(fs, "rocketmq_messages_out_total", lag); got < first {
		t.Errorf("messages out to the group %v, want at least the %d consumed", got, first)
	}
	if got, _ := sumSeries(fs, "rocketmq_rpc_latency", map[string]string{"request_code": "heart_beat", "response_code": "success"}); got < 1 {
		t.Errorf("no heartbeat counted")
	}
	if got, _ := sumSeries(fs, "brokerlab_flush_latency_seconds", nil); got < 1 {
		t.Errorf("no flush counted under group commit")
	}

	nfs := scrapeFamilies(t, mc.nsMetrics)
	if got, _ := sumSeries(nfs, "rocketmq_rpc_latency", map[string]string{"request_code": "get_routeinfo_by_topic"}); got < 1 {
		t.Errorf("the client's route queries were not counted")
	}
	if got, _ := sumSeries(nfs, "rocketmq_rpc_latency", map[string]string{"request_code": "register_broker", "response_code": "success"}); got < 1 {
		t.Errorf("the broker's registration was not counted")
	}
	if got, _ := sumSeries(nfs, "brokerlab_namesrv_brokers", map[string]string{"cluster": broker.DefaultConfig().ClusterName}); got != 1 {
		t.Errorf("registered brokers %v, want 1", got)
	}
}

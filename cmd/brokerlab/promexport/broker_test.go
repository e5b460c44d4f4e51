package promexport

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// TestBrokerMetrics: sends and pulls against a broker over engine/store,
// then the scraped values, under every flush policy: messages and bytes
// in per topic equal what was sent, out per group what was pulled, the
// SEND_MESSAGE_V2 latency histogram counts every send, the lag of a group
// that consumed part is what it left, and the store's flush, append and
// append-lock series agree with each other.
func TestBrokerMetrics(t *testing.T) {
	for _, pol := range flush.Kinds() {
		t.Run("flush="+string(pol), func(t *testing.T) {
			e := startEnv(t, broker.OpenStore(storeConfig(t.TempDir(), pol), broker.DefaultConfig().DelayLevels))
			const topic, group, n = "MetricsTopic", "metrics-group", 10
			e.createTopic(topic, 2)
			body := strings.Repeat("m", 100)
			for i := range n {
				if resp := e.send(topic, int32(i%2), body); resp.Code != protocol.RespSuccess {
					t.Fatalf("send %d: %d %s", i, resp.Code, resp.Remark)
				}
			}
			e.waitMaxOffset(topic, 0, n/2)
			e.waitMaxOffset(topic, 1, n/2)
			// The group pulls 3 of queue 0's 5 messages and commits them; on
			// queue 1 it commits 1 without pulling.
			pulled := e.mustCall("pull", protocol.ReqPullMessage, pullExt(group, topic, 0, 0, 3), nil)
			e.commitOffset(group, topic, 0, 3)
			e.commitOffset(group, topic, 1, 1)
			const wantLag = (5 - 3) + (5 - 1)

			tl := map[string]string{"topic": topic}
			gl := map[string]string{"topic": topic, "consumer_group": group}
			sendLabels := map[string]string{"request_code": "send_message_v2", "response_code": "success", "protocol_type": "remoting"}
			fs := scrapeUntil(t, e.metrics.Addr(), "every send observed", func(fs families) bool {
				return fs.histCount("rocketmq_rpc_latency", sendLabels) >= n
			})

			node := map[string]string{"cluster": "MetricsCluster", "node_type": "broker", "node_id": "broker-m"}
			if fs.find("rocketmq_messages_in_total", node) == nil {
				t.Fatal("series lack the node labels cluster, node_type, node_id")
			}
			if got := fs.value("rocketmq_messages_in_total", tl); got != n {
				t.Errorf("rocketmq_messages_in_total{topic} = %v, want %d", got, n)
			}
			if got := fs.value("rocketmq_throughput_in_total", tl); got != n*float64(len(body)) {
				t.Errorf("rocketmq_throughput_in_total = %v, want %d body bytes", got, n*len(body))
			}
			if got := fs.value("rocketmq_messages_out_total", gl); got != 3 {
				t.Errorf("rocketmq_messages_out_total{group} = %v, want 3", got)
			}
			if got := fs.value("rocketmq_throughput_out_total", gl); got != float64(len(pulled.Body)) {
				t.Errorf("rocketmq_throughput_out_total = %v, want the %d pulled bytes", got, len(pulled.Body))
			}
			if got := fs.histCount("rocketmq_rpc_latency", sendLabels); got != n {
				t.Errorf("send latency count %d, want %d", got, n)
			}
			if got := fs.histCount("rocketmq_rpc_latency", map[string]string{"request_code": "pull_message", "response_code": "success"}); got != 1 {
				t.Errorf("pull latency count %d, want 1", got)
			}
			if got := fs.value("rocketmq_consumer_lag_messages", gl); got != wantLag {
				t.Errorf("rocketmq_consumer_lag_messages = %v, want %d", got, wantLag)
			}
			if got := fs.value("rocketmq_consumer_lag_latency", gl); math.IsNaN(got) || got < 0 {
				t.Errorf("rocketmq_consumer_lag_latency = %v", got)
			}
			if got := fs.value("rocketmq_topic_number", nil); got < 1 {
				t.Errorf("rocketmq_topic_number = %v", got)
			}

			// Store series: every append counted, the flush histograms
			// count every flush, and each send's append-lock hold observed.
			if got := fs.value("brokerlab_commitlog_appends_total", nil); got != n {
				t.Errorf("appends %v, want %d", got, n)
			}
			flushes := fs.value("brokerlab_flushes_total", nil)
			if c := fs.histCount("brokerlab_flush_latency_seconds", nil); float64(c) != flushes {
				t.Errorf("flush latency count %d, flushes %v", c, flushes)
			}
			if c := fs.histCount("brokerlab_flush_batch_size", nil); float64(c) != flushes {
				t.Errorf("flush batch count %d, flushes %v", c, flushes)
			}
			if pol != flush.Async && flushes < 1 {
				t.Errorf("%s: no flush counted after %d waited sends", pol, n)
			}
			if pol == flush.Sync && flushes < n {
				t.Errorf("sync: %v flushes for %d sends", flushes, n)
			}
			if c := fs.histCount("brokerlab_append_lock_hold_seconds", nil); c != n {
				t.Errorf("append-lock hold histogram counts %d sends, want %d", c, n)
			}
			if got := fs.value("brokerlab_append_lock_held_seconds_total", nil); !(got > 0) {
				t.Errorf("append lock held total %v", got)
			}
			for _, name := range []string{"brokerlab_clean_dispatch_waits_total", "brokerlab_dispatch_skipped_bytes_total"} {
				if fs.find(name, nil) == nil {
					t.Errorf("%s is missing", name)
				} else if got := fs.value(name, nil); got != 0 {
					t.Errorf("%s = %v, want 0 (nothing cleaned)", name, got)
				}
			}
			for _, stage := range []string{"arrival", "queued", "append"} {
				if got := fs.value("brokerlab_page_cache_busy_rejections_total", map[string]string{"stage": stage}); got != 0 {
					t.Errorf("busy rejections at %s = %v, want 0", stage, got)
				}
			}
			if fs["go_goroutines"] == nil || fs["process_open_fds"] == nil {
				t.Error("the Go runtime and process collectors are missing")
			}
		})
	}
}

// records counts the commit-log records in a pull body.
func records(t *testing.T, body []byte) int {
	n := 0
	for len(body) > 0 {
		size, _, err := record.PeekSize(body)
		if err != nil || int(size) > len(body) || size <= 0 {
			t.Errorf("pull body: bad record at %d: %v", n, err)
			return n
		}
		body = body[size:]
		n++
	}
	return n
}

// TestBusyRejectionsCounted: sends refused while the store reports its page
// cache busy are counted at the arrival stage and in the latency histogram
// under system_busy.
func TestBusyRejectionsCounted(t *testing.T) {
	ms := memstore.New()
	e := startEnv(t, broker.WithStore(ms))
	e.createTopic("BusyTopic", 1)
	ms.SetOSPageCacheBusy(true)
	const refused = 3
	for range refused {
		if resp := e.send("BusyTopic", 0, "x"); resp.Code != protocol.RespSystemBusy {
			t.Fatalf("send while busy: %d %s", resp.Code, resp.Remark)
		}
	}
	ms.SetOSPageCacheBusy(false)
	if resp := e.send("BusyTopic", 0, "x"); resp.Code != protocol.RespSuccess {
		t.Fatalf("send after busy: %d %s", resp.Code, resp.Remark)
	}
	busyLabels := map[string]string{"request_code": "send_message_v2", "response_code": "system_busy"}
	fs := scrapeUntil(t, e.metrics.Addr(), "the refusals observed", func(fs families) bool {
		return fs.histCount("rocketmq_rpc_latency", busyLabels) == refused
	})
	if got := fs.value("brokerlab_page_cache_busy_rejections_total", map[string]string{"stage": "arrival"}); got != refused {
		t.Fatalf("arrival busy rejections %v, want %d", got, refused)
	}
	if got := fs.value("rocketmq_messages_in_total", map[string]string{"topic": "BusyTopic"}); got != 1 {
		t.Fatalf("messages in %v, want only the accepted one", got)
	}
	if fs["brokerlab_flushes_total"] != nil {
		t.Fatal("store series exported for a memstore broker")
	}
}

// TestLagOfOnlineGroupAndRetryTopics: an online group subscribed to a topic
// it has not committed on shows lag 0, and retry topics are not reported.
func TestLagExcludesRetryTopics(t *testing.T) {
	e := startEnv(t, broker.WithStore(memstore.New()))
	e.createTopic("LagTopic", 1)
	e.createTopic(record.RetryTopicPrefix+"g", 1)
	for range 4 {
		if resp := e.send("LagTopic", 0, "x"); resp.Code != protocol.RespSuccess {
			t.Fatalf("send: %d %s", resp.Code, resp.Remark)
		}
	}
	e.commitOffset("g", "LagTopic", 0, 1)
	e.commitOffset("g", record.RetryTopicPrefix+"g", 0, 0)
	lags := e.b.ConsumerLags()
	if len(lags) != 1 || lags[0].Group != "g" || lags[0].Topic != "LagTopic" || lags[0].Lag != 3 || lags[0].Online {
		t.Fatalf("lags %+v, want g on LagTopic lagging 3, offline", lags)
	}
	if lags[0].EarliestUnconsumed <= 0 {
		t.Fatalf("earliest unconsumed timestamp %d", lags[0].EarliestUnconsumed)
	}
	fs := scrape(t, e.metrics.Addr())
	if got := fs.value("rocketmq_consumer_lag_messages", map[string]string{"topic": "LagTopic", "consumer_group": "g"}); got != 3 {
		t.Fatalf("lag %v", got)
	}
	if fs.find("rocketmq_consumer_lag_messages", map[string]string{"topic": record.RetryTopicPrefix + "g"}) != nil {
		t.Fatal("a retry topic's lag is exported")
	}
}

// TestScrapeUnderLoadNeverBlocksTheBroker: producers and consumers run a
// bounded load while several scrapers scrape without pause and one
// stalled scraper holds a request open without reading its answer. Every
// send and pull succeeds, every scrape parses, and the final counters equal
// the load. Run with -race, it also checks the exporter's reads against
// the broker's writes.
//
// The store flushes asynchronously and sends may wait in the send queue as
// long as they need: a slow disk or a busy machine must not fail a test of
// what the exporter does.
func TestScrapeUnderLoadNeverBlocksTheBroker(t *testing.T) {
	e := startEnvWith(t, broker.OpenStore(storeConfig(t.TempDir(), flush.Async), broker.DefaultConfig().DelayLevels),
		func(c *broker.Config) { c.SendQueueMaxWait = time.Minute })
	const topic, producers, each = "LoadTopic", 4, 150
	e.createTopic(topic, 4)

	// The stalled scraper: it sends a request and never reads.
	stalled, err := net.Dial("tcp", e.metrics.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	if _, err := fmt.Fprintf(stalled, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", Path); err != nil {
		t.Fatal(err)
	}

	var done atomic.Bool
	var scrapes atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 3 {
		wg.Go(func() {
			for i := 0; !done.Load() && i < 10000; i++ {
				fs, err := scrapeURL("http://" + e.metrics.Addr() + Path)
				if err != nil {
					errs <- err
					return
				}
				if fs["rocketmq_rpc_latency"] == nil && scrapes.Load() > 50 {
					errs <- fmt.Errorf("scrape %d without rpc latency", i)
					return
				}
				scrapes.Add(1)
				time.Sleep(time.Millisecond)
			}
		})
	}
	var load sync.WaitGroup
	var pulled atomic.Int64 // messages the pulls returned (the last may not be dispatched yet)
	for p := range producers {
		load.Go(func() {
			for i := range each {
				resp, err := e.invoke(protocol.ReqSendMessageV2, sendExt(topic, int32(p)), fmt.Appendf(nil, "p%d-%d", p, i))
				if err != nil || resp.Code != protocol.RespSuccess {
					errs <- fmt.Errorf("send: %v %+v", err, resp)
					return
				}
				if i%10 == 9 {
					// The consume queue is built from the commit log in the
					// background, as in RocketMQ: a pull right after a send may
					// find the queue not yet dispatched that far (NOT_FOUND with
					// OFFSET_OVERFLOW_ONE, or OFFSET_MOVED with
					// OFFSET_OVERFLOW_BADLY). Those are retried; anything else
					// fails the test.
					deadline := time.Now().Add(time.Minute)
					for {
						resp, err := e.invoke(protocol.ReqPullMessage, pullExt("load-group", topic, int32(p), int64(i-9), 10), nil)
						if err == nil && resp.Code == protocol.RespSuccess {
							pulled.Add(int64(records(t, resp.Body)))
							break
						}
						notYet := err == nil && (resp.Code == protocol.RespPullNotFound || resp.Code == protocol.RespPullOffsetMoved)
						if !notYet || time.Now().After(deadline) {
							errs <- fmt.Errorf("pull: %v %+v", err, resp)
							return
						}
						time.Sleep(2 * time.Millisecond)
					}
				}
			}
		})
	}
	loadDone := make(chan struct{})
	go func() { load.Wait(); close(loadDone) }()
	select {
	case <-loadDone:
	case <-time.After(2 * time.Minute):
		t.Fatal("the load did not finish while being scraped")
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if scrapes.Load() == 0 {
		t.Fatal("no scrape completed during the load")
	}

	// The stalled scraper's answer is still there to read.
	_ = stalled.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := bufio.NewReader(stalled).ReadString('\n'); err != nil || !strings.Contains(line, "200") {
		t.Fatalf("stalled scrape: %q %v", line, err)
	}

	const total = producers * each
	fs := scrapeUntil(t, e.metrics.Addr(), "every send observed", func(fs families) bool {
		return fs.histCount("rocketmq_rpc_latency", map[string]string{"request_code": "send_message_v2", "response_code": "success"}) == total
	})
	if got := fs.value("rocketmq_messages_in_total", map[string]string{"topic": topic}); got != total {
		t.Fatalf("messages in %v, want %d", got, total)
	}
	if got := fs.value("rocketmq_messages_out_total", map[string]string{"topic": topic, "consumer_group": "load-group"}); got != float64(pulled.Load()) || got < total/2 {
		t.Fatalf("messages out %v, want the %d pulled", got, pulled.Load())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.metrics.Close(ctx); err != nil {
		t.Fatalf("close with a stalled scraper: %v", err)
	}
}

// TestConnectionMetrics: heartbeats show up as RocketMQ's producer and
// consumer connection gauges, labelled with the client's language, version
// and (consumers) group and consume mode.
func TestConnectionMetrics(t *testing.T) {
	e := startEnv(t, broker.WithStore(memstore.New()))
	hb := broker.HeartbeatData{ClientID: "10.0.0.9@x", ProducerDataSet: []broker.ProducerData{{GroupName: "pg"}},
		ConsumerDataSet: []broker.ConsumerData{{GroupName: "pull-group", ConsumeType: "CONSUME_ACTIVELY",
			MessageModel: broker.Clustering, ConsumeFromWhere: "CONSUME_FROM_FIRST_OFFSET", SubscriptionDataSet: []broker.SubscriptionData{}}}}
	body, err := json.Marshal(hb)
	if err != nil {
		t.Fatal(err)
	}
	req := remoting.NewRequest(protocol.ReqHeartBeat, nil)
	req.Body = body
	req.Language, req.Version = remoting.LanguageJava, 453
	resp, err := e.client.InvokeSync(t.Context(), e.b.Addr(), req)
	if err != nil || resp.Code != protocol.RespSuccess {
		t.Fatalf("heartbeat: %v %+v", err, resp)
	}
	fs := scrape(t, e.metrics.Addr())
	if got := fs.value("rocketmq_producer_connections", map[string]string{"language": "java", "version": "453", "protocol_type": "remoting"}); got != 1 {
		t.Errorf("producer connections %v, want 1", got)
	}
	if got := fs.value("rocketmq_consumer_connections", map[string]string{"consumer_group": "pull-group", "consume_mode": "pull", "language": "java"}); got != 1 {
		t.Errorf("consumer connections %v, want 1", got)
	}
}

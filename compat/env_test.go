package compat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

// TestMain re-runs the test binary with HOME in a temporary directory: the
// client reads HOME at init to place the broadcasting consumers' local
// offset files, and its log level from ROCKETMQ_GO_LOG_LEVEL.
func TestMain(m *testing.M) {
	if os.Getenv("BROKERLAB_COMPAT_CHILD") == "" {
		home, err := os.MkdirTemp("", "brokerlab-compat-home-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		cmd := exec.Command(os.Args[0], os.Args[1:]...)
		cmd.Env = append(os.Environ(), "BROKERLAB_COMPAT_CHILD=1", "HOME="+home, "ROCKETMQ_GO_LOG_LEVEL=error")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		err = cmd.Run()
		_ = os.RemoveAll(home)
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	rlog.SetLogLevel("error")
	os.Exit(m.Run())
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// cluster is a name server and one broker over engine/store on loopback.
type cluster struct {
	t      *testing.T
	ns     *namesrv.Server
	b      *broker.Broker
	dir    string
	listen string
	nsr    primitive.NsResolver
	rc     *remoting.Client // brokerlab's own client, for broker-side checks
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	cfg := namesrv.DefaultConfig()
	cfg.Remoting.Addr = "127.0.0.1:0"
	cfg.Logger = quiet
	ns := namesrv.New(cfg)
	if err := ns.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ns.Shutdown(context.Background()) })
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	c := &cluster{t: t, ns: ns, dir: t.TempDir(), listen: "127.0.0.1:0", rc: remoting.NewClient(ccfg),
		nsr: primitive.NewPassthroughResolver([]string{ns.Addr()})}
	t.Cleanup(func() { _ = c.rc.Close() })
	c.startBroker()
	c.listen = c.b.Addr() // a restarted broker comes back on the same address
	return c
}

// startBroker opens the store in c.dir and starts a broker on c.listen.
// Retries happen after 1 s (every delay level is 1 s) to keep the test short.
func (c *cluster) startBroker() {
	c.t.Helper()
	cfg := broker.DefaultConfig()
	cfg.ListenAddr = c.listen
	cfg.HA.ListenAddr = "127.0.0.1:0" // not listen port + 1, which another socket may hold
	cfg.NamesrvAddrs = []string{c.ns.Addr()}
	cfg.Logger = quiet
	levels, err := broker.ParseDelayLevels("1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s")
	if err != nil {
		c.t.Fatal(err)
	}
	cfg.DelayLevels = levels
	scfg := store.DefaultConfig(c.dir)
	scfg.CommitLog.Flush = flush.DefaultConfig(flush.Group)
	scfg.CommitLog.SegmentSize = 16 << 20
	scfg.ConsumeQueue = consumequeue.Config{UnitsPerFile: 10000}
	scfg.Index = index.Config{MaxHashSlots: 4096, MaxIndexNum: 16384, MaxQueryNum: 64}
	scfg.ReadCacheBytes = 1 << 20
	scfg.CleanInterval = 0
	scfg.Logger = quiet
	b, err := broker.New(cfg, broker.OpenStore(scfg, levels))
	if err != nil {
		c.t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		c.t.Fatal(err)
	}
	c.b = b
	c.t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
}

func (c *cluster) restartBroker() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.b.Shutdown(ctx); err != nil {
		c.t.Fatalf("broker shutdown: %v", err)
	}
	if _, err := os.Stat(store.AbortPath(c.dir)); !os.IsNotExist(err) {
		c.t.Fatalf("abort file left after a clean shutdown (%v)", err)
	}
	c.startBroker()
}

// waitRoute waits until the name server serves topic.
func (c *cluster) waitRoute(topic string) {
	c.t.Helper()
	waitUntil(c.t, "route of "+topic, 10*time.Second, func() bool { _, ok := c.ns.TopicRoute(topic); return ok })
}

// members is the broker's answer to GET_CONSUMER_LIST_BY_GROUP.
func (c *cluster) members(group string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req := remoting.NewRequest(protocol.ReqGetConsumerListByGroup, remoting.ExtFields{"consumerGroup": group})
	resp, err := c.rc.InvokeSync(ctx, c.b.Addr(), req)
	if err != nil || resp.Code != protocol.RespSuccess {
		return nil
	}
	var body struct {
		ConsumerIDList []string `json:"consumerIdList"`
	}
	_ = json.Unmarshal(resp.Body, &body)
	return body.ConsumerIDList
}

// committedOffset is the broker's answer to QUERY_CONSUMER_OFFSET (-1 when
// the group has committed none for the queue).
func (c *cluster) committedOffset(group, topic string, queueID int32) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ext := remoting.ExtFields{"consumerGroup": group, "topic": topic}
	ext.SetInt32("queueId", queueID)
	resp, err := c.rc.InvokeSync(ctx, c.b.Addr(), remoting.NewRequest(protocol.ReqQueryConsumerOffset, ext))
	if err != nil {
		c.t.Fatalf("QUERY_CONSUMER_OFFSET: %v", err)
	}
	if resp.Code != protocol.RespSuccess {
		return -1
	}
	n, err := resp.ExtFields.Int64("offset")
	if err != nil {
		c.t.Fatalf("QUERY_CONSUMER_OFFSET: %v", err)
	}
	return n
}

// maxOffset is the broker's answer to GET_MAX_OFFSET.
func (c *cluster) maxOffset(topic string, queueID int32) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ext := remoting.ExtFields{"topic": topic}
	ext.SetInt32("queueId", queueID)
	resp, err := c.rc.InvokeSync(ctx, c.b.Addr(), remoting.NewRequest(protocol.ReqGetMaxOffset, ext))
	if err != nil {
		c.t.Fatalf("GET_MAX_OFFSET: %v", err)
	}
	n, err := resp.ExtFields.Int64("offset")
	if err != nil {
		c.t.Fatalf("GET_MAX_OFFSET: %v", err)
	}
	return n
}

func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// received counts deliveries per body and per consumer.
type received struct {
	mu         sync.Mutex
	count      map[string]int            // body → deliveries
	byConsumer map[string]map[string]int // consumer → body → deliveries
	topics     map[string]string         // body → topic as delivered
}

func newReceived() *received {
	return &received{count: map[string]int{}, byConsumer: map[string]map[string]int{}, topics: map[string]string{}}
}

func (r *received) add(consumer string, m *primitive.MessageExt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	body := string(m.Body)
	r.count[body]++
	r.topics[body] = m.Topic
	if r.byConsumer[consumer] == nil {
		r.byConsumer[consumer] = map[string]int{}
	}
	r.byConsumer[consumer][body]++
}

// has reports whether every body was delivered (to consumer, or to anyone
// when consumer is "").
func (r *received) has(consumer string, bodies []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.count
	if consumer != "" {
		seen = r.byConsumer[consumer]
	}
	for _, b := range bodies {
		if seen[b] == 0 {
			return false
		}
	}
	return true
}

// missing lists the bodies not delivered yet.
func (r *received) missing(consumer string, bodies []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.count
	if consumer != "" {
		seen = r.byConsumer[consumer]
	}
	var out []string
	for _, b := range bodies {
		if seen[b] == 0 {
			out = append(out, b)
		}
	}
	return out
}

func (r *received) of(consumer string) map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for b, n := range r.byConsumer[consumer] {
		out[b] = n
	}
	return out
}

func (r *received) total() (deliveries, unique int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.count {
		deliveries += n
	}
	return deliveries, len(r.count)
}

func (r *received) deliveries(body string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count[body]
}

func (r *received) topicOf(body string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.topics[body]
}

package namesrv

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// fakeClock is an injectable clock for liveness tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func startNamesrv(t *testing.T, tweak func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Remoting.Addr = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.DiscardHandler)
	if tweak != nil {
		tweak(&cfg)
	}
	s := New(cfg)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s
}

func newClient(t *testing.T) *remoting.Client {
	t.Helper()
	cfg := remoting.DefaultClientConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	c := remoting.NewClient(cfg)
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func brokerReq(cluster, name, addr string, id int64, counter int64, topics ...protocol.TopicConfig) RegisterBrokerRequest {
	table := make(map[string]protocol.TopicConfig)
	for _, tc := range topics {
		table[tc.TopicName] = tc
	}
	return RegisterBrokerRequest{ClusterName: cluster, BrokerName: name, BrokerAddr: addr,
		HAServerAddr: strings.Replace(addr, ":1", ":2", 1), BrokerID: id,
		Body: protocol.RegisterBrokerBody{TopicConfigSerializeWrapper: protocol.TopicConfigSerializeWrapper{
			DataVersion: protocol.DataVersion{Counter: counter, Timestamp: 1700000000000}, TopicConfigTable: table}}}
}

// routeRaw sends GET_ROUTEINFO_BY_TOPIC with the given version and returns the reply.
func routeRaw(t *testing.T, c *remoting.Client, ns, topic string, version int32, ext remoting.ExtFields) *remoting.Command {
	t.Helper()
	if ext == nil {
		ext = remoting.ExtFields{}
	}
	ext["topic"] = topic
	req := remoting.NewRequest(protocol.ReqGetRouteInfoByTopic, ext)
	req.Version = version
	resp, err := c.InvokeSync(ctx(t), ns, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// goClientBrokerAddrs parses brokerAddrs the way rocketmq-client-go does
// (client-protocol.md §2.1): raw object text, drop the braces, split on ',',
// then on the first ':', strip quotes from key and value.
func goClientBrokerAddrs(t *testing.T, body string) map[int64]string {
	t.Helper()
	i := strings.Index(body, `"brokerAddrs":`)
	if i < 0 {
		t.Fatalf("no brokerAddrs in %s", body)
	}
	raw := body[i+len(`"brokerAddrs":`):]
	raw = raw[:strings.IndexByte(raw, '}')+1]
	out := make(map[int64]string)
	for _, item := range strings.Split(raw[1:len(raw)-1], ",") {
		j := strings.Index(item, ":")
		if j < 0 {
			continue
		}
		id, _ := strconv.ParseInt(strings.ReplaceAll(item[:j], `"`, ""), 10, 64)
		out[id] = strings.ReplaceAll(item[j+1:], `"`, "")
	}
	return out
}

func TestRegisterRouteUnregister(t *testing.T) {
	ns := startNamesrv(t, nil)
	c := newClient(t)
	req := brokerReq("DefaultCluster", "broker-a", "127.0.0.1:10911", protocol.MasterID, 1, protocol.NewTopicConfig("TopicA", 8))
	res, err := RegisterBroker(ctx(t), c, ns.Addr(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res != (RegisterBrokerResult{}) {
		t.Fatalf("master got %+v", res)
	}

	// The Go client (version 317) gets fastjson's unquoted keys, compact.
	resp := routeRaw(t, c, ns.Addr(), "TopicA", protocol.VersionGoClient, nil)
	want := `{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster",` +
		`"enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,` +
		`"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":8}]}`
	if resp.Code != protocol.RespSuccess || string(resp.Body) != want {
		t.Fatalf("route for version 317:\n got %d %s\nwant %s", resp.Code, resp.Body, want)
	}
	if addrs := goClientBrokerAddrs(t, string(resp.Body)); addrs[0] != "127.0.0.1:10911" || len(addrs) != 1 {
		t.Fatalf("Go client would parse brokerAddrs as %v", addrs)
	}
	// Version ≥ 401, or acceptStandardJsonOnly, gets standard JSON.
	for _, r := range []*remoting.Command{
		routeRaw(t, c, ns.Addr(), "TopicA", protocol.VersionV4_9_4, nil),
		routeRaw(t, c, ns.Addr(), "TopicA", protocol.VersionGoClient, remoting.ExtFields{"acceptStandardJsonOnly": "true"}),
	} {
		if !strings.Contains(string(r.Body), `"brokerAddrs":{"0":"127.0.0.1:10911"}`) {
			t.Fatalf("standard JSON route: %s", r.Body)
		}
	}

	rd, err := GetRouteInfo(ctx(t), c, ns.Addr(), "TopicA")
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.QueueDatas) != 1 || rd.QueueDatas[0] != (protocol.QueueData{BrokerName: "broker-a", Perm: 6, ReadQueueNums: 8, WriteQueueNums: 8}) ||
		len(rd.BrokerDatas) != 1 || rd.BrokerDatas[0].MasterAddr() != "127.0.0.1:10911" {
		t.Fatalf("route %+v", rd)
	}

	tl, err := c.InvokeSync(ctx(t), ns.Addr(), remoting.NewRequest(protocol.ReqGetAllTopicListFromNameserver, nil))
	if err != nil || string(tl.Body) != `{"topicList":["TopicA"]}` {
		t.Fatalf("topic list: %v %s", err, tl.Body)
	}

	if err := UnregisterBroker(ctx(t), c, ns.Addr(), UnregisterBrokerRequest{ClusterName: "DefaultCluster",
		BrokerName: "broker-a", BrokerAddr: "127.0.0.1:10911"}); err != nil {
		t.Fatal(err)
	}
	resp = routeRaw(t, c, ns.Addr(), "TopicA", protocol.VersionGoClient, nil)
	if resp.Code != protocol.RespTopicNotExist || !strings.Contains(resp.Remark, "TopicA") {
		t.Fatalf("after unregister: %+v", resp)
	}
	if _, err := GetRouteInfo(ctx(t), c, ns.Addr(), "TopicA"); !errors.Is(err, ErrTopicNotExist) {
		t.Fatalf("GetRouteInfo after unregister: %v", err)
	}
	if ci := ns.ClusterInfo(); len(ci.BrokerAddrTable) != 0 || len(ci.ClusterAddrTable) != 0 {
		t.Fatalf("cluster info after unregister: %+v", ci)
	}
}

func TestTwoBrokersOneCluster(t *testing.T) {
	ns := startNamesrv(t, nil)
	c := newClient(t)
	topic := protocol.NewTopicConfig("Spanning", 4)
	for _, r := range []RegisterBrokerRequest{
		brokerReq("C1", "broker-b", "127.0.0.1:10921", protocol.MasterID, 1, topic, protocol.NewTopicConfig("OnlyB", 2)),
		brokerReq("C1", "broker-a", "127.0.0.1:10911", protocol.MasterID, 1, topic),
	} {
		if _, err := RegisterBroker(ctx(t), c, ns.Addr(), r); err != nil {
			t.Fatal(err)
		}
	}
	// A slave of broker-a learns its master's addresses.
	slave := brokerReq("C1", "broker-a", "127.0.0.1:10912", 1, 1, topic)
	res, err := RegisterBroker(ctx(t), c, ns.Addr(), slave)
	if err != nil {
		t.Fatal(err)
	}
	if res.MasterAddr != "127.0.0.1:10911" || res.HAServerAddr != "127.0.0.1:20911" {
		t.Fatalf("slave result %+v", res)
	}

	resp := routeRaw(t, c, ns.Addr(), "Spanning", protocol.VersionGoClient, nil)
	body := string(resp.Body)
	if !strings.Contains(body, `"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10912"},"brokerName":"broker-a"`) ||
		!strings.Contains(body, `"brokerAddrs":{0:"127.0.0.1:10921"},"brokerName":"broker-b"`) {
		t.Fatalf("route body %s", body)
	}
	if addrs := goClientBrokerAddrs(t, body); addrs[0] != "127.0.0.1:10911" || addrs[1] != "127.0.0.1:10912" {
		t.Fatalf("Go client parse %v", addrs)
	}
	rd, err := protocol.DecodeTopicRouteData(resp.Body) // the fastjson form decodes too
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.QueueDatas) != 2 || rd.QueueDatas[0].BrokerName != "broker-a" || rd.QueueDatas[1].BrokerName != "broker-b" ||
		len(rd.BrokerDatas) != 2 || rd.BrokerDatas[0].BrokerAddrs[1] != "127.0.0.1:10912" {
		t.Fatalf("route %+v", rd)
	}

	ci, err := GetClusterInfo(ctx(t), c, ns.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if got := ci.ClusterAddrTable["C1"]; len(got) != 2 || got[0] != "broker-a" || got[1] != "broker-b" {
		t.Fatalf("cluster table %+v", ci.ClusterAddrTable)
	}
	tl, _ := c.InvokeSync(ctx(t), ns.Addr(), remoting.NewRequest(protocol.ReqGetTopicsByCluster, remoting.ExtFields{"cluster": "C1"}))
	if string(tl.Body) != `{"topicList":["OnlyB","Spanning"]}` {
		t.Fatalf("topics by cluster %s", tl.Body)
	}

	// broker-b leaves: its topic disappears, the spanning topic keeps broker-a.
	if err := UnregisterBroker(ctx(t), c, ns.Addr(), UnregisterBrokerRequest{ClusterName: "C1", BrokerName: "broker-b",
		BrokerAddr: "127.0.0.1:10921"}); err != nil {
		t.Fatal(err)
	}
	if _, err := GetRouteInfo(ctx(t), c, ns.Addr(), "OnlyB"); !errors.Is(err, ErrTopicNotExist) {
		t.Fatalf("OnlyB: %v", err)
	}
	rd, err = GetRouteInfo(ctx(t), c, ns.Addr(), "Spanning")
	if err != nil || len(rd.QueueDatas) != 1 || rd.QueueDatas[0].BrokerName != "broker-a" {
		t.Fatalf("Spanning after b left: %+v %v", rd, err)
	}
	// The master leaves, the slave stays: still routable for reads, no master for writes.
	if err := UnregisterBroker(ctx(t), c, ns.Addr(), UnregisterBrokerRequest{ClusterName: "C1", BrokerName: "broker-a",
		BrokerAddr: "127.0.0.1:10911"}); err != nil {
		t.Fatal(err)
	}
	rd, err = GetRouteInfo(ctx(t), c, ns.Addr(), "Spanning")
	if err != nil || rd.BrokerDatas[0].MasterAddr() != "" || rd.BrokerDatas[0].BrokerAddrs[1] != "127.0.0.1:10912" {
		t.Fatalf("Spanning with slave only: %+v %v", rd, err)
	}
	// Delete the topic (admin DeleteTopic → 216).
	if r, _ := c.InvokeSync(ctx(t), ns.Addr(), remoting.NewRequest(protocol.ReqDeleteTopicInNamesrv,
		remoting.ExtFields{"topic": "Spanning"})); r.Code != protocol.RespSuccess {
		t.Fatalf("delete: %+v", r)
	}
	if _, ok := ns.TopicRoute("Spanning"); ok {
		t.Fatal("deleted topic still routed")
	}
}

func TestLivenessExpiryWithFakeClock(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	ns := startNamesrv(t, func(c *Config) {
		c.Now = clock.Now
		c.ScanInterval = 5 * time.Millisecond
	})
	// Separate connections: expiry closes the expired broker's connection,
	// which drops whatever else registered over it.
	if _, err := RegisterBroker(ctx(t), newClient(t), ns.Addr(), brokerReq("C", "slow", "127.0.0.1:10911", 0, 1, protocol.NewTopicConfig("T1", 1))); err != nil {
		t.Fatal(err)
	}
	short := brokerReq("C", "quick", "127.0.0.1:10921", 0, 1, protocol.NewTopicConfig("T2", 1))
	short.HeartbeatTimeout = 10 * time.Second
	if _, err := RegisterBroker(ctx(t), newClient(t), ns.Addr(), short); err != nil {
		t.Fatal(err)
	}
	clock.Advance(11 * time.Second) // past the 10 s timeout only
	waitFor(t, "broker with 10 s timeout to expire", func() bool { _, ok := ns.TopicRoute("T2"); return !ok })
	if _, ok := ns.TopicRoute("T1"); !ok {
		t.Fatal("broker with the default 120 s timeout expired after 11 s")
	}
	clock.Advance(110 * time.Second) // 121 s after registration
	waitFor(t, "broker to expire after 120 s", func() bool { _, ok := ns.TopicRoute("T1"); return !ok })
	if ci := ns.ClusterInfo(); len(ci.BrokerAddrTable) != 0 {
		t.Fatalf("expired brokers left %+v", ci)
	}
}

func TestRouteTableScan(t *testing.T) {
	rt := newRouteTable(false)
	t0 := time.Unix(1000, 0)
	rt.register(registration{ClusterName: "C", BrokerName: "b", BrokerAddr: "a:1", Timeout: 120 * time.Second, Now: t0,
		Topics: protocol.TopicConfigSerializeWrapper{TopicConfigTable: map[string]protocol.TopicConfig{"T": protocol.NewTopicConfig("T", 2)}}})
	if removed, _ := rt.scanNotActive(t0.Add(120 * time.Second)); len(removed) != 0 {
		t.Fatalf("removed at exactly the timeout: %v", removed)
	}
	if !rt.touch("C", "a:1", t0.Add(100*time.Second)) {
		t.Fatal("touch of a registered broker")
	}
	if removed, _ := rt.scanNotActive(t0.Add(200 * time.Second)); len(removed) != 0 {
		t.Fatalf("a heartbeat at 100 s did not extend liveness: %v", removed)
	}
	if removed, _ := rt.scanNotActive(t0.Add(221 * time.Second)); len(removed) != 1 {
		t.Fatalf("not removed after timeout: %v", removed)
	}
	if _, ok := rt.topicRoute("T"); ok {
		t.Fatal("route survived expiry")
	}
}

func TestConnectionCloseRemovesBroker(t *testing.T) {
	ns := startNamesrv(t, nil)
	leaving, staying := newClient(t), newClient(t)
	if _, err := RegisterBroker(ctx(t), leaving, ns.Addr(), brokerReq("C", "gone", "127.0.0.1:10911", 0, 1, protocol.NewTopicConfig("T", 4))); err != nil {
		t.Fatal(err)
	}
	if _, err := RegisterBroker(ctx(t), staying, ns.Addr(), brokerReq("C", "kept", "127.0.0.1:10921", 0, 1, protocol.NewTopicConfig("T", 4))); err != nil {
		t.Fatal(err)
	}
	leaving.Close()
	waitFor(t, "closed connection's broker to be removed", func() bool {
		rd, ok := ns.TopicRoute("T")
		return ok && len(rd.BrokerDatas) == 1
	})
	rd, _ := ns.TopicRoute("T")
	if rd.BrokerDatas[0].BrokerName != "kept" || len(rd.QueueDatas) != 1 || rd.QueueDatas[0].BrokerName != "kept" {
		t.Fatalf("route after close %+v", rd)
	}
}

func TestMalformedRegistration(t *testing.T) {
	ns := startNamesrv(t, nil)
	c := newClient(t)
	good := brokerReq("C", "b", "127.0.0.1:10911", 0, 1, protocol.NewTopicConfig("T", 4))
	send := func(ext remoting.ExtFields, body string, version int32) *remoting.Command {
		req := remoting.NewRequest(protocol.ReqRegisterBroker, ext)
		req.Body = []byte(body)
		req.Version = version
		resp, err := c.InvokeSync(ctx(t), ns.Addr(), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	header := func() remoting.ExtFields {
		return remoting.ExtFields{"brokerName": "b", "brokerAddr": "127.0.0.1:10911", "clusterName": "C",
			"haServerAddr": "", "brokerId": "0"}
	}
	if r := send(header(), `{"topicConfigSerializeWrapper":{"topicConfigTable":[`, remoting.DefaultVersion); r.Code != protocol.RespSystemError ||
		!strings.Contains(r.Remark, "malformed body") {
		t.Fatalf("malformed body: %+v", r)
	}
	h := header()
	h["bodyCrc32"] = "12345"
	if r := send(h, `{}`, remoting.DefaultVersion); r.Code != protocol.RespSystemError || r.Remark != "crc32 not match" {
		t.Fatalf("crc mismatch: %+v", r)
	}
	h = header()
	delete(h, "brokerId")
	if r := send(h, `{}`, remoting.DefaultVersion); r.Code != protocol.RespSystemError || !strings.Contains(r.Remark, "brokerId") {
		t.Fatalf("missing brokerId: %+v", r)
	}
	h = header()
	h["brokerId"] = "zero"
	if r := send(h, `{}`, remoting.DefaultVersion); r.Code != protocol.RespSystemError || !strings.Contains(r.Remark, "brokerId") {
		t.Fatalf("malformed brokerId: %+v", r)
	}
	if ci := ns.ClusterInfo(); len(ci.BrokerAddrTable) != 0 {
		t.Fatalf("rejected registrations changed state: %+v", ci)
	}
	// The same connection still works, and a pre-3.0.11 body (bare wrapper) is read as such.
	if r := send(header(), `{"dataVersion":{"counter":1,"timestamp":1},"topicConfigTable":{"Old":{"topicName":"Old",`+
		`"readQueueNums":2,"writeQueueNums":2,"perm":6}}}`, 36); r.Code != protocol.RespSuccess || string(r.Body) != `{"table":{}}` {
		t.Fatalf("old-version registration: %+v", r)
	}
	if _, ok := ns.TopicRoute("Old"); !ok {
		t.Fatal("old-version body topics not registered")
	}
	if _, err := RegisterBroker(ctx(t), c, ns.Addr(), good); err != nil {
		t.Fatal(err)
	}
	if r := send(remoting.ExtFields{}, "", remoting.DefaultVersion); r.Code != protocol.RespSystemError {
		t.Fatalf("empty header: %+v", r)
	}
	r, err := c.InvokeSync(ctx(t), ns.Addr(), remoting.NewRequest(protocol.ReqPutKVConfig, nil))
	if err != nil || r.Code != protocol.RespRequestCodeNotSupported {
		t.Fatalf("unsupported code: %+v %v", r, err)
	}
}

func TestDataVersionGatesTopicUpdates(t *testing.T) {
	ns := startNamesrv(t, nil)
	c := newClient(t)
	reg := func(counter int64, topics ...protocol.TopicConfig) {
		t.Helper()
		if _, err := RegisterBroker(ctx(t), c, ns.Addr(), brokerReq("C", "b", "127.0.0.1:10911", 0, counter, topics...)); err != nil {
			t.Fatal(err)
		}
	}
	reg(1, protocol.NewTopicConfig("T", 4))
	reg(1, protocol.NewTopicConfig("T", 16)) // same data version: the periodic re-registration changes nothing
	if rd, _ := ns.TopicRoute("T"); rd.QueueDatas[0].WriteQueueNums != 4 {
		t.Fatalf("unchanged version updated queues: %+v", rd.QueueDatas)
	}
	reg(2, protocol.NewTopicConfig("T", 16))
	if rd, _ := ns.TopicRoute("T"); rd.QueueDatas[0].WriteQueueNums != 16 {
		t.Fatalf("new version did not update queues: %+v", rd.QueueDatas)
	}

	// QUERY_DATA_VERSION and BROKER_HEARTBEAT.
	q := remoting.NewRequest(protocol.ReqQueryDataVersion, remoting.ExtFields{"brokerName": "b",
		"brokerAddr": "127.0.0.1:10911", "clusterName": "C", "brokerId": "0"})
	q.Body = []byte(`{"counter":2,"stateVersion":0,"timestamp":1700000000000}`)
	r, err := c.InvokeSync(ctx(t), ns.Addr(), q)
	if err != nil || r.Code != protocol.RespSuccess || r.ExtFields["changed"] != "false" {
		t.Fatalf("query data version: %+v %v", r, err)
	}
	hb := remoting.NewRequest(protocol.ReqBrokerHeartbeat, remoting.ExtFields{"clusterName": "C", "brokerAddr": "127.0.0.1:10911"})
	if r, err := c.InvokeSync(ctx(t), ns.Addr(), hb); err != nil || r.Code != protocol.RespSuccess {
		t.Fatalf("broker heartbeat: %+v %v", r, err)
	}
}

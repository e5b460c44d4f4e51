package promexport

import (
	"context"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// TestNamesrvMetrics: a name server with the exporter counts its requests
// per code (the latency histogram's count) and reports the registered
// brokers per cluster and the topics with routes.
func TestNamesrvMetrics(t *testing.T) {
	cfg := namesrv.DefaultConfig()
	cfg.Remoting.Addr = "127.0.0.1:0"
	cfg.Logger = quiet
	ns := namesrv.New(cfg)
	col := NewNamesrvCollector(ns, "ns-test")
	reg, err := NewRegistry(col)
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ns.Shutdown(context.Background()) })
	srv, err := Listen("127.0.0.1:0", reg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })

	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	cl := remoting.NewClient(ccfg)
	t.Cleanup(func() { _ = cl.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	topics := map[string]protocol.TopicConfig{}
	for _, name := range []string{"T1", "T2", "T3"} {
		topics[name] = protocol.NewTopicConfig(name, 4)
	}
	for _, b := range []struct {
		name, addr string
		id         int64
	}{{"broker-a", "127.0.0.1:10911", 0}, {"broker-a", "127.0.0.1:10912", 1}, {"broker-b", "127.0.0.1:10921", 0}} {
		req := namesrv.RegisterBrokerRequest{ClusterName: "NsCluster", BrokerName: b.name, BrokerAddr: b.addr, BrokerID: b.id,
			Body: protocol.RegisterBrokerBody{TopicConfigSerializeWrapper: protocol.TopicConfigSerializeWrapper{
				DataVersion: protocol.DataVersion{Counter: 1, Timestamp: 1700000000000}, TopicConfigTable: topics}}}
		if _, err := namesrv.RegisterBroker(ctx, cl, ns.Addr(), req); err != nil {
			t.Fatal(err)
		}
	}
	const routes = 5
	for range routes {
		resp, err := cl.InvokeSync(ctx, ns.Addr(), remoting.NewRequest(protocol.ReqGetRouteInfoByTopic, remoting.ExtFields{"topic": "T1"}))
		if err != nil || resp.Code != protocol.RespSuccess {
			t.Fatalf("route: %v %+v", err, resp)
		}
	}
	if resp, err := cl.InvokeSync(ctx, ns.Addr(), remoting.NewRequest(protocol.ReqGetRouteInfoByTopic, remoting.ExtFields{"topic": "Nope"})); err != nil || resp.Code != protocol.RespTopicNotExist {
		t.Fatalf("route of an unknown topic: %v %+v", err, resp)
	}

	// Observers are told after the reply is written: the client may have
	// every answer before the last request is observed, so wait for all.
	route := map[string]string{"request_code": "get_routeinfo_by_topic", "response_code": "success"}
	missing := map[string]string{"request_code": "get_routeinfo_by_topic", "response_code": "topic_not_exist"}
	fs := scrapeUntil(t, srv.Addr(), "the route queries observed", func(fs families) bool {
		return fs.histCount("rocketmq_rpc_latency", route) == routes && fs.histCount("rocketmq_rpc_latency", missing) >= 1
	})
	if c := fs.histCount("rocketmq_rpc_latency", map[string]string{"request_code": "register_broker", "response_code": "success"}); c != 3 {
		t.Errorf("register_broker count %d, want 3", c)
	}
	if c := fs.histCount("rocketmq_rpc_latency", missing); c != 1 {
		t.Errorf("unknown-topic route count %d, want 1", c)
	}
	node := map[string]string{"node_type": "nameserver", "node_id": "ns-test", "cluster": "NsCluster"}
	if got := fs.value("brokerlab_namesrv_brokers", node); got != 3 {
		t.Errorf("brokers %v, want 3", got)
	}
	if got := fs.value("brokerlab_namesrv_broker_names", map[string]string{"cluster": "NsCluster"}); got != 2 {
		t.Errorf("broker names %v, want 2", got)
	}
	if got := fs.value("brokerlab_namesrv_topics", nil); got != 3 {
		t.Errorf("topics %v, want 3", got)
	}
	if got := fs.value("brokerlab_connections", nil); got < 1 {
		t.Errorf("connections %v", got)
	}
}

package namesrv

import (
	"log/slog"
	"testing"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// TestCountsAndObserver: Counts follows registrations and unregistrations
// per cluster, and an observer added before Start sees the requests.
func TestCountsAndObserver(t *testing.T) {
	rs := remoting.NewRequestStats()
	cfg := DefaultConfig()
	cfg.Remoting.Addr = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.DiscardHandler)
	ns := New(cfg)
	ns.AddObserver(rs)
	if err := ns.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ns.Shutdown(ctx(t)) })

	if c := ns.Counts(); c.Topics != 0 || len(c.Clusters) != 0 {
		t.Fatalf("empty name server counts %+v", c)
	}
	cl := newClient(t)
	for _, r := range []RegisterBrokerRequest{
		brokerReq("C1", "broker-a", "127.0.0.1:10911", protocol.MasterID, 1, protocol.NewTopicConfig("T1", 4), protocol.NewTopicConfig("T2", 4)),
		brokerReq("C1", "broker-a", "127.0.0.1:10912", 1, 1, protocol.NewTopicConfig("T1", 4)),
		brokerReq("C2", "broker-b", "127.0.0.1:10921", protocol.MasterID, 1, protocol.NewTopicConfig("T3", 2)),
	} {
		if _, err := RegisterBroker(ctx(t), cl, ns.Addr(), r); err != nil {
			t.Fatal(err)
		}
	}
	c := ns.Counts()
	want := []ClusterCounts{{"C1", 1, 2}, {"C2", 1, 1}}
	if c.Topics != 3 || len(c.Clusters) != 2 || c.Clusters[0] != want[0] || c.Clusters[1] != want[1] || c.Connections < 1 {
		t.Fatalf("counts %+v, want 3 topics and %+v", c, want)
	}
	req := remoting.NewRequest(protocol.ReqUnregisterBroker, remoting.ExtFields{
		"clusterName": "C1", "brokerName": "broker-a", "brokerAddr": "127.0.0.1:10912", "brokerId": "1"})
	if resp, err := cl.InvokeSync(ctx(t), ns.Addr(), req); err != nil || resp.Code != protocol.RespSuccess {
		t.Fatalf("unregister: %v %+v", err, resp)
	}
	if c := ns.Counts(); c.Clusters[0] != (ClusterCounts{"C1", 1, 1}) {
		t.Fatalf("after unregistering the slave: %+v", c)
	}
	waitFor(t, "three REGISTER_BROKER answers observed", func() bool {
		for _, l := range rs.Latencies() {
			if l.Code == protocol.ReqRegisterBroker && l.RespCode == protocol.RespSuccess && l.Count == 3 {
				return true
			}
		}
		return false
	})
}

package compat_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/ha"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

const (
	topicCluster = "CompatCluster"
	groupCluster = "compat_cluster"
)

// startNamesrvOnly is a cluster with a name server and no broker of its
// own (startCluster's broker is also called broker-a).
func startNamesrvOnly(t *testing.T) *cluster {
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
	c := &cluster{t: t, ns: ns, rc: remoting.NewClient(ccfg), nsr: primitive.NewPassthroughResolver([]string{ns.Addr()})}
	t.Cleanup(func() { _ = c.rc.Close() })
	return c
}

// startHABroker starts one broker of a master–slave pair over engine/store.
func startHABroker(t *testing.T, ns, name string, role broker.BrokerRole, id int64) *broker.Broker {
	t.Helper()
	return startHABrokerIn(t, ns, name, role, id, t.TempDir())
}

// startHABrokerIn is startHABroker with its store in dir.
func startHABrokerIn(t *testing.T, ns, name string, role broker.BrokerRole, id int64, dir string) *broker.Broker {
	t.Helper()
	cfg := broker.DefaultConfig()
	cfg.BrokerName = name
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.NamesrvAddrs = []string{ns}
	cfg.Logger = quiet
	cfg.Role, cfg.BrokerID = role, id
	cfg.HA = ha.Config{ListenAddr: "127.0.0.1:0", HeartbeatInterval: time.Second}
	cfg.HAClient = ha.ClientConfig{HeartbeatInterval: time.Second, ReconnectInterval: 100 * time.Millisecond}
	cfg.SlaveSyncInterval = 200 * time.Millisecond
	cfg.SlaveReadEnable = role == broker.Slave
	scfg := store.DefaultConfig(dir)
	scfg.CommitLog.Flush = flush.DefaultConfig(flush.Async)
	scfg.CommitLog.SegmentSize = 4 << 20
	scfg.ConsumeQueue = consumequeue.Config{UnitsPerFile: 10000}
	scfg.CleanInterval = 0
	scfg.Logger = quiet
	b, err := broker.New(cfg, broker.OpenStore(scfg, cfg.DelayLevels))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	return b
}

// TestTwoMasterSlavePairs: broker-a and broker-b, each a SYNC_MASTER with a
// slave, on one name server. The official producer spreads sends over both
// masters and push consumers balance the queues of both; after broker-a's
// master crashes (SIGKILL of its process: it does not unregister), the
// producer goes on on broker-b (client retry), the name server drops the
// master from the route (its connection closed), and the consumers read
// what broker-a still held from broker-a's slave.
//
// The official Go client fetches and commits consumer offsets only at a
// broker's master (FindBrokerAddrByName), so a consumer that has no offset
// for a queue yet cannot start on it while the master is down; pulls fall
// back to the slave (FindBrokerAddressInSubscribe). The consumers here hold
// their offsets from before the failure, as running consumers do.
func TestTwoMasterSlavePairs(t *testing.T) {
	c := startNamesrvOnly(t)
	ns := c.ns.Addr()
	// broker-a's master runs in a child process, to be SIGKILLed.
	masterA := startChildMaster(t, ns, "broker-a")
	startHABroker(t, ns, "broker-a", broker.Slave, 1)
	masterB := startHABroker(t, ns, "broker-b", broker.SyncMaster, 0)
	startHABroker(t, ns, "broker-b", broker.Slave, 1)
	masterA.waitLine("SLAVE_OK", 20*time.Second)
	waitUntil(t, "broker-b's slave to stream", 20*time.Second, func() bool { return masterB.HAService().IsSlaveOK(1) })
	for name, addr := range map[string]string{"broker-a": masterA.addr, "broker-b": masterB.Addr()} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := c.rc.InvokeSync(ctx, addr, remoting.NewRequest(protocol.ReqUpdateAndCreateTopic, remoting.ExtFields{
			"topic": topicCluster, "defaultTopic": "TBW102", "readQueueNums": "4", "writeQueueNums": "4", "perm": "6",
			"topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false"}))
		cancel()
		if err != nil || resp.Code != protocol.RespSuccess {
			t.Fatalf("create topic on %s: %v %v", name, resp, err)
		}
	}
	waitUntil(t, "the route to list both pairs", 10*time.Second, func() bool {
		rd, ok := c.ns.TopicRoute(topicCluster)
		if !ok || len(rd.QueueDatas) != 2 {
			return false
		}
		n := 0
		for _, bd := range rd.BrokerDatas {
			if bd.BrokerName == "broker-a" || bd.BrokerName == "broker-b" {
				if bd.BrokerAddrs[protocol.MasterID] != "" && bd.BrokerAddrs[1] != "" {
					n++
				}
			}
		}
		return n == 2
	})

	rec := newReceived()
	c1 := pushConsumer(t, c, groupCluster, "c1", topicCluster, "*", consumer.Clustering, rec, nil)
	defer c1.Shutdown()
	c2 := pushConsumer(t, c, groupCluster, "c2", topicCluster, "*", consumer.Clustering, rec, nil)
	defer c2.Shutdown()

	p, err := producer.NewDefaultProducer(producer.WithNsResolver(c.nsr), producer.WithGroupName("compat_cluster_pg"),
		producer.WithRetry(2), producer.WithInstanceName("cluster-producer"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	perBroker := map[string]int{}
	var before []string
	for i := range 200 {
		body := fmt.Sprintf("before-%04d", i)
		res, err := p.SendSync(context.Background(), msg(topicCluster, body, ""))
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send %s: %v %v", body, res, err)
		}
		perBroker[res.MessageQueue.BrokerName]++
		before = append(before, body)
	}
	if perBroker["broker-a"] < 50 || perBroker["broker-b"] < 50 {
		t.Fatalf("sends not spread over both masters: %v", perBroker)
	}
	waitUntil(t, "both consumers to receive everything", deliverLimit, func() bool { return rec.has("", before) })
	if len(rec.of("c1")) == 0 || len(rec.of("c2")) == 0 {
		t.Fatalf("queues not balanced: c1 got %d, c2 got %d", len(rec.of("c1")), len(rec.of("c2")))
	}

	// The consumers stop pulling (Suspend), and the pulls they hold on the
	// brokers are answered by one drain message per queue, so nothing of
	// what follows is pulled from broker-a's master.
	type suspender interface {
		Suspend()
		Resume()
	}
	for _, pc := range []shutdowner{c1, c2} {
		pc.(suspender).Suspend()
	}
	manual, err := producer.NewDefaultProducer(producer.WithNsResolver(c.nsr), producer.WithGroupName("compat_cluster_drain"),
		producer.WithQueueSelector(producer.NewManualQueueSelector()), producer.WithInstanceName("cluster-drain"))
	if err != nil {
		t.Fatal(err)
	}
	if err := manual.Start(); err != nil {
		t.Fatal(err)
	}
	defer manual.Shutdown()
	var drains []string
	for _, name := range []string{"broker-a", "broker-b"} {
		for q := range 4 {
			body := fmt.Sprintf("drain-%s-%d", name, q)
			m := msg(topicCluster, body, "")
			m.Queue = &primitive.MessageQueue{Topic: topicCluster, BrokerName: name, QueueId: q}
			if res, err := manual.SendSync(context.Background(), m); err != nil || res.Status != primitive.SendOK {
				t.Fatalf("drain send %s: %v %v", body, res, err)
			}
			drains = append(drains, body)
		}
	}
	// Both consumers had consumed everything and were idle, so each of the
	// eight queues had one pull held by its broker (held for up to the
	// client's 20 s suspend time, far longer than the sends above take).
	// Each drain message answers its queue's held pull, and the suspended
	// consumers issue no new pull: once all eight drains are delivered, no
	// pull is outstanding and the messages that follow stay undelivered
	// until Resume.
	waitUntil(t, "each queue's held pull to answer with its drain message", deliverLimit, func() bool { return rec.has("", drains) })

	var mid []string
	midOnA := 0
	for i := range 100 {
		body := fmt.Sprintf("mid-%04d", i)
		res, err := p.SendSync(context.Background(), msg(topicCluster, body, ""))
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send %s: %v %v", body, res, err)
		}
		if res.MessageQueue.BrokerName == "broker-a" {
			midOnA++
		}
		mid = append(mid, body)
	}
	if midOnA == 0 {
		t.Fatal("no message went to broker-a")
	}
	for _, m := range mid {
		if rec.deliveries(m) > 0 {
			t.Fatalf("%s delivered to a suspended consumer", m)
		}
	}

	// broker-a's master crashes (its SYNC sends are on its slave): no
	// shutdown, no unregistration.
	masterA.kill()
	var after []string
	for i := range 100 {
		body := fmt.Sprintf("after-%04d", i)
		res, err := p.SendSync(context.Background(), msg(topicCluster, body, ""))
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send %s with broker-a down: %v %v", body, res, err)
		}
		if res.MessageQueue.BrokerName != "broker-b" {
			t.Fatalf("send %s acknowledged by %s", body, res.MessageQueue.BrokerName)
		}
		after = append(after, body)
	}

	// The name server drops the master once its connection is gone; the
	// slave stays in the route.
	waitUntil(t, "the route to lose broker-a's master", 10*time.Second, func() bool {
		rd, ok := c.ns.TopicRoute(topicCluster)
		if !ok {
			return false
		}
		for _, bd := range rd.BrokerDatas {
			if bd.BrokerName == "broker-a" {
				return bd.BrokerAddrs[protocol.MasterID] == "" && bd.BrokerAddrs[1] != ""
			}
		}
		return false
	})

	// Resumed, the consumers read broker-a's queues from its slave (once
	// their route says the master is gone) and broker-b's from its master.
	for _, pc := range []shutdowner{c1, c2} {
		pc.(suspender).Resume()
	}
	rest := append(append(append([]string{}, drains...), mid...), after...)
	deadline := time.Now().Add(2 * deliverLimit)
	for !rec.has("", rest) {
		if time.Now().After(deadline) {
			miss := rec.missing("", rest)
			t.Fatalf("with broker-a's master down, %d messages never delivered, e.g. %v", len(miss), miss[:min(len(miss), 10)])
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("spread %v; %d messages on broker-a read from its slave after the master was killed", perBroker, midOnA)
}

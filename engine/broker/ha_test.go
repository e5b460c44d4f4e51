package broker_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/ha"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// haBroker starts a broker over engine/store with a role.
func haBroker(t *testing.T, ns string, role broker.BrokerRole, id int64, mutate func(*broker.Config)) *broker.Broker {
	t.Helper()
	cfg := testConfig()
	cfg.NamesrvAddrs = []string{ns}
	cfg.Role, cfg.BrokerID = role, id
	cfg.HA = ha.Config{ListenAddr: "127.0.0.1:0", HeartbeatInterval: 200 * time.Millisecond}
	cfg.HAClient = ha.ClientConfig{HeartbeatInterval: 200 * time.Millisecond, ReconnectInterval: 50 * time.Millisecond}
	cfg.SlaveTimeout = time.Second
	cfg.SlaveSyncInterval = 100 * time.Millisecond
	if mutate != nil {
		mutate(&cfg)
	}
	b, err := broker.New(cfg, broker.OpenStore(smallStoreConfig(t.TempDir(), flush.Async), cfg.DelayLevels))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	return b
}

func sendTo(t *testing.T, c *remoting.Client, addr, topic string, queueID int32, body string) *remoting.Command {
	t.Helper()
	return callWith(t, c, addr, protocol.ReqSendMessageV2, sendHeader(topic, queueID, "").ExtFields(true), []byte(body))
}

func createTopicOn(t *testing.T, c *remoting.Client, addr, topic string, queues int) {
	t.Helper()
	resp := callWith(t, c, addr, protocol.ReqUpdateAndCreateTopic, remoting.ExtFields{
		"topic": topic, "defaultTopic": "defaultTopic", "readQueueNums": itoa(int64(queues)),
		"writeQueueNums": itoa(int64(queues)), "perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false",
	}, nil)
	wantCode(t, "create topic", resp, protocol.RespSuccess)
}

// TestSyncMasterAndSlave: a SYNC_MASTER and its slave on one name server.
// The slave learns the master's HA address from its registration, the
// route lists both ids, a send is acknowledged only once the slave holds
// it, the slave serves it to pulls and refuses sends, and a send with the
// slave gone is SLAVE_NOT_AVAILABLE (stored on the master).
func TestSyncMasterAndSlave(t *testing.T) {
	ns := startNamesrv(t)
	master := haBroker(t, ns.Addr(), broker.SyncMaster, 0, nil)
	slave := haBroker(t, ns.Addr(), broker.Slave, 1, func(c *broker.Config) { c.SlaveReadEnable = true })
	if master.HAAddr() == "" || slave.HAClient() == nil {
		t.Fatal("no HA service or client")
	}
	eventually(t, "the slave to learn the master's HA address", func() bool {
		return slave.HAClient().MasterAddr() == master.HAAddr() && slave.HAClient().Status().Connected
	})
	eventually(t, "the slave to stream", func() bool { return master.HAService().IsSlaveOK(1) })
	c, _ := newClient(t)
	createTopicOn(t, c, master.Addr(), "T", 2)
	eventually(t, "the route to list master and slave", func() bool {
		rd, ok := ns.TopicRoute("T")
		if !ok || len(rd.BrokerDatas) != 1 {
			return false
		}
		a := rd.BrokerDatas[0].BrokerAddrs
		return a[protocol.MasterID] == master.Addr() && a[1] == slave.Addr()
	})
	mst := master.Store().(broker.EngineStore).EngineStore()
	sst := slave.Store().(broker.EngineStore).EngineStore()
	for i := range 20 {
		resp := sendTo(t, c, master.Addr(), "T", int32(i%2), "m"+itoa(int64(i)))
		wantCode(t, "sync send", resp, protocol.RespSuccess)
		// One producer: the master's end is this message's end, and the
		// acknowledgement says the slave has it.
		if got, want := sst.ReplicaOffset(), mst.MaxPhyOffset(); got < want {
			t.Fatalf("send %d acknowledged with the slave at %d, the master at %d", i, got, want)
		}
	}

	// The slave refuses sends.
	resp := sendTo(t, c, slave.Addr(), "T", 0, "no")
	wantCode(t, "send to the slave", resp, protocol.RespServiceNotAvailable)
	if !strings.Contains(resp.Remark, "messages are put to the slave") {
		t.Fatalf("remark %q", resp.Remark)
	}

	// The slave serves reads once it knows the topic (copied from the master).
	eventually(t, "the slave to copy the master's topics", func() bool {
		r := callWith(t, c, slave.Addr(), protocol.ReqPullMessage, pullExt("g", "T", 0, 0, 32, 0, 0), nil)
		return r.Code == protocol.RespSuccess && len(decodeAll(t, r.Body)) == 10
	})
	r := callWith(t, c, master.Addr(), protocol.ReqPullMessage, pullExt("g", "T", 0, 0, 32, 0, 0), nil)
	wantCode(t, "pull from the master", r, protocol.RespSuccess)
	if r.ExtFields["suggestWhichBrokerId"] != "0" {
		t.Fatalf("hot data: suggestWhichBrokerId %q", r.ExtFields["suggestWhichBrokerId"])
	}

	// Without the slave: SLAVE_NOT_AVAILABLE, but stored.
	if err := slave.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the master to notice", func() bool { return !master.HAService().IsSlaveOK(mst.MaxPhyOffset()) })
	resp = sendTo(t, c, master.Addr(), "T", 0, "alone")
	wantCode(t, "send without a slave", resp, protocol.RespSlaveNotAvailable)
	if resp.ExtFields["msgId"] == "" {
		t.Fatal("SLAVE_NOT_AVAILABLE without a msgId: the message is stored")
	}
}

// TestFlushSlaveTimeout: a slave that stops acknowledging makes a SYNC send
// FLUSH_SLAVE_TIMEOUT after the slave timeout; WAIT=false sends do not wait.
func TestFlushSlaveTimeout(t *testing.T) {
	ns := startNamesrv(t)
	master := haBroker(t, ns.Addr(), broker.SyncMaster, 0, func(c *broker.Config) { c.SlaveTimeout = 200 * time.Millisecond })
	nc, err := net.Dial("tcp", master.HAAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], 0)
	if _, err := nc.Write(b[:]); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, nc)
	eventually(t, "the silent slave to stream", func() bool { return master.HAService().IsSlaveOK(1) })
	c, _ := newClient(t)
	createTopicOn(t, c, master.Addr(), "T", 1)
	t0 := time.Now()
	resp := sendTo(t, c, master.Addr(), "T", 0, "late")
	wantCode(t, "send", resp, protocol.RespFlushSlaveTimeout)
	if time.Since(t0) < 200*time.Millisecond || resp.ExtFields["msgId"] == "" {
		t.Fatalf("answered after %v with %v", time.Since(t0), resp.ExtFields)
	}
	h := sendHeader("T", 0, props(record.PropertyWaitStoreMsgOK, "false"))
	resp = callWith(t, c, master.Addr(), protocol.ReqSendMessageV2, h.ExtFields(true), []byte("nowait"))
	wantCode(t, "WAIT=false send", resp, protocol.RespSuccess)
}

// TestHAConfigValidation: slaves need an id ≥ 1, masters id 0, roles must
// be known, and a non-default role needs an engine/store store.
func TestHAConfigValidation(t *testing.T) {
	for _, c := range []struct {
		role broker.BrokerRole
		id   int64
	}{{broker.Slave, 0}, {broker.SyncMaster, 1}, {"LEADER", 0}} {
		cfg := testConfig()
		cfg.Role, cfg.BrokerID = c.role, c.id
		if _, err := broker.New(cfg, broker.WithStore(nil)); err == nil {
			t.Errorf("role %s id %d accepted", c.role, c.id)
		}
	}
	if r, err := broker.ParseBrokerRole("sync_master"); err != nil || r != broker.SyncMaster {
		t.Fatalf("parse: %v %v", r, err)
	}
	cfg := testConfig()
	cfg.Role = broker.SyncMaster
	b, err := broker.New(cfg, broker.WithStore(memstore.New()))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err == nil {
		_ = b.Shutdown(context.Background())
		t.Fatal("SYNC_MASTER over a memstore started")
	}
}

// TestSuggestSlaveForColdReads: with slaveReadEnable a master's pull reply
// suggests broker 1 (whichBrokerWhenConsumeSlowly) when the consumer reads
// beyond the in-memory window, 0 otherwise; without it always 0. A slave
// without slaveReadEnable sends consumers back to the master.
func TestSuggestSlaveForColdReads(t *testing.T) {
	for _, slaveRead := range []bool{true, false} {
		t.Run("slaveRead="+strconv.FormatBool(slaveRead), func(t *testing.T) {
			cfg := testConfig()
			cfg.SlaveReadEnable = slaveRead
			scfg := smallStoreConfig(t.TempDir(), flush.Async)
			scfg.TotalMemoryBytes = 10 << 10 // a 4 KiB in-memory window
			b, err := broker.New(cfg, broker.OpenStore(scfg, cfg.DelayLevels))
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer b.Shutdown(context.Background())
			c, _ := newClient(t)
			createTopicOn(t, c, b.Addr(), "T", 1)
			body := strings.Repeat("x", 500)
			for range 40 {
				wantCode(t, "send", sendTo(t, c, b.Addr(), "T", 0, body), protocol.RespSuccess)
			}
			eventually(t, "dispatch", func() bool {
				r := callWith(t, c, b.Addr(), protocol.ReqGetMaxOffset, remoting.ExtFields{"topic": "T", "queueId": "0"}, nil)
				return r.ExtFields["offset"] == "40"
			})
			cold := callWith(t, c, b.Addr(), protocol.ReqPullMessage, pullExt("g", "T", 0, 0, 1, 0, 0), nil)
			hot := callWith(t, c, b.Addr(), protocol.ReqPullMessage, pullExt("g", "T", 0, 39, 1, 0, 0), nil)
			wantCode(t, "cold pull", cold, protocol.RespSuccess)
			wantCode(t, "hot pull", hot, protocol.RespSuccess)
			wantCold := "0"
			if slaveRead {
				wantCold = "1"
			}
			if cold.ExtFields["suggestWhichBrokerId"] != wantCold || hot.ExtFields["suggestWhichBrokerId"] != "0" {
				t.Fatalf("suggestions cold %q hot %q", cold.ExtFields["suggestWhichBrokerId"], hot.ExtFields["suggestWhichBrokerId"])
			}
		})
	}
	ns := startNamesrv(t)
	haBroker(t, ns.Addr(), broker.SyncMaster, 0, nil)
	slave := haBroker(t, ns.Addr(), broker.Slave, 1, nil)
	c, _ := newClient(t)
	createTopicOn(t, c, slave.Addr(), "T", 1)
	r := callWith(t, c, slave.Addr(), protocol.ReqPullMessage, pullExt("g", "T", 0, 0, 1, 0, 0), nil)
	wantCode(t, "pull from a slave without slaveReadEnable", r, protocol.RespPullRetryImmediately)
	if r.ExtFields["suggestWhichBrokerId"] != "0" {
		t.Fatalf("suggestion %q", r.ExtFields["suggestWhichBrokerId"])
	}
}

// TestHAListenPort: the HA service listens at the listen port + 1, or on an
// ephemeral port when the listen port is ephemeral.
func TestHAListenPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg := testConfig()
	cfg.ListenAddr = "127.0.0.1:" + strconv.Itoa(port)
	b, err := broker.New(cfg, broker.OpenStore(smallStoreConfig(t.TempDir(), flush.Async), cfg.DelayLevels))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Skipf("port %d or %d taken meanwhile: %v", port, port+1, err)
	}
	defer b.Shutdown(context.Background())
	if want := "127.0.0.1:" + strconv.Itoa(port+1); b.HAAddr() != want {
		t.Fatalf("HA address %s, want %s", b.HAAddr(), want)
	}
	e := haBroker(t, "", broker.AsyncMaster, 0, func(c *broker.Config) { c.NamesrvAddrs = nil; c.HA.ListenAddr = "" })
	if e.HAAddr() == "" {
		t.Fatal("no HA address")
	}
}

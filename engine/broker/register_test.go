package broker_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// fakeNamesrv records the REGISTER_BROKER and UNREGISTER_BROKER requests it gets.
type fakeNamesrv struct {
	srv *remoting.Server
	mu  sync.Mutex
	reg []protocol.RegisterBrokerBody
	unr int
}

func startFakeNamesrv(t *testing.T) *fakeNamesrv {
	cfg := remoting.DefaultServerConfig()
	cfg.Logger = quiet
	f := &fakeNamesrv{srv: remoting.NewServer(cfg)}
	f.srv.RegisterProcessor(protocol.ReqRegisterBroker, remoting.ProcessorFunc(func(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
		var body protocol.RegisterBrokerBody
		if err := json.Unmarshal(req.Body, &body); err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.reg = append(f.reg, body)
		f.mu.Unlock()
		return remoting.NewResponse(protocol.RespSuccess, ""), nil
	}), nil)
	f.srv.RegisterProcessor(protocol.ReqUnregisterBroker, remoting.ProcessorFunc(func(context.Context, *remoting.Conn, *remoting.Command) (*remoting.Command, error) {
		f.mu.Lock()
		f.unr++
		f.mu.Unlock()
		return remoting.NewResponse(protocol.RespSuccess, ""), nil
	}), nil)
	if err := f.srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.srv.Shutdown(context.Background()) })
	return f
}

func (f *fakeNamesrv) registrations() []protocol.RegisterBrokerBody {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]protocol.RegisterBrokerBody(nil), f.reg...)
}

func (f *fakeNamesrv) unregistrations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.unr
}

func TestRegistersWithEveryNamesrvPeriodically(t *testing.T) {
	a, b := startFakeNamesrv(t), startFakeNamesrv(t)
	cfg := testConfig()
	cfg.NamesrvAddrs = []string{a.srv.Addr(), b.srv.Addr()}
	cfg.RegisterInterval = 10 * time.Millisecond
	brk, err := broker.New(cfg, broker.WithStore(memstore.New()))
	if err != nil {
		t.Fatal(err)
	}
	if err := brk.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Start registers once with both before returning.
	if len(a.registrations()) == 0 || len(b.registrations()) == 0 {
		t.Fatal("Start returned before registering with every name server")
	}
	eventually(t, "periodic registrations", func() bool { return len(a.registrations()) >= 3 && len(b.registrations()) >= 3 })
	body := a.registrations()[0].TopicConfigSerializeWrapper
	if tc, ok := body.TopicConfigTable[protocol.DefaultTopic]; !ok || tc.Perm != 7 || tc.WriteQueueNums != 8 {
		t.Fatalf("TBW102 registered as %+v", tc)
	}
	if err := brk.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a.unregistrations() != 1 || b.unregistrations() != 1 {
		t.Fatalf("unregistrations %d %d", a.unregistrations(), b.unregistrations())
	}
}

func TestTopicChangesReregisterWithNewDataVersion(t *testing.T) {
	e := startEnv(t, nil)
	v0 := e.b.DataVersion()
	e.createTopic("Fresh", 3)
	if v1 := e.b.DataVersion(); v1.Counter <= v0.Counter {
		t.Fatalf("DataVersion %+v did not move from %+v", v1, v0)
	}
	eventually(t, "route of the new topic", func() bool {
		rd, ok := e.ns.TopicRoute("Fresh")
		return ok && rd.QueueDatas[0].ReadQueueNums == 3 && rd.BrokerDatas[0].BrokerAddrs[protocol.MasterID] == e.b.Addr()
	})
	// Updating the topic reaches the name server too (it re-reads on a new DataVersion).
	e.createTopic("Fresh", 5)
	eventually(t, "updated route", func() bool {
		rd, ok := e.ns.TopicRoute("Fresh")
		return ok && rd.QueueDatas[0].ReadQueueNums == 5
	})

	resp := e.call(protocol.ReqGetAllTopicConfig, nil, nil)
	wantCode(t, "all topics", resp, protocol.RespSuccess)
	var w protocol.TopicConfigSerializeWrapper
	if err := json.Unmarshal(resp.Body, &w); err != nil {
		t.Fatal(err)
	}
	if w.TopicConfigTable["Fresh"].WriteQueueNums != 5 || w.DataVersion != e.b.DataVersion() {
		t.Fatalf("GET_ALL_TOPIC_CONFIG %+v", w)
	}

	wantCode(t, "delete", e.call(protocol.ReqDeleteTopicInBroker, remoting.ExtFields{"topic": "Fresh"}, nil), protocol.RespSuccess)
	wantCode(t, "send to deleted", e.send("Fresh", 0, "x", ""), protocol.RespSuccess) // auto-created again from TBW102
	wantCode(t, "delete system topic", e.call(protocol.ReqDeleteTopicInBroker, remoting.ExtFields{"topic": protocol.DefaultTopic}, nil), protocol.RespSystemError)
	wantCode(t, "create system topic", e.call(protocol.ReqUpdateAndCreateTopic, remoting.ExtFields{"topic": protocol.ScheduleTopic, "readQueueNums": "1", "writeQueueNums": "1"}, nil), protocol.RespSystemError)
	wantCode(t, "create bad topic", e.call(protocol.ReqUpdateAndCreateTopic, remoting.ExtFields{"topic": "a b", "readQueueNums": "1", "writeQueueNums": "1"}, nil), protocol.RespSystemError)
	wantCode(t, "create zero queues", e.call(protocol.ReqUpdateAndCreateTopic, remoting.ExtFields{"topic": "Z", "readQueueNums": "0", "writeQueueNums": "1"}, nil), protocol.RespInvalidParameter)

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := e.b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.ns.ClusterInfo().BrokerAddrTable["broker-a"]; ok {
		t.Fatal("broker still known to the name server after shutdown")
	}
}

func TestRestartKeepsMessagesTopicsAndOffsets(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 2)
	e.mustSend("T", 1, "kept", "")
	upd := remoting.ExtFields{"consumerGroup": "g", "topic": "T", "queueId": "1", "commitOffset": "1"}
	wantCode(t, "commit", e.call(protocol.ReqUpdateConsumerOffset, upd, nil), protocol.RespSuccess)
	if err := e.b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	e.store.Reopen()
	cfg := testConfig()
	cfg.NamesrvAddrs = []string{e.ns.Addr()}
	e.b = e.startBroker(cfg)
	if r := decodeAll(t, e.pull("g", "T", 1, 0, 32).Body); len(r) != 1 || string(r[0].Body) != "kept" {
		t.Fatalf("after restart: %v", r)
	}
	q := remoting.ExtFields{"consumerGroup": "g", "topic": "T", "queueId": "1"}
	if got := extInt(t, e.call(protocol.ReqQueryConsumerOffset, q, nil), "offset"); got != 1 {
		t.Fatalf("offset after restart %d", got)
	}
	eventually(t, "route after restart", func() bool { rd, ok := e.ns.TopicRoute("T"); return ok && rd.QueueDatas[0].ReadQueueNums == 2 })
}

func TestStartFailures(t *testing.T) {
	cfg := testConfig()
	if _, err := broker.New(cfg, nil); err == nil {
		t.Fatal("New accepted a nil store opener")
	}
	bad := cfg
	bad.DelayLevels = nil
	if _, err := broker.New(bad, broker.WithStore(memstore.New())); err == nil {
		t.Fatal("New accepted no delay levels")
	}

	first, err := broker.New(cfg, broker.WithStore(memstore.New()))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Shutdown(context.Background()) })

	busy := cfg
	busy.ListenAddr = first.Addr()
	second, _ := broker.New(busy, broker.WithStore(memstore.New()))
	if err := second.Start(context.Background()); err == nil {
		t.Fatal("a second broker started on a busy port")
	}

	failing, _ := broker.New(cfg, func(netip.AddrPort) (broker.MessageStore, error) { return nil, errors.New("disk on fire") })
	if err := failing.Start(context.Background()); !errors.Is(err, broker.ErrStoreOpen) {
		t.Fatalf("store failure: %v", err)
	}
}

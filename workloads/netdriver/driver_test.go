package netdriver_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/clustertest"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/netdriver"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func startNamesrv(t testing.TB) *namesrv.Server { return clustertest.StartNamesrv(t, nil) }

func startBroker(t testing.TB, name, ns string, open broker.StoreOpener) *broker.Broker {
	t.Helper()
	cfg := clustertest.BrokerConfig(ns)
	cfg.BrokerName = name
	return clustertest.StartBroker(t, cfg, open, nil)
}

func newDriver(t testing.TB, mutate func(*netdriver.Config)) *netdriver.Driver {
	t.Helper()
	cfg := netdriver.DefaultConfig()
	cfg.Client.Logger = quiet
	mutate(&cfg)
	d, err := netdriver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func pullAll(t *testing.T, d *netdriver.Driver, topic string, queueID int32) []string {
	t.Helper()
	var out []string
	var off int64
	for {
		bodies, next, err := d.Pull(context.Background(), topic, queueID, off, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bodies {
			out = append(out, string(b))
		}
		if len(bodies) == 0 {
			if next != off {
				t.Fatalf("empty pull moved the offset from %d to %d", off, next)
			}
			return out
		}
		off = next
	}
}

func TestSendPullThroughNamesrv(t *testing.T) {
	ns := startNamesrv(t)
	startBroker(t, "broker-a", ns.Addr(), broker.WithStore(memstore.New()))
	d := newDriver(t, func(c *netdriver.Config) {
		c.Namesrv = ns.Addr()
		c.CreateQueues = 4
	})
	ctx := context.Background()
	if d.Name() != "broker" {
		t.Fatalf("name %q", d.Name())
	}
	for i := range 10 {
		m := &workloads.Message{Topic: "NT", QueueID: int32(i % 2), Tags: "t", Keys: "k", Body: []byte(fmt.Sprintf("m%d", i))}
		if err := d.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if got := pullAll(t, d, "NT", 1); len(got) != 5 || got[0] != "m1" || got[4] != "m9" {
		t.Fatalf("queue 1: %v", got)
	}
	if off, err := d.MaxOffset("NT", 0); err != nil || off != 5 {
		t.Fatalf("max offset %d %v", off, err)
	}
	// Past the end: moved back to the end, no error.
	if bodies, next, err := d.Pull(ctx, "NT", 0, 99, 8); err != nil || len(bodies) != 0 || next != 0 && next != 5 {
		t.Fatalf("pull past the end: %d bodies, next %d, %v", len(bodies), next, err)
	}

	// Async and oneway.
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		if err := d.SendAsync(ctx, &workloads.Message{Topic: "NT", QueueID: 2, Body: []byte{byte(i)}}, func(err error) {
			errs <- err
			wg.Done()
		}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		if err := d.SendOneway(ctx, &workloads.Message{Topic: "NT", QueueID: 3, Body: []byte{byte(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		off2, _ := d.MaxOffset("NT", 2)
		off3, _ := d.MaxOffset("NT", 3)
		if off2 == 20 && off3 == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("async/oneway stored %d/%d", off2, off3)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestBatchingGroupsConcurrentSends(t *testing.T) {
	ns := startNamesrv(t)
	startBroker(t, "broker-a", ns.Addr(), broker.WithStore(memstore.New()))
	d := newDriver(t, func(c *netdriver.Config) {
		c.Namesrv = ns.Addr()
		c.CreateQueues = 2
		c.Batch = 16
	})
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.Send(context.Background(), &workloads.Message{Topic: "BT", QueueID: int32(i % 2), Body: []byte(fmt.Sprint(i))}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := len(pullAll(t, d, "BT", 0)) + len(pullAll(t, d, "BT", 1)); n != 200 {
		t.Fatalf("stored %d of 200", n)
	}
	explicit := []*workloads.Message{{Topic: "BT", Body: []byte("x")}, {Topic: "BT", Body: []byte("y")}}
	if err := d.SendBatch(context.Background(), explicit); err != nil {
		t.Fatal(err)
	}
	mixed := []*workloads.Message{{Topic: "BT", Body: []byte("x")}, {Topic: "BT", QueueID: 1, Body: []byte("y")}}
	if err := d.SendBatch(context.Background(), mixed); err == nil {
		t.Fatal("a batch spanning queues was accepted")
	}
}

func TestQueuesSpanBrokers(t *testing.T) {
	ns := startNamesrv(t)
	a := startBroker(t, "broker-a", ns.Addr(), broker.WithStore(memstore.New()))
	bs := memstore.New()
	startBroker(t, "broker-b", ns.Addr(), broker.WithStore(bs))
	d := newDriver(t, func(c *netdriver.Config) {
		c.Namesrv = ns.Addr()
		c.CreateQueues = 2
	})
	ctx := context.Background()
	// Queues 0,1 are broker-a's, 2,3 broker-b's.
	if err := d.Send(ctx, &workloads.Message{Topic: "ST", QueueID: 3, Body: []byte("on b")}); err != nil {
		t.Fatal(err)
	}
	if bs.MaxOffset("ST", 1) != 1 {
		t.Fatal("queue index 3 did not reach broker-b queue 1")
	}
	if got := pullAll(t, d, "ST", 3); len(got) != 1 || got[0] != "on b" {
		t.Fatalf("pulled %v", got)
	}
	direct := newDriver(t, func(c *netdriver.Config) { c.Broker = a.Addr() })
	if err := direct.Send(ctx, &workloads.Message{Topic: "ST", QueueID: 1, Body: []byte("on a")}); err != nil {
		t.Fatal(err)
	}
	if got := pullAll(t, d, "ST", 1); len(got) != 1 || got[0] != "on a" {
		t.Fatalf("direct send landed elsewhere: %v", got)
	}
}

func TestErrors(t *testing.T) {
	if _, err := netdriver.New(netdriver.Config{}); !errors.Is(err, netdriver.ErrBadConfig) {
		t.Fatalf("empty config: %v", err)
	}
	ns := startNamesrv(t)
	b := startBroker(t, "broker-a", ns.Addr(), broker.WithStore(memstore.New()))
	d := newDriver(t, func(c *netdriver.Config) { c.Namesrv = ns.Addr() })
	if err := d.Send(context.Background(), &workloads.Message{Topic: "Nope", Body: []byte("x")}); !errors.Is(err, netdriver.ErrNoRoute) {
		t.Fatalf("unknown topic: %v", err)
	}
	direct := newDriver(t, func(c *netdriver.Config) { c.Broker = b.Addr() })
	if err := direct.CreateTopic(context.Background(), "E", 1); err != nil {
		t.Fatal(err)
	}
	err := direct.Send(context.Background(), &workloads.Message{Topic: "E", QueueID: 5, Body: []byte("x")})
	if re, ok := remoting.AsResponseError(err); !errors.Is(err, netdriver.ErrRejected) || !ok || re.Code != protocol.RespInvalidParameter {
		t.Fatalf("bad queue: %v", err)
	}
	_ = direct.Close()
	if err := direct.Send(context.Background(), &workloads.Message{Topic: "E", Body: []byte("x")}); !errors.Is(err, workloads.ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

func TestPullInflatesCompressedBodies(t *testing.T) {
	b := startBroker(t, "broker-a", "", broker.WithStore(memstore.New()))
	d := newDriver(t, func(c *netdriver.Config) { c.Broker = b.Addr() })
	if err := d.CreateTopic(context.Background(), "Z", 1); err != nil {
		t.Fatal(err)
	}
	var zbuf bytes.Buffer
	zw := zlib.NewWriter(&zbuf)
	_, _ = zw.Write([]byte("inflated"))
	_ = zw.Close()
	h := protocol.SendMessageHeader{ProducerGroup: "p", Topic: "Z", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		SysFlag: record.FlagCompressed, BornTimestamp: time.Now().UnixMilli()}
	c := remoting.NewClient(remoting.DefaultClientConfig())
	defer c.Close()
	req := remoting.NewRequest(protocol.ReqSendMessageV2, h.ExtFields(true))
	req.Body = zbuf.Bytes()
	if resp, err := c.InvokeSync(context.Background(), b.Addr(), req); err != nil || resp.Code != 0 {
		t.Fatalf("send: %v %v", resp, err)
	}
	if got := pullAll(t, d, "Z", 0); len(got) != 1 || got[0] != "inflated" {
		t.Fatalf("pulled %q", got)
	}
}

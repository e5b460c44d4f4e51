package rmqdriver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/clustertest"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/netdriver"
	"github.com/brokerlab/brokerlab/workloads/rmqdriver"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// maxHold caps the broker's hold of an empty pull (the client always asks
// for 20 s).
const maxHold = 200 * time.Millisecond

// env is a name server and a broker over a memstore, with a topic of
// `queues` queues created through brokerlab's client.
func env(t *testing.T, topic string, queues int32) (*namesrv.Server, *broker.Broker, *broker.StageRecorder) {
	t.Helper()
	ns := clustertest.StartNamesrv(t, nil)
	cfg := clustertest.BrokerConfig(ns.Addr())
	cfg.HA.ListenAddr = "127.0.0.1:0"
	cfg.MaxSuspend = maxHold
	var rec *broker.StageRecorder
	b := clustertest.StartBroker(t, cfg, broker.WithStore(memstore.New()), func(b *broker.Broker) { rec = b.RecordStages() })
	dc := netdriver.DefaultConfig()
	dc.Broker = b.Addr()
	nd, err := netdriver.New(dc)
	if err != nil {
		t.Fatal(err)
	}
	defer nd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := nd.CreateTopic(ctx, topic, queues); err != nil {
		t.Fatal(err)
	}
	// The broker registers the new topic with the name server after it
	// answers the creation; the official client finds brokers only through
	// the name server, so wait for the route.
	for _, ok := ns.TopicRoute(topic); !ok; _, ok = ns.TopicRoute(topic) {
		select {
		case <-ctx.Done():
			t.Fatalf("the name server never got a route for %s", topic)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return ns, b, rec
}

func newDriver(t *testing.T, ns string) *rmqdriver.Driver {
	t.Helper()
	cfg := rmqdriver.DefaultConfig()
	cfg.Namesrv = ns
	d, err := rmqdriver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// TestSendAndConsumeThroughTheOfficialClient: N messages sent by
// concurrent producers through the official client all come back once, in
// their queues, through its pull consumer; every send's latency is
// recorded; MaxOffset counts each queue; the broker's stage breakdown saw
// every send once; an empty queue returns nothing where it stands.
func TestSendAndConsumeThroughTheOfficialClient(t *testing.T) {
	const topic, queues, producers, each = "RmqDriven", 4, 4, 25
	ns, _, rec := env(t, topic, queues)
	d := newDriver(t, ns.Addr())
	if d.Name() != "rocketmq" {
		t.Fatalf("name %q", d.Name())
	}
	lat := hdr.New(1, int64(time.Minute), 3)
	var mu sync.Mutex
	sent := map[int32][]string{}
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				q := int32((p + i) % queues)
				body := fmt.Sprintf("p%d-m%d", p, i)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				start := time.Now()
				err := d.Send(ctx, &workloads.Message{Topic: topic, QueueID: q, Tags: "T", Keys: "k1 k2", Body: []byte(body)})
				took := time.Since(start)
				cancel()
				if err != nil {
					t.Errorf("send %s: %v", body, err)
					return
				}
				mu.Lock()
				_ = lat.RecordValue(took.Nanoseconds())
				sent[q] = append(sent[q], body)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if lat.TotalCount() != producers*each || lat.Min() <= 0 {
		t.Fatalf("latencies: %d recorded, min %d ns", lat.TotalCount(), lat.Min())
	}
	for q := int32(0); q < queues; q++ {
		max, err := d.MaxOffset(topic, q)
		if err != nil {
			t.Fatal(err)
		}
		if max != int64(len(sent[q])) {
			t.Fatalf("queue %d: max offset %d, sent %d", q, max, len(sent[q]))
		}
		var got []string
		offset := int64(0)
		for range 100 {
			if offset == max {
				break
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			bodies, next, err := d.Pull(ctx, topic, q, offset, 7)
			cancel()
			if err != nil {
				t.Fatalf("queue %d pull at %d: %v", q, offset, err)
			}
			if next != offset+int64(len(bodies)) {
				t.Fatalf("queue %d: %d bodies from %d, next %d", q, len(bodies), offset, next)
			}
			for _, b := range bodies {
				got = append(got, string(b))
			}
			offset = next
		}
		want := slices.Clone(sent[q])
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("queue %d: consumed %v, sent %v", q, got, want)
		}
		// At the end: nothing, the offset unchanged (the broker holds the
		// pull at most maxHold).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		bodies, next, err := d.Pull(ctx, topic, q, max, 7)
		cancel()
		if err != nil || len(bodies) != 0 || next != max {
			t.Fatalf("queue %d at its end: %d bodies, next %d, %v", q, len(bodies), next, err)
		}
	}
	// Readers of every queue at once, two per queue: each gets its queue.
	var pwg sync.WaitGroup
	for q := int32(0); q < queues; q++ {
		for range 2 {
			pwg.Add(1)
			go func() {
				defer pwg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				bodies, next, err := d.Pull(ctx, topic, q, 0, 100)
				if err != nil || len(bodies) != len(sent[q]) || next != int64(len(sent[q])) {
					t.Errorf("concurrent pull of queue %d: %d bodies, next %d, %v", q, len(bodies), next, err)
				}
			}()
		}
	}
	pwg.Wait()
	// The broker records a send after writing its reply: wait (bounded).
	var counted int64
	for range 200 {
		if h := rec.Snapshot().Hist[broker.StageTotal.String()]; h != nil {
			if counted = h.TotalCount(); counted >= producers*each {
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if counted != producers*each {
		t.Fatalf("broker stage breakdown counted %d sends, want %d", counted, producers*each)
	}
}

// TestPullHonoursContextAndClose: a pull held by the broker returns when
// its context ends; a closed driver refuses work.
func TestPullHonoursContextAndClose(t *testing.T) {
	ns, _, _ := env(t, "Quiet", 1)
	cfg := rmqdriver.DefaultConfig()
	cfg.Namesrv = ns.Addr()
	d, err := rmqdriver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, next, err := d.Pull(ctx, "Quiet", 0, 0, 1); !errors.Is(err, context.DeadlineExceeded) || next != 0 {
		t.Fatalf("held pull: next %d, %v (want the deadline)", next, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Send(context.Background(), &workloads.Message{Topic: "Quiet", Body: []byte("x")}); !errors.Is(err, workloads.ErrClosed) {
		t.Fatalf("send after close: %v", err)
	}
	if _, err := rmqdriver.New(rmqdriver.Config{}); !errors.Is(err, rmqdriver.ErrBadConfig) {
		t.Fatalf("no name server: %v", err)
	}
}

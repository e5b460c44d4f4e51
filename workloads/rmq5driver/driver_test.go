package rmq5driver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/clustertest"
	"github.com/brokerlab/brokerlab/engine/proxy"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/gen"
	"github.com/brokerlab/brokerlab/workloads/netdriver"
	"github.com/brokerlab/brokerlab/workloads/rmq5driver"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// env is a broker over a memstore with its gRPC front end on 127.0.0.1 and
// a topic of `queues` queues created through brokerlab's client; it returns
// the front end's address.
func env(t *testing.T, topic string, queues int32) string {
	t.Helper()
	cfg := clustertest.BrokerConfig("")
	cfg.NamesrvAddrs = nil
	cfg.HA.ListenAddr = "127.0.0.1:0"
	b := clustertest.StartBroker(t, cfg, broker.WithStore(memstore.New()), nil)
	p, err := proxy.New(proxy.Config{Listen: "127.0.0.1:0", Broker: b, Logger: quiet, LongPolling: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
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
	return p.Addr()
}

func newDriver(t *testing.T, endpoint, topic string) *rmq5driver.Driver {
	t.Helper()
	cfg := rmq5driver.DefaultConfig()
	cfg.Endpoint = endpoint
	cfg.Topics = []string{topic}
	cfg.TLS = os.Getenv("RMQ5_TLS") == "1"
	d, err := rmq5driver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// TestSendAndConsumeThroughTheV5Client: N messages sent by concurrent
// producers through the official RocketMQ 5 client over gRPC all come back
// once through its simple consumer (POP), filed under the queue they were
// sent for; every send's latency is recorded; MaxOffset counts each queue's
// deliveries; a caught-up queue returns nothing where it stands.
func TestSendAndConsumeThroughTheV5Client(t *testing.T) {
	if v5ClientRaces {
		t.Skip("the RocketMQ 5 Go client races with itself (see v5ClientRaces)")
	}
	t.Parallel()
	const topic, queues, producers, each = "Rmq5Driven", 4, 4, 25
	d := newDriver(t, env(t, topic, queues), topic)
	if d.Name() != "rocketmq5" {
		t.Fatalf("name %q", d.Name())
	}
	for q := range int32(queues) { // subscribes before anything is sent
		if n, err := d.MaxOffset(topic, q); err != nil || n != 0 {
			t.Fatalf("queue %d before sends: %d, %v", q, n, err)
		}
	}
	lat := hdr.New(1, int64(time.Minute), 3)
	var mu sync.Mutex
	sent := map[int32][]string{}
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
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
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if lat.TotalCount() != producers*each || lat.Min() <= 0 {
		t.Fatalf("latencies: %d recorded, min %d ns", lat.TotalCount(), lat.Min())
	}
	deadline := time.Now().Add(10 * time.Second)
	for q := range int32(queues) {
		var got []string
		offset := int64(0)
		for len(got) < len(sent[q]) && time.Now().Before(deadline) {
			bodies, next, err := d.Pull(context.Background(), topic, q, offset, 7)
			if err != nil {
				t.Fatalf("queue %d pull at %d: %v", q, offset, err)
			}
			if len(bodies) > 7 || next != offset+int64(len(bodies)) {
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
		if n, err := d.MaxOffset(topic, q); err != nil || n != offset {
			t.Fatalf("queue %d: max offset %d after reading to %d, %v", q, n, offset, err)
		}
		bodies, next, err := d.Pull(context.Background(), topic, q, offset, 7)
		if err != nil || len(bodies) != 0 || next != offset {
			t.Fatalf("queue %d at its end: %d bodies, next %d, %v", q, len(bodies), next, err)
		}
	}
	if st := d.Stats(); st.Received != producers*each || st.AckErrors != 0 {
		t.Fatalf("consumer stats %+v, want %d received and no ack errors", st, producers*each)
	}
}

// TestErrorsCloseAndLogs: a send to an unknown topic fails with the
// broker's code as the harness counts it; a held Pull returns when its
// context ends; a closed driver refuses work; the client's log never goes
// to ~/logs; an endpoint is required.
func TestErrorsCloseAndLogs(t *testing.T) {
	if v5ClientRaces {
		t.Skip("the RocketMQ 5 Go client races with itself (see v5ClientRaces)")
	}
	t.Parallel()
	home, _ := os.UserHomeDir()
	logRoot := filepath.Join(home, "logs", "rocketmq")
	_, statErr := os.Stat(logRoot)
	hadLogs := statErr == nil
	cfg := rmq5driver.DefaultConfig()
	cfg.Endpoint = env(t, "Quiet", 1)
	cfg.Topics = []string{"Quiet"}
	cfg.Consume = true
	cfg.PullHold = time.Minute
	d, err := rmq5driver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err = d.Send(ctx, &workloads.Message{Topic: "NoSuchTopic", Body: []byte("x")})
	cancel()
	if re, ok := remoting.AsResponseError(err); !ok || gen.FailureCode(err) != "TOPIC_NOT_EXIST" {
		t.Fatalf("send to an unknown topic: %v (response error %v, code %s)", err, re, gen.FailureCode(err))
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, next, err := d.Pull(ctx, "Quiet", 0, 3, 1); !errors.Is(err, context.DeadlineExceeded) || next != 3 {
		t.Fatalf("held pull: next %d, %v (want the deadline)", next, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Send(context.Background(), &workloads.Message{Topic: "Quiet", Body: []byte("x")}); !errors.Is(err, workloads.ErrClosed) {
		t.Fatalf("send after close: %v", err)
	}
	if _, _, err := d.Pull(context.Background(), "Quiet", 0, 0, 1); !errors.Is(err, workloads.ErrClosed) {
		t.Fatalf("pull after close: %v", err)
	}
	if _, err := os.Stat(logRoot); !hadLogs && err == nil {
		t.Fatalf("the client wrote %s", logRoot)
	}
	if _, err := rmq5driver.New(rmq5driver.Config{Topics: []string{"Quiet"}}); !errors.Is(err, rmq5driver.ErrBadConfig) {
		t.Fatalf("no endpoint: %v", err)
	}
}

package experiments

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// TestClientsQuickVariant runs clients.yaml's closed-loop cells, shrunk to
// half a second: the broker in a child process driven once by the official
// RocketMQ Go client (remoting, classic pull) and once by the official
// RocketMQ 5 Go client (gRPC front end, POP), each with its tailing
// consumer reading what was sent; the broker's CPU per message is measured
// for both and the declared pairings give numbers.
func TestClientsQuickVariant(t *testing.T) {
	if v5ClientRaces {
		t.Skip("the RocketMQ 5 Go client races with itself (see v5ClientRaces)")
	}
	needProc(t)
	t.Parallel() // a run of its own: own directories, ports and children
	e, err := Load("clients.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e.ApplyQuick()
	e.Warmup, e.Duration, e.Interval = Duration(100*time.Millisecond), Duration(500*time.Millisecond), Duration(100*time.Millisecond)
	e.Settle = Duration(time.Millisecond)
	e.Workload.Producers = 4
	// The closed-loop cells and their pairings (the open-loop ones run the
	// same code at a rate).
	e.Extra = nil
	var closed []Pairing
	for _, p := range e.Pairings {
		if p.Num["mode"] == "closed" {
			closed = append(closed, p)
		}
	}
	if len(closed) < 2 {
		t.Fatalf("clients.yaml declares %d closed-loop pairings", len(closed))
	}
	e.Pairings = closed
	var log strings.Builder
	o, err := Run(context.Background(), e, Options{OutRoot: t.TempDir(), StoreRoot: t.TempDir(), Progress: &log,
		ProgressEvery: time.Second})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if o.Status != result.StatusOK || len(o.Cells) != 2 {
		t.Fatalf("status %s, %d cells\n%s", o.Status, len(o.Cells), log.String())
	}
	clients := map[string]bool{}
	for _, c := range o.Cells {
		if c.Error != "" || c.Ops == 0 || c.Failed != 0 || c.ServerCPUMicrosPerMsg <= 0 {
			t.Fatalf("%s: error %q ops %d failed %d, %v µs/msg\n%s", c.Name, c.Error, c.Ops, c.Failed, c.ServerCPUMicrosPerMsg, log.String())
		}
		if q := c.Quantiles["e2e"]; q.Count == 0 || q.P50 <= 0 {
			t.Fatalf("%s: the tailing consumer recorded no end-to-end latency (%+v)", c.Name, q)
		}
		clients[c.Params["client"]] = true
	}
	if !clients[ClientRocketMQ] || !clients[ClientRocketMQ5] {
		t.Fatalf("cells' clients %v", clients)
	}
	if len(o.Ratios) != len(closed) {
		t.Fatalf("ratios %+v", o.Ratios)
	}
	for _, r := range o.Ratios {
		if r.Missing != "" || r.Stat.Median <= 0 {
			t.Fatalf("ratio %+v", r)
		}
	}
}

// client rocketmq5 is refused where its consumer cannot mean what the
// harness's consumers mean: several tailing consumers, a lagging one.
func TestClientRocketMQ5ConsumerLimits(t *testing.T) {
	base := "name: c\nengine: {transport: loopback, client: rocketmq5}\nworkload: {mode: closed, producers: 1, size: fixed:64, "
	if _, err := Parse([]byte(base + "tailing: 1}\n")); err != nil {
		t.Fatalf("one tailing consumer: %v", err)
	}
	for _, w := range []string{"tailing: 2}\n", "lagging: 1, lag_bytes: 1MiB}\n"} {
		e, err := Parse([]byte(base + w))
		if err == nil {
			_, err = e.Cells() // the cells are checked whole
		}
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "rocketmq5") {
			t.Fatalf("%s: %v", w, err)
		}
	}
	if _, err := Parse([]byte("name: c\nengine: {transport: inproc, client: rocketmq5}\n")); err == nil {
		t.Fatal("client rocketmq5 in process accepted")
	}
}

// A loopback cell driven by the RocketMQ 5 client: the broker's gRPC front
// end runs in this process beside its remoting port; sends are
// acknowledged, the tailing consumer reads them (POP) and the broker's
// stage breakdown counts the sends the front end made for the client.
func TestRocketMQ5LoopbackCell(t *testing.T) {
	if v5ClientRaces {
		t.Skip("the RocketMQ 5 Go client races with itself (see v5ClientRaces)")
	}
	t.Parallel() // a run of its own: own directories and ports
	e, err := Parse([]byte(`
name: rmq5-tiny
warmup: 100ms
duration: 500ms
interval: 100ms
settle: 1ms
engine: {segment_size: 1MiB, transport: loopback, flush: async, stages: true, client: rocketmq5}
workload: {mode: closed, producers: 2, size: "fixed:256", queues: 2, tailing: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	o, err := Run(context.Background(), e, Options{OutRoot: t.TempDir(), StoreRoot: t.TempDir(), Progress: &log,
		ProgressEvery: time.Second})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(o.Cells) != 1 {
		t.Fatalf("%d cells", len(o.Cells))
	}
	c := o.Cells[0]
	if c.Error != "" || c.Ops == 0 || c.Failed != 0 {
		t.Fatalf("cell %s: error %q, %d ops, %d failed\n%s", c.Name, c.Error, c.Ops, c.Failed, log.String())
	}
	if q := c.Quantiles["e2e"]; q.Count == 0 {
		t.Fatalf("cell %s: the tailing consumer read nothing", c.Name)
	}
	if q := c.Quantiles[result.StageMetric(result.StageTotal)]; q.Count == 0 {
		t.Fatalf("cell %s: no stage breakdown", c.Name)
	}
}

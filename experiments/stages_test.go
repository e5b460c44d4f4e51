package experiments

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// A tiny run with engine.stages records the breakdown per cell — every
// stage of a loopback send, the store's stages in process — whose stage
// counts agree and cover the measured phase, whose means add up to the
// whole send's mean (cmd/brokerlab's TestRunDrawsFigures draws its stages
// figure).
func TestStagesRecordedPerCell(t *testing.T) {
	t.Parallel() // a run of its own: own directories and ports
	e, err := Parse([]byte(`
name: stages-tiny
warmup: 100ms
duration: 500ms
interval: 100ms
settle: 1ms
engine: {segment_size: 1MiB, stages: true}
workload: {mode: closed, producers: 4, size: "fixed:512", queues: 2}
matrix:
  - {param: transport, values: [loopback, inproc]}
  - {param: flush, values: [async, group]}
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
	if len(o.Cells) != 4 {
		t.Fatalf("%d cells", len(o.Cells))
	}
	for _, c := range o.Cells {
		if c.Error != "" {
			t.Fatalf("cell %s: %s", c.Name, c.Error)
		}
		want := []string{"process", "lock_wait", "lock_hold", "flush_wait"}
		if c.Params["transport"] == "loopback" {
			want = result.Stages
		}
		total, ok := c.Quantiles[result.StageMetric(result.StageTotal)]
		if !ok || total.Count == 0 {
			t.Fatalf("cell %s: no stage total in %v", c.Name, keys(c.Quantiles))
		}
		var meanSum float64
		for _, st := range result.Stages {
			q, ok := c.Quantiles[result.StageMetric(st)]
			if ok != slices.Contains(want, st) {
				t.Fatalf("cell %s: stage %s recorded=%v, want %v", c.Name, st, ok, !ok)
			}
			if !ok {
				continue
			}
			if q.Count != total.Count {
				t.Fatalf("cell %s: stage %s counts %d, total %d", c.Name, st, q.Count, total.Count)
			}
			meanSum += q.Mean
		}
		// Each send's stages add up to its total; HDR buckets keep 3 digits.
		if math.Abs(meanSum-total.Mean) > 0.01*total.Mean+50 {
			t.Fatalf("cell %s: stage means sum to %.0f ns, total mean %.0f ns", c.Name, meanSum, total.Mean)
		}
		// The breakdown covers the measured phase (reset at the end of the
		// warm-up; the few sends in flight at the end are drained).
		if n := float64(total.Count); n < 0.8*float64(c.Ops) || n > 1.1*float64(c.Ops)+100 {
			t.Fatalf("cell %s: %d sends in the breakdown, %d measured", c.Name, total.Count, c.Ops)
		}
		if c.Params["flush"] == "async" && c.Quantiles[result.StageMetric("flush_wait")].Max != 0 {
			t.Fatalf("cell %s: async puts waited for a flush", c.Name)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// A loopback cell driven by the official Apache RocketMQ Go client
// (engine.client rocketmq) beside one driven by brokerlab's own client, on
// the same kind of broker: both send, a tailing consumer reads through each
// client, and the broker's breakdown counts the official client's sends.
func TestOfficialClientCell(t *testing.T) {
	t.Parallel() // a run of its own: own directories and ports
	e, err := Parse([]byte(`
name: client-tiny
warmup: 100ms
duration: 500ms
interval: 100ms
settle: 1ms
engine: {segment_size: 1MiB, transport: loopback, flush: async, stages: true}
workload: {mode: closed, producers: 2, size: "fixed:256", queues: 2, tailing: 1}
matrix:
  - {param: client, values: [rocketmq, brokerlab]}
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
	if len(o.Cells) != 2 {
		t.Fatalf("%d cells", len(o.Cells))
	}
	for _, c := range o.Cells {
		if c.Error != "" || c.Ops == 0 {
			t.Fatalf("cell %s: error %q, %d ops\n%s", c.Name, c.Error, c.Ops, log.String())
		}
		if q := c.Quantiles["e2e"]; q.Count == 0 {
			t.Fatalf("cell %s: the tailing consumer read nothing (%v)", c.Name, keys(c.Quantiles))
		}
		if q := c.Quantiles[result.StageMetric(result.StageTotal)]; q.Count == 0 {
			t.Fatalf("cell %s: no stage breakdown", c.Name)
		}
	}
	if o.Cells[0].Params["client"] == o.Cells[1].Params["client"] {
		t.Fatalf("cells %s and %s", o.Cells[0].Name, o.Cells[1].Name)
	}
}

package experiments

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/ombresult"
	"github.com/brokerlab/brokerlab/experiments/result"
)

// A native experiment also writes an OMB result beside result.json, whose
// counts agree with the cell's: publish rate × time = messages
// acknowledged, and with a tailing consumer an end-to-end series.
func TestRunWritesOMBResult(t *testing.T) {
	t.Parallel() // a run of its own: own directories and ports
	e, err := Parse([]byte(`
name: tinyomb
warmup: 100ms
duration: 500ms
interval: 100ms
settle: 1ms
engine: {segment_size: 1MiB}
workload: {mode: open, rate: 2000, producers: 4, size: "fixed:100", queues: 2, tailing: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	o, err := Run(context.Background(), e, Options{OutRoot: t.TempDir(), StoreRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != result.StatusOK || len(o.Cells) != 1 || o.Cells[0].Error != "" {
		t.Fatalf("status %s cells %+v", o.Status, o.Cells)
	}
	c := o.Cells[0]
	r, err := ombresult.Read(filepath.Join(o.RunDir, OMBFileName(c.Name)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Workload != "tinyomb" || r.Driver != "brokerlab:"+c.Name || r.MessageSize != 100 || r.Partitions != 2 || r.ConsumersPerTopic != 1 {
		t.Fatalf("header %+v", r)
	}
	if len(r.PublishRate) != 1 || len(r.ConsumeRate) != 1 || len(r.PublishDelayLatency99pct) != 1 {
		t.Fatalf("periods: %d publish, %d consume (want one period of a 0.5 s run)", len(r.PublishRate), len(r.ConsumeRate))
	}
	if r.AggregatedPublishLatency50pct <= 0 || r.AggregatedEndToEndLatency50pct <= 0 || len(r.AggregatedPublishDelayLatencyQuantiles) == 0 {
		t.Fatalf("aggregates: publish p50 %v ms, e2e p50 %v ms", r.AggregatedPublishLatency50pct, r.AggregatedEndToEndLatency50pct)
	}
	// The service histogram is the cell's: its count is the messages acknowledged.
	if q := c.Quantiles["service"]; q.Count == 0 || r.AggregatedPublishLatencyMax*1e6 < q.P50 {
		t.Fatalf("publish max %v ms against the cell's service p50 %v ns", r.AggregatedPublishLatencyMax, q.P50)
	}
}

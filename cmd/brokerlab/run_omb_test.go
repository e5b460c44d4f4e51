package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/experiments"
	"github.com/brokerlab/brokerlab/experiments/ombresult"
	"github.com/brokerlab/brokerlab/experiments/result"
)

// `brokerlab run` takes an OMB workload file as is and writes both
// result.json and OMB's result JSON, against the embedded broker over
// loopback.
func TestRunOMBWorkload(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "1-topic-2-partitions-100b.yaml")
	os.WriteFile(wl, []byte(`
name: 1 topic / 2 partitions / 100b
topics: 1
partitionsPerTopic: 2
messageSize: 100
payloadFile: "payload/payload-100b.data"
subscriptionsPerTopic: 1
consumerPerSubscription: 1
producersPerTopic: 1
producerRate: 500
consumerBacklogSizeGB: 0
testDurationMinutes: 15
`), 0o644)
	out := filepath.Join(dir, "results")
	var stdout bytes.Buffer
	root := newRoot()
	root.SetOut(&stdout)
	root.SetArgs([]string{"run", wl, "--quick", "--duration", "500ms", "--out", out, "--store", t.TempDir(), "--no-plots"})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	line := strings.TrimSpace(strings.Split(stdout.String(), "\n")[0])
	runDir, ok := strings.CutPrefix(line, "results: ")
	if !ok {
		t.Fatalf("run printed %q", stdout.String())
	}
	runDir = strings.TrimSuffix(runDir, " (ok)")
	if filepath.Base(filepath.Dir(runDir)) != "1-topic-2-partitions-100b" {
		t.Fatalf("run directory %s is not named after the workload file", runDir)
	}
	res, err := result.ReadResult(filepath.Join(runDir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 1 || res.Cells[0].Ops == 0 || res.Cells[0].Error != "" {
		t.Fatalf("cells %+v", res.Cells)
	}
	r, err := ombresult.Read(filepath.Join(runDir, experiments.OMBFileName(res.Cells[0].Name)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Workload != "1 topic / 2 partitions / 100b" || r.MessageSize != 100 || r.Partitions != 2 || r.ProducersPerTopic != 1 || r.ConsumersPerTopic != 1 {
		t.Fatalf("OMB header %+v", r)
	}
	if len(r.PublishRate) == 0 || r.PublishRate[0] <= 0 || len(r.ConsumeRate) == 0 || r.AggregatedEndToEndLatency50pct <= 0 ||
		r.AggregatedPublishLatency50pct <= 0 || len(r.AggregatedPublishDelayLatencyQuantiles) == 0 {
		t.Fatalf("OMB series: publish %v consume %v e2e p50 %v", r.PublishRate, r.ConsumeRate, r.AggregatedEndToEndLatency50pct)
	}
}

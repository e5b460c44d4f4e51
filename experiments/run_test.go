package experiments

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// A tiny experiment runs end to end: every cell gets throughput, latency
// quantiles and spectra, histograms on disk, a manifest and bench lines
// (figures are drawn from these by cmd/brokerlab: TestRunDrawsFigures).
func TestRunTinyExperiment(t *testing.T) {
	t.Parallel() // a run of its own: own directories and ports
	e, err := Parse([]byte(`
name: tiny
warmup: 100ms
duration: 400ms
interval: 100ms
settle: 1ms
engine: {segment_size: 1MiB}
workload: {mode: closed, producers: 4, size: "uniform:100-2000"}
matrix:
  - {param: path, values: [mmap, pwrite]}
  - {param: flush, values: [async, group]}
`))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var log strings.Builder
	o, err := Run(context.Background(), e, Options{OutRoot: out, StoreRoot: t.TempDir(), Progress: &log, ProgressEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != result.StatusOK || len(o.Cells) != 4 {
		t.Fatalf("status %s, %d cells\n%s", o.Status, len(o.Cells), log.String())
	}
	for _, c := range o.Cells {
		if c.Error != "" || c.Ops == 0 || c.MsgPerSec <= 0 || c.MBPerSec <= 0 {
			t.Fatalf("cell %s: %+v", c.Name, c)
		}
		q := c.Quantiles["service"]
		if q.Count != c.Ops || q.P50 <= 0 || q.P99 < q.P50 || q.Max < q.P999 {
			t.Fatalf("cell %s service quantiles %+v (ops %d)", c.Name, q, c.Ops)
		}
		if len(c.Spectrum["service"]) == 0 || len(c.Series) == 0 {
			t.Fatalf("cell %s: no spectrum or series", c.Name)
		}
		if c.Params["flush"] == "group" && len(c.FlushBatches) == 0 {
			t.Fatalf("cell %s: no flush batches", c.Name)
		}
		if !strings.HasSuffix(c.Files.Hlog, ".hlog.gz") || len(c.Files.Hgrm) != 0 {
			t.Fatalf("cell %s files %+v: want a gzip'd .hlog and no .hgrm", c.Name, c.Files)
		}
		if _, err := os.Stat(filepath.Join(o.RunDir, c.Files.Hlog)); err != nil {
			t.Fatalf("cell %s: %v", c.Name, err)
		}
		// Host state beside the cell's own numbers.
		if _, err := os.Stat("/proc/pressure/io"); err == nil {
			if _, ok := c.Extra["psi_io_some_pct"]; !ok {
				t.Fatalf("cell %s: no io pressure in %v", c.Name, c.Extra)
			}
		}
		if _, ok := c.Extra["load1"]; !ok || c.Extra["appended_bytes"] <= 0 {
			t.Fatalf("cell %s: load %v appended %v", c.Name, c.Extra["load1"], c.Extra["appended_bytes"])
		}
	}
	// The interval log reads back and sums to the cell's count.
	ivs, err := result.ReadCellHlog(o.RunDir, &o.Cells[0])
	if err != nil {
		t.Fatal(err)
	}
	if h := result.MergeHlog(ivs, "service"); h == nil || h.TotalCount() != o.Cells[0].Ops {
		t.Fatalf("hlog service count vs ops %d", o.Cells[0].Ops)
	}
	// Each repetition's cells ran in a shuffled order, recorded per cell.
	orders := map[int]bool{}
	for _, c := range o.Cells {
		orders[c.Order] = true
	}
	if len(orders) != 4 {
		t.Fatalf("orders %v", orders)
	}
	// Nothing derived lives in the run: no figures, no .hgrm.
	entries, _ := os.ReadDir(o.RunDir)
	for _, en := range entries {
		if en.IsDir() || strings.HasSuffix(en.Name(), ".hgrm") || strings.HasSuffix(en.Name(), ".png") {
			t.Fatalf("derived file %s in the run", en.Name())
		}
	}
	run, err := result.LoadRun(o.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Result.Cells) != 4 || run.Manifest.Status != result.StatusOK || run.Manifest.Seed != e.Seed {
		t.Fatalf("loaded run: %d cells, manifest %+v", len(run.Result.Cells), run.Manifest.Status)
	}
	bench, err := os.ReadFile(filepath.Join(o.RunDir, result.BenchFile))
	if err != nil || !strings.Contains(string(bench), "BenchmarkProduce/path=mmap/flush=group") {
		t.Fatalf("bench.txt: %v\n%s", err, bench)
	}
	if !strings.Contains(log.String(), "msg/s") {
		t.Fatalf("no progress lines:\n%s", log.String())
	}
}

// Ctrl-C mid-run still writes complete results, the cut cell marked.
func TestRunInterrupted(t *testing.T) {
	e, err := Parse([]byte(`
name: cut
settle: 1ms
duration: 30s
interval: 100ms
engine: {segment_size: 1MiB}
matrix:
  - {param: flush, values: [async, group]}
`))
	if err != nil {
		t.Fatal(err)
	}
	// Cancel at the first progress line of the measured window, not after a
	// fixed time: before a cell runs, the host is synced and settled and the
	// store opened, which takes long on a loaded machine. The timeout only
	// bounds the test.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cut := &onLine{match: " t=", do: cancel}
	o, err := Run(ctx, e, Options{OutRoot: t.TempDir(), StoreRoot: t.TempDir(),
		Progress: cut, ProgressEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !cut.done {
		t.Fatalf("no progress line from the measured window:\n%s", cut.b.String())
	}
	if o.Status != result.StatusInterrupted || len(o.Cells) != 1 || o.Cells[0].Error != "interrupted" || o.Cells[0].Ops == 0 {
		t.Fatalf("status %s cells %+v", o.Status, o.Cells)
	}
	run, err := result.LoadRun(o.RunDir)
	if err != nil || run.Manifest.Status != result.StatusInterrupted {
		t.Fatalf("run on disk: %v %+v", err, run)
	}
}

// The injected stall shows in response time from the intended send but
// barely in service time: coordinated omission.
func TestStallShowsInResponseNotService(t *testing.T) {
	e, err := Parse([]byte(`
name: stall
settle: 1ms
warmup: 100ms
duration: 2500ms
interval: 100ms
engine: {path: mmap, flush: group, segment_size: 1MiB}
workload: {mode: open, rate: 400, producers: 1}
stall: {at: 300ms, length: 1s}
`))
	if err != nil {
		t.Fatal(err)
	}
	o, err := Run(context.Background(), e, Options{OutRoot: t.TempDir(), StoreRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	c := o.Cells[0]
	resp, svc := c.Quantiles["response"], c.Quantiles["service"]
	if resp.Max < float64(900*time.Millisecond) {
		t.Fatalf("response max %v: the 1 s stall did not show", time.Duration(resp.Max))
	}
	// ~400 messages were due during the stall: well over 1% of ~1000. The
	// stall is long so that service time's own p99 (real fsyncs, on a
	// machine perhaps loaded) stays far below half of it.
	if resp.P99 < float64(100*time.Millisecond) {
		t.Fatalf("response p99 %v; messages due during the stall must show it", time.Duration(resp.P99))
	}
	if svc.P99 >= resp.P99/2 {
		t.Fatalf("service p99 %v vs response p99 %v: service time should hide the stall", time.Duration(svc.P99), time.Duration(resp.P99))
	}
	if len(c.Markers) == 0 || c.Markers[0].Kind != result.MarkerStall {
		t.Fatalf("markers %+v", c.Markers)
	}
}

// The same experiment runs over loopback: broker in-process, brokerlab's
// remoting client as the producer and consumer.
func TestRunLoopback(t *testing.T) {
	t.Parallel() // a run of its own: own directories and ports
	e, err := Parse([]byte(`
name: wire
settle: 1ms
warmup: 100ms
duration: 500ms
interval: 100ms
engine: {segment_size: 1MiB, transport: loopback}
workload: {mode: closed, producers: 8, size: "fixed:512", tailing: 1}
matrix:
  - {param: flush, values: [async, group]}
`))
	if err != nil {
		t.Fatal(err)
	}
	o, err := Run(context.Background(), e, Options{OutRoot: t.TempDir(), StoreRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range o.Cells {
		if c.Error != "" || c.Ops == 0 || c.Quantiles["e2e"].Count == 0 {
			t.Fatalf("cell %s: ops %d, e2e %+v, error %q", c.Name, c.Ops, c.Quantiles["e2e"], c.Error)
		}
		if c.Extra["send_errors"] != 0 {
			t.Fatalf("cell %s: %v send errors", c.Name, c.Extra["send_errors"])
		}
	}
}

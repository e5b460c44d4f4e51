package experiments

import (
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
	"github.com/brokerlab/brokerlab/workloads/gen"
	"github.com/brokerlab/brokerlab/workloads/hist"
)

// Failed sends show in the cell's counts and in its percentiles: 10 of 100
// sends failing at a 3 s timeout put the p99 at the timeout.
func TestFailuresShowInCountsAndPercentiles(t *testing.T) {
	col := hist.NewCollector(hist.DefaultConfig())
	t0 := time.Now()
	col.Start(t0, t0)
	r := col.NewRecorder().In(hist.PhaseOf(t0, t0))
	for range 90 {
		r.RecordSized(gen.MetricService, time.Millisecond, 1024)
	}
	for range 10 {
		r.Record(gen.MetricServiceFailed, gen.DefaultSendTimeout)
		r.Add(gen.CounterSendFailedPrefix+"FLUSH_DISK_TIMEOUT", 1)
	}
	col.Tick(t0.Add(time.Second))
	sum := col.Summary()
	rc := result.Cell{Quantiles: map[string]result.Quantiles{}, Spectrum: map[string][]result.SpectrumPoint{}}
	withFailures(&rc, col, sum)
	countSends(&rc, sum)
	if rc.Attempted != 100 || rc.Acked != 90 || rc.Failed != 10 || rc.FailedByCode["FLUSH_DISK_TIMEOUT"] != 10 {
		t.Fatalf("sends %d attempted %d acked %d failed %v", rc.Attempted, rc.Acked, rc.Failed, rc.FailedByCode)
	}
	q := rc.Quantiles[gen.MetricService]
	if q.Count != 100 || q.Failed != 10 || q.P99 < float64(2*time.Second) || q.P50 > float64(2*time.Millisecond) {
		t.Fatalf("quantiles %+v: the failures must reach the p99", q)
	}
}

// A latency ratio over a saturated open-loop cell is refused; a throughput
// ratio above 1 over a ceiling is flagged.
func TestSaturatedLatencyRefusedAndCeilingFlagged(t *testing.T) {
	e, err := Parse([]byte(`
name: sat
engine: {path: mmap, transport: loopback}
workload: {mode: open, rate: 1000}
matrix:
  - {param: flush, values: [group, sync]}
pairings:
  - name: p99_group_vs_sync_at_1k
    numerator: {flush: group}
    denominator: {flush: sync}
    metric: p99
`))
	if err != nil {
		t.Fatal(err)
	}
	all, err := e.AllCells()
	if err != nil {
		t.Fatal(err)
	}
	num, _ := selectOne(e.Pairings[0], "numerator", e.Pairings[0].Num, all)
	den, _ := selectOne(e.Pairings[0], "denominator", e.Pairings[0].Den, all)
	var cells []result.Cell
	for rep := range 3 {
		a, b := rcell("", num.Name, rep, 1000), rcell("", den.Name, rep, 900)
		a.MarkSaturation(1000)
		b.MarkSaturation(1000)
		cells = append(cells, a, b)
	}
	rs := ComputeRatios(e.Pairings, all, cells)
	if len(rs) != 1 || !strings.Contains(rs[0].Missing, "denominator "+den.Name+" is saturated") {
		t.Fatalf("ratios %+v", rs)
	}
	if !strings.Contains(rs[0].String(), "RATIO p99_group_vs_sync_at_1k n/a") {
		t.Fatalf("line %q", rs[0].String())
	}

	fio := Cell{System: result.SystemFio, Name: "y"}
	bl := Cell{Name: "x"}
	bl.Exp.Engine.Path = "x"
	rs = ComputeRatios([]Pairing{{Name: "c", Num: map[string]string{"path": "x"}, Den: map[string]string{"system": "fio"}, Metric: "msg/s"}},
		[]Cell{bl, fio}, []result.Cell{rcell("", "x", 0, 1250), rcell(result.SystemFio, "y", 0, 1000)})
	if len(rs) != 1 || !strings.Contains(rs[0].String(), "ABOVE CEILING") {
		t.Fatalf("ceiling ratio %+v", rs)
	}
}

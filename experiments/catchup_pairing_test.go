package experiments

import (
	"errors"
	"strings"
	"testing"
)

// coldBase has a consumer starting 64 MiB behind, per read path, and one
// pwrite cell under a smaller page-cache budget.
const coldBase = `
name: cold
engine: {flush: async}
workload: {mode: open, rate: 5000, size: fixed:4096, lagging: 1, lag_bytes: 64MiB, prefill: 128MiB}
matrix:
  - {param: path, values: [pwrite, direct]}
  - {param: budget, values: [256MiB]}
extra:
  - {path: pwrite, budget: 128MiB}
pairings:
`

// catchup-MB/s compares the lagging consumer's read rate, repetition by
// repetition, higher being better; it needs a lagging consumer on both
// sides, the same backlog and the same page-cache budget.
func TestCatchUpPairing(t *testing.T) {
	e, err := Parse([]byte(coldBase + "  - {name: catchup_pwrite_vs_direct, numerator: {path: pwrite, budget: 256MiB}, denominator: {path: direct}, metric: catchup-MB/s}\n"))
	if err != nil {
		t.Fatalf("pwrite vs direct catch-up: %v", err)
	}
	all, err := e.AllCells()
	if err != nil {
		t.Fatal(err)
	}
	cells := extraCells(all, "catchup_mb_per_sec", func(c Cell) float64 {
		return map[string]float64{"pwrite": 300, "direct": 40}[c.Exp.Engine.Path]
	})
	rs := ComputeRatios(e.Pairings, all, cells)
	if len(rs) != 1 || rs[0].Missing != "" {
		t.Fatalf("ratios %+v", rs)
	}
	if got := rs[0].Stat.Median; got != 7.5 {
		t.Errorf("catch-up ratio median %v, want 7.5 (300/40 in every repetition)", got)
	}
	if s := rs[0].String(); strings.Contains(s, "lower is better") {
		t.Errorf("ratio line %q: a faster catch-up is better", s)
	}

	_, err = Parse([]byte(coldBase + "  - {name: budgets, numerator: {path: pwrite, budget: 256MiB}, denominator: {path: pwrite, budget: 128MiB}, metric: catchup-MB/s}\n"))
	if !errors.Is(err, ErrUnlikePair) || !strings.Contains(err.Error(), "page-cache budget differs (256MiB vs 128MiB)") {
		t.Fatalf("catch-up under different budgets: %v", err)
	}

	noLag := strings.Replace(coldBase, "lagging: 1, lag_bytes: 64MiB, prefill: 128MiB", "prefill: 128MiB", 1)
	_, err = Parse([]byte(noLag + "  - {name: none, numerator: {path: pwrite, budget: 256MiB}, denominator: {path: direct}, metric: catchup-MB/s}\n"))
	if !errors.Is(err, ErrUnlikePair) || !strings.Contains(err.Error(), "has no lagging consumer") {
		t.Fatalf("catch-up without a lagging consumer: %v", err)
	}
}

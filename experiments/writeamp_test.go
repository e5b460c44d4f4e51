package experiments

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// write-amp compares brokerlab's cells by the bytes the device wrote per
// byte appended, repetition by repetition, lower being better; a peer that
// appends to no commit log is not a side of such a pairing.
func TestWriteAmpPairing(t *testing.T) {
	y := `
name: w
engine: {path: mmap, flush: group, transport: loopback}
workload: {mode: open, rate: 4000}
peers: [nats]
matrix:
  - {param: advice, values: [normal, random]}
pairings:
`
	e, err := Parse([]byte(y + "  - {name: wa, numerator: {advice: random}, denominator: {advice: normal}, metric: write-amp}\n"))
	if err != nil {
		t.Fatalf("advice random vs normal: %v", err)
	}
	all, err := e.AllCells()
	if err != nil {
		t.Fatal(err)
	}
	cells := extraCells(all, "write_amplification", func(c Cell) float64 {
		return map[string]float64{"normal": 200, "random": 4}[c.Exp.Engine.Advice]
	})
	rs := ComputeRatios(e.Pairings, all, cells)
	if len(rs) != 1 || rs[0].Missing != "" {
		t.Fatalf("ratios %+v", rs)
	}
	if got := rs[0].Stat.Median; got != 0.02 {
		t.Errorf("write-amp ratio median %v, want 0.02 (4/200 in every repetition)", got)
	}
	if s := rs[0].String(); !strings.Contains(s, "(write-amp, lower is better") {
		t.Errorf("ratio line %q does not say lower is better", s)
	}

	// {advice: normal} selects the cell that gives no advice.
	_, err = Parse([]byte(`
name: w
engine: {path: mmap, flush: group}
workload: {mode: open, rate: 4000}
extra:
  - {advice: random}
pairings:
  - {name: wa, numerator: {advice: random}, denominator: {advice: normal}, metric: write-amp}
`))
	if err != nil {
		t.Fatalf("advice random vs the cell without advice: %v", err)
	}

	_, err = Parse([]byte(y + "  - {name: peer, numerator: {advice: normal}, denominator: {system: nats}, metric: write-amp}\n"))
	if !errors.Is(err, ErrUnlikePair) || !strings.Contains(err.Error(), "appends to no commit log") {
		t.Fatalf("brokerlab vs NATS on write-amp: %v", err)
	}
}

// extraCells gives each of brokerlab's cells in all three repetitions whose
// extra key is base(cell) × (rep+1): every repetition keeps the cells'
// ratio, so a pairing's median is the ratio of the bases.
func extraCells(all []Cell, key string, base func(Cell) float64) []result.Cell {
	var cells []result.Cell
	for _, c := range all {
		if c.System != "" && c.System != result.SystemBrokerlab {
			continue
		}
		for rep := range 3 {
			cells = append(cells, result.Cell{Name: c.Name, Rep: rep, MsgPerSec: 1000,
				Extra: map[string]float64{key: base(c) * float64(rep+1)}})
		}
	}
	return cells
}

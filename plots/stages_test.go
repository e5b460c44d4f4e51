package plots

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// stageCell is a cell with a breakdown of the given stages (values in ns
// growing with the stage's index, so the stack is known).
func stageCell(name string, stages ...string) result.Cell {
	c := result.Cell{Name: name, System: result.SystemBrokerlab, Ops: 1, MsgPerSec: 1, Quantiles: map[string]result.Quantiles{}}
	total := 0.0
	for i, st := range stages {
		v := float64(i+1) * 1000
		total += v
		c.Quantiles[result.StageMetric(st)] = result.Quantiles{P50: v, P99: 2 * v, P999: 3 * v, Count: 10}
	}
	c.Quantiles[result.StageMetric(result.StageTotal)] = result.Quantiles{P50: total, P99: 2 * total, P999: 3 * total, Count: 10}
	return c
}

// TestStagesFigure: one panel per configuration with a breakdown, three
// per row, the stacks as tall as the stage values at each percentile;
// cells without a breakdown give ErrNoData.
func TestStagesFigure(t *testing.T) {
	if _, err := Stages([]result.Cell{{Name: "path=mmap/flush=async", Ops: 1, MsgPerSec: 1,
		Quantiles: map[string]result.Quantiles{"service": {P50: 1, Count: 1}}}}); !errors.Is(err, ErrNoData) {
		t.Fatalf("no breakdown: %v", err)
	}
	cells := []result.Cell{
		stageCell("path=mmap/flush=async/transport=loopback", result.Stages...),
		stageCell("path=mmap/flush=async/transport=inproc", "process", "lock_wait", "lock_hold", "flush_wait"),
		stageCell("path=pwrite/flush=group/transport=loopback", result.Stages...),
		stageCell("path=pwrite/flush=group/transport=inproc", "process", "lock_wait", "lock_hold", "flush_wait"),
	}
	f, err := Stages(cells)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels) != 2 || len(f.Panels[0]) != 3 || f.Panels[1][1] != nil || f.Panels[1][2] != nil {
		t.Fatalf("panel grid %dx%d, want 2x3 with 4 panels", len(f.Panels), len(f.Panels[0]))
	}
	// The loopback panel's p99.9 stack: 3 × (1+…+8) µs = 108 µs, y to 10 % above.
	found := false
	for _, row := range f.Panels {
		for _, p := range row {
			if p != nil && p.Title.Text == cellLabel(result.SystemBrokerlab, cells[0].Name) {
				found = true
				if p.Y.Max < 108 || p.Y.Max > 108*1.2 {
					t.Fatalf("loopback panel y max %v, want just above 108 µs", p.Y.Max)
				}
			}
		}
	}
	if !found {
		t.Fatalf("no panel for %s", cells[0].Name)
	}
	render(t, f)
}

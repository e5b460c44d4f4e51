package plots

import (
	"bytes"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// layeredResidencyCell is residencyCell with cachestat totals and a model.
func layeredResidencyCell(model bool) result.Cell {
	c := residencyCell()
	rs := c.Residency
	for i := range rs.T {
		rs.ResidentMiB = append(rs.ResidentMiB, 50+10*float64(i))
		rs.DirtyMiB = append(rs.DirtyMiB, 20+float64(i))
		rs.WritebackMiB = append(rs.WritebackMiB, 5)
	}
	if model {
		rs.Model = &result.ResidencyModel{T: []float64{0, 40, 90}, ResidentMiB: []float64{0, 80, 130}, DirtyMiB: []float64{0, 24, 24},
			BackgroundAt: 30, Background: true}
	}
	return c
}

func TestResidencyLayers(t *testing.T) {
	plain := residencyCell()
	f, err := ResidencyHeatmap(&plain)
	if err != nil || len(f.Panels) != 1 {
		t.Fatalf("without layers: %v rows, %v", len(f.Panels), err)
	}
	for _, model := range []bool{false, true} {
		c := layeredResidencyCell(model)
		f, err := ResidencyHeatmap(&c)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Panels) != 2 || f.Panels[1][0] == nil {
			t.Fatalf("model %v: %d rows, want the layers panel", model, len(f.Panels))
		}
		var svg bytes.Buffer
		if err := f.WriteSVG(&svg); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"dirty", "writeback"} {
			if !strings.Contains(svg.String(), want) {
				t.Fatalf("model %v: no %q in the figure", model, want)
			}
		}
		if got := strings.Contains(svg.String(), "model resident"); got != model {
			t.Fatalf("model line drawn %v, want %v", got, model)
		}
	}
	onlyModel := residencyCell()
	onlyModel.Residency.Model = layeredResidencyCell(true).Residency.Model
	if f, err := ResidencyHeatmap(&onlyModel); err != nil || len(f.Panels) != 2 {
		t.Fatalf("model without cachestat: %v", err)
	}
}

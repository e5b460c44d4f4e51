package plots

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// testDPI keeps PNG rendering cheap in tests (rasterizing is slow under
// -race); the drawing code is the same at every resolution.
const testDPI = 30

// render draws f in both formats and fails the test on error.
func render(t *testing.T, f *Figure) {
	t.Helper()
	f.DPI = testDPI
	var b bytes.Buffer
	if err := f.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := f.WritePNG(&b); err != nil {
		t.Fatal(err)
	}
}

func TestFiguresWithoutDataReturnErrNoData(t *testing.T) {
	plain := []result.Cell{cell(result.SystemBrokerlab, "path=mmap", 0, 100, 1000, 1)}
	failed := frontierCells()
	for i := range failed {
		failed[i].Error = "aborted"
	}
	rc := residencyCell()
	rc.Residency.Fraction = rc.Residency.Fraction[:2]
	noTimes := residencyCell()
	noTimes.Residency.T = []float64{10, 10, 30, 40, 50, 60, 70, 80}
	cases := map[string]func() (*Figure, error){
		"percentile nil":        func() (*Figure, error) { return LatencyByPercentile(nil, "e2e") },
		"percentile no spectra": func() (*Figure, error) { return LatencyByPercentile(plain, "") },
		"percentile other metric": func() (*Figure, error) {
			return LatencyByPercentile(percentileCells(), "append")
		},
		"frontier one rate":     func() (*Figure, error) { return Frontier(plain) },
		"frontier failed cells": func() (*Figure, error) { return Frontier(failed) },
		"group commit no conc":  func() (*Figure, error) { return GroupCommit(frontierCells()) },
		"segment no seg":        func() (*Figure, error) { return SegmentSweep(groupCommitCells()) },
		"timeseries none":       func() (*Figure, error) { return TimeSeries(plain, FieldP99) },
		"timeseries extra":      func() (*Figure, error) { return TimeSeries(segmentCells(), "no_such_field") },
		"residency none":        func() (*Figure, error) { return ResidencyHeatmap(&plain[0]) },
		"residency ragged":      func() (*Figure, error) { return ResidencyHeatmap(&rc) },
		"residency times":       func() (*Figure, error) { return ResidencyHeatmap(&noTimes) },
		"bars none":             func() (*Figure, error) { return Bars(nil, "msg/s") },
		"bars missing extra":    func() (*Figure, error) { return Bars(barCells(), "majflt") },
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := build()
			if !errors.Is(err, ErrNoData) || f != nil {
				t.Fatalf("got %v, %v; want ErrNoData", f, err)
			}
		})
	}
}

func TestLatencyByPercentileDropsUnplottablePoints(t *testing.T) {
	c := cell(result.SystemBrokerlab, "path=mmap", 0, 100, 1000, 1)
	c.Spectrum = map[string][]result.SpectrumPoint{"e2e": {
		{Percentile: 0, ValueNs: 0},             // zero: log axis would panic
		{Percentile: 50, ValueNs: 1000},         //
		{Percentile: 90, ValueNs: -5},           // negative
		{Percentile: 99, ValueNs: 5000},         //
		{Percentile: 99.99999999, ValueNs: 1e4}, // beyond 99.9999%
		{Percentile: 100, ValueNs: 9e6},         // +Inf on x
		{Percentile: 101, ValueNs: 9e6},         // nonsense
	}}
	f, err := LatencyByPercentile([]result.Cell{c}, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	render(t, f)
	var svg bytes.Buffer
	if err := f.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "(max 9ms)") || !strings.Contains(svg.String(), "99%") {
		t.Errorf("legend max or percentile ticks missing")
	}
	// One usable point is not a line.
	c.Spectrum["e2e"] = c.Spectrum["e2e"][:2]
	if _, err := LatencyByPercentile([]result.Cell{c}, "e2e"); !errors.Is(err, ErrNoData) {
		t.Fatalf("single point: %v", err)
	}
}

func TestFiguresRenderEdgeCases(t *testing.T) {
	// A series holding zeros and a NaN, a one-column residency map, a sweep
	// whose only latency is zero, bars of a single configuration.
	ts := segmentCells()
	ts[0].Series[3].P99 = math.NaN()
	ts[0].Series[4].P99 = 0
	one := residencyCell()
	one.Residency = &result.Residency{Segments: []string{"0000"}, T: []float64{5}, Fraction: [][]float64{{0.5}}}
	zeroLat := groupCommitCells()
	for i := range zeroLat {
		zeroLat[i].Quantiles = nil
	}
	single := []result.Cell{cell(result.SystemBrokerlab, "path=mmap", 0, 100, 1000, 1)}
	for name, build := range map[string]func() (*Figure, error){
		"timeseries nan":      func() (*Figure, error) { return TimeSeries(ts, FieldP99) },
		"timeseries extra":    func() (*Figure, error) { return TimeSeries(ts, FieldDirtyMiB) },
		"residency one cell":  func() (*Figure, error) { return ResidencyHeatmap(&one) },
		"group commit no lat": func() (*Figure, error) { return GroupCommit(zeroLat) },
		"bars single":         func() (*Figure, error) { return Bars(single, "p99") },
		"bars extra":          func() (*Figure, error) { return Bars(barCells(), "e2e.p999") },
		"segment sweep":       func() (*Figure, error) { return SegmentSweep(segmentCells()) },
		"group commit":        func() (*Figure, error) { return GroupCommit(groupCommitCells()) },
	} {
		t.Run(name, func(t *testing.T) {
			f, err := build()
			if err != nil {
				t.Fatal(err)
			}
			render(t, f)
		})
	}
}

func TestGroupCommitHasBatchPanelOnlyWithBatches(t *testing.T) {
	f, err := GroupCommit(groupCommitCells())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels[0]) != 3 {
		t.Fatalf("panels: %d, want 3 (throughput, p99, batches)", len(f.Panels[0]))
	}
	cs := groupCommitCells()
	for i := range cs {
		cs[i].FlushBatches = nil
	}
	if f, _ = GroupCommit(cs); len(f.Panels[0]) != 2 {
		t.Fatalf("panels without batches: %d", len(f.Panels[0]))
	}
}

func TestRenderTurnsPanicsIntoErrors(t *testing.T) {
	p := plot.New()
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 2}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(l)
	p.X.Scale = plot.LogScale{} // x = 0 on a log axis: gonum panics
	f := &Figure{Name: "bad", Panels: [][]*plot.Plot{{p}}, Width: panelWidth, Height: panelHeight}
	if err := f.WriteSVG(&bytes.Buffer{}); !errors.Is(err, ErrRender) {
		t.Fatalf("svg: %v", err)
	}
	dir := t.TempDir()
	if _, err := f.Save(dir); !errors.Is(err, ErrRender) {
		t.Fatalf("save: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a failed render left files: %v", entries)
	}
	for _, bad := range []*Figure{
		{Name: "empty", Width: panelWidth, Height: panelHeight},
		{Name: "ragged", Panels: [][]*plot.Plot{{p, p}, {p}}, Width: panelWidth, Height: panelHeight},
		{Name: "widths", Panels: [][]*plot.Plot{{p}}, ColWidths: []float64{1, 2}, Width: panelWidth, Height: panelHeight},
		{Name: "size", Panels: [][]*plot.Plot{{p}}},
	} {
		if err := bad.WritePNG(&bytes.Buffer{}); !errors.Is(err, ErrRender) {
			t.Errorf("%s: %v", bad.Name, err)
		}
	}
}

func TestSaveWritesBothFormats(t *testing.T) {
	f, err := Bars(barCells(), "msg/s")
	if err != nil {
		t.Fatal(err)
	}
	f.DPI = testDPI
	dir := t.TempDir()
	paths, err := f.Save(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "bars-msg_s.png"), filepath.Join(dir, "bars-msg_s.svg")}
	if len(paths) != 2 || paths[0] != want[0] || paths[1] != want[1] {
		t.Fatalf("paths %v", paths)
	}
	png, _ := os.ReadFile(paths[0])
	svg, _ := os.ReadFile(paths[1])
	if !bytes.HasPrefix(png, []byte("\x89PNG")) || !bytes.Contains(svg, []byte("<svg")) {
		t.Fatal("wrong file contents")
	}
}

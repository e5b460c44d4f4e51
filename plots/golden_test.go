package plots

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.svg")

// goldenFigures are the figures whose SVG output is pinned byte for byte.
func goldenFigures(t *testing.T) map[string]*Figure {
	t.Helper()
	rc := residencyCell()
	out := map[string]*Figure{}
	for name, build := range map[string]func() (*Figure, error){
		"latency-by-percentile": func() (*Figure, error) { return LatencyByPercentile(percentileCells(), "e2e") },
		"frontier":              func() (*Figure, error) { return Frontier(frontierCells()) },
		"bars-msg_s":            func() (*Figure, error) { return Bars(barCells(), "msg/s") },
		"residency":             func() (*Figure, error) { return ResidencyHeatmap(&rc) },
	} {
		f, err := build()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = f
	}
	return out
}

func TestGoldenSVG(t *testing.T) {
	for name, f := range goldenFigures(t) {
		t.Run(name, func(t *testing.T) {
			var got bytes.Buffer
			if err := f.WriteSVG(&got); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", name+".svg")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./plots -run Golden -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("%s differs from %s (%d vs %d bytes); if the change is intended, rerun with -update",
					name, path, got.Len(), len(want))
			}
		})
	}
}

// Rendering the same input twice, from freshly built figures, gives the
// same bytes: no timestamps, no map-order dependence. (The golden figures'
// SVGs are pinned by TestGoldenSVG; here their PNGs are checked.)
func TestOutputIsDeterministic(t *testing.T) {
	first, second := goldenFigures(t), goldenFigures(t)
	golden := map[string]bool{}
	for name := range first {
		golden[name] = true
	}
	big := bigResidencyCell()
	extra := map[string]func() (*Figure, error){
		"group-commit":  func() (*Figure, error) { return GroupCommit(groupCommitCells()) },
		"segment-sweep": func() (*Figure, error) { return SegmentSweep(segmentCells()) },
		"timeseries":    func() (*Figure, error) { return TimeSeries(segmentCells(), FieldP99) },
		"bars-p99":      func() (*Figure, error) { return Bars(barCells(), "p99") },
		"residency-big": func() (*Figure, error) { return ResidencyHeatmap(&big) }, // rasterized
	}
	for name, build := range extra {
		a, err := build()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := build()
		first[name], second[name] = a, b
	}
	for name := range first {
		for _, format := range []string{"png", "svg"} {
			if format == "svg" && golden[name] {
				continue
			}
			var x, y bytes.Buffer
			write := func(f *Figure, w *bytes.Buffer) error {
				f.DPI = testDPI
				if format == "png" {
					return f.WritePNG(w)
				}
				return f.WriteSVG(w)
			}
			if err := write(first[name], &x); err != nil {
				t.Fatal(err)
			}
			if err := write(second[name], &y); err != nil {
				t.Fatal(err)
			}
			if x.Len() == 0 || !bytes.Equal(x.Bytes(), y.Bytes()) {
				t.Errorf("%s.%s: output differs between two renders (%d vs %d bytes)", name, format, x.Len(), y.Len())
			}
		}
	}
}

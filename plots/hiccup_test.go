package plots

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// writeHlog writes a gzip'd interval log for c with one interval per value
// of maxes (ms), tagged with c's primary metric.
func writeHlog(t *testing.T, dir string, c *result.Cell, maxes []float64) {
	t.Helper()
	var buf bytes.Buffer
	w := hdr.NewHistogramLogWriter(&buf)
	w.OutputLogFormatVersion()
	w.OutputStartTime(5_000_000)
	w.OutputBaseTime(5_000_000)
	w.SetBaseTime(5_000_000)
	w.OutputLegend()
	for i, m := range maxes {
		h := hdr.New(1, 60e9, 3)
		h.RecordValue(100_000)
		h.RecordValue(int64(m * 1e6))
		h.SetTag(c.PrimaryMetric())
		h.SetStartTimeMs(5_000_000 + int64(i)*1000)
		h.SetEndTimeMs(5_000_000 + int64(i+1)*1000)
		if err := w.OutputIntervalHistogram(h); err != nil {
			t.Fatal(err)
		}
	}
	c.Files.Hlog = result.HlogName(c.Name, c.Rep) + ".gz"
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(buf.Bytes())
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, c.Files.Hlog), z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The hiccup figure reads the interval logs: one point per interval at its
// maximum, a stall as a spike.
func TestHiccupsFromIntervalLogs(t *testing.T) {
	dir := t.TempDir()
	cs := barCells()[:2]
	for i := range cs {
		writeHlog(t, dir, &cs[i], []float64{1, 2, 500, 1.5})
	}
	f, err := Hiccups(dir, cs)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "hiccups" || f.Panels[0][0].Y.Max < 500 || f.Panels[0][0].Y.Min > 1 {
		t.Fatalf("figure %s y [%v, %v]", f.Name, f.Panels[0][0].Y.Min, f.Panels[0][0].Y.Max)
	}
	if _, err := Hiccups(t.TempDir(), cs); err == nil {
		t.Fatal("no logs, yet a figure")
	}
	// A later repetition's log (older runs kept one per repetition) is not
	// drawn: one line per cell, its repetition 0.
	later := cs[0]
	later.Rep = 1
	writeHlog(t, dir, &later, []float64{1, 5000})
	f, err = Hiccups(dir, append(cs, later))
	if err != nil {
		t.Fatal(err)
	}
	if y := f.Panels[0][0].Y.Max; y >= 5000 {
		t.Fatalf("repetition 1 drawn: y max %v", y)
	}
}

// Every figure of a run, derived twice into two directories, is byte for
// byte the same (PNG and SVG).
func TestRenderRunToIsByteIdentical(t *testing.T) {
	cs := barCells()
	dir := writeRun(t, "same", nil)
	for i := range cs {
		writeHlog(t, dir, &cs[i], []float64{1, 3, 2})
	}
	if err := result.WriteResult(dir, result.Result{Experiment: "same", Cells: cs}); err != nil {
		t.Fatal(err)
	}
	a, b := t.TempDir(), t.TempDir()
	pa, err := RenderRunTo(dir, a)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := RenderRunTo(dir, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(pa) == 0 || len(pa) != len(pb) {
		t.Fatalf("%d vs %d files", len(pa), len(pb))
	}
	hiccups := false
	for i := range pa {
		x, _ := os.ReadFile(pa[i])
		y, _ := os.ReadFile(pb[i])
		if len(x) == 0 || !bytes.Equal(x, y) || filepath.Base(pa[i]) != filepath.Base(pb[i]) {
			t.Errorf("%s differs from %s", pa[i], pb[i])
		}
		hiccups = hiccups || strings.HasPrefix(filepath.Base(pa[i]), "hiccups.")
	}
	if !hiccups {
		t.Errorf("no hiccup figure among %v", pa)
	}
}

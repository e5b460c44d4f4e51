package plots

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/result"
)

func writeRun(t *testing.T, experiment string, cells []result.Cell) string {
	t.Helper()
	dir, err := result.CreateRunDir(t.TempDir(), experiment, "20260101T000000Z-00000000")
	if err != nil {
		t.Fatal(err)
	}
	if err := result.WriteResult(dir, result.Result{Experiment: experiment, Cells: cells}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// planned returns the names of the figures RunFigures builds for dir, and
// draws each as SVG (cheap) to prove it renders.
func planned(t *testing.T, dir string) []string {
	t.Helper()
	figs, err := RunFigures(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		if err := f.WriteSVG(io.Discard); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		names = append(names, f.Name)
	}
	return names
}

func TestRunFiguresChoosesByData(t *testing.T) {
	cells := append(frontierCells(), segmentCells()...)
	cells = append(cells, residencyCell())
	pc := percentileCells()
	cells = append(cells, pc[0], pc[3])
	got := planned(t, writeRun(t, "e1", cells))
	want := []string{"latency-by-percentile", "frontier", "segment-sweep", "timeseries-p99", "timeseries-rate",
		"timeseries-dirty_mib", "residency-path=mmap,flush=async.r0"}
	if !slices.Equal(got, want) {
		t.Fatalf("figures %v, want %v", got, want)
	}
	if got := planned(t, writeRun(t, "e2", barCells())); !slices.Equal(got, []string{"bars-msg_s", "bars-p99"}) {
		t.Fatalf("bars run: %v", got)
	}
	if got := planned(t, writeRun(t, "e3", groupCommitCells())); !slices.Equal(got, []string{"group-commit"}) {
		t.Fatalf("group commit run: %v", got)
	}
	figs, err := RunFigures(writeRun(t, "e9", frontierCells()))
	if err != nil {
		t.Fatal(err)
	}
	if title := figs[0].Panels[0][0].Title.Text; title != "e9: p50 vs throughput\nopen loop, offered rate swept, latency = e2e" {
		t.Errorf("title %q lacks the experiment name or the loop and clock", title)
	}
	// The legend sits in its own column, outside the data.
	row := figs[0].Panels[0]
	if len(row) != 4 || legendLen(row[3].Legend) == 0 || legendLen(row[0].Legend) != 0 {
		t.Errorf("legend not moved out of the data: %d panels", len(row))
	}
}

func TestRenderRunWritesFigures(t *testing.T) {
	// A single small figure keeps the PNG cost (slow under -race) low.
	c := cell(result.SystemBrokerlab, "path=mmap/flush=sync", 0, 100, 1000, 1)
	c.Spectrum = map[string][]result.SpectrumPoint{"e2e": spectrum(1000, 1)}
	dir := writeRun(t, "e1", []result.Cell{c})
	out := t.TempDir()
	paths, err := RenderRunTo(dir, out)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(out, "latency-by-percentile.png"), filepath.Join(out, "latency-by-percentile.svg")}
	if !slices.Equal(paths, want) {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	// Figures never go into the run itself.
	if _, err := RenderRunTo(dir, filepath.Join(dir, "figures")); err == nil {
		t.Fatal("rendering into the run directory was accepted")
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestRenderRunReadsHgrmFiles(t *testing.T) {
	c := cell(result.SystemBrokerlab, "path=mmap/flush=sync", 0, 100, 1000, 1)
	c.Files = result.CellFiles{Hgrm: map[string]string{"e2e": "mmap.e2e.hgrm"}, HgrmUnitNs: 1000}
	dir := writeRun(t, "e4", []result.Cell{c})
	hgrm := " Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n" +
		"      10.000     0.000000            1         1.00\n" +
		"      20.000     0.500000           50         2.00\n" +
		"      90.000     0.990000           99       100.00\n" +
		"     400.000     1.000000          100          inf\n" +
		"#[Mean    =       25.000, StdDeviation   =       10.000]\n#[Max     =      400.000, Total count    =          100]\n"
	if err := os.WriteFile(filepath.Join(dir, "mmap.e2e.hgrm"), []byte(hgrm), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := planned(t, dir); !slices.Equal(got, []string{"latency-by-percentile"}) {
		t.Fatalf("figures: %v", got)
	}
}

func TestRenderRunEmptyAndPartial(t *testing.T) {
	// No result at all.
	if _, err := RenderRunTo(t.TempDir(), t.TempDir()); !errors.Is(err, result.ErrNoResult) {
		t.Fatalf("empty dir: %v", err)
	}
	// An empty result.
	if _, err := RenderRunTo(writeRun(t, "e5", nil), t.TempDir()); !errors.Is(err, ErrNoData) {
		t.Fatalf("no cells: %v", err)
	}
	// Only failed cells.
	failed := frontierCells()
	for i := range failed {
		failed[i].Error = "interrupted"
	}
	if _, err := RenderRunTo(writeRun(t, "e6", failed), t.TempDir()); !errors.Is(err, ErrNoData) {
		t.Fatalf("failed cells: %v", err)
	}
	// One bare cell: nothing applies.
	if _, err := RenderRunTo(writeRun(t, "e7", []result.Cell{{Name: "a=1"}}), t.TempDir()); !errors.Is(err, ErrNoData) {
		t.Fatalf("bare cell: %v", err)
	}
	// A partial result: a ragged residency matrix written by hand (WriteResult
	// would refuse it) and a missing .hgrm file are skipped; the rest renders.
	dir := writeRun(t, "e8", barCells())
	raw := `{"schema":1,"experiment":"e8","cells":[
	 {"name":"path=mmap/flush=async","system":"brokerlab","rep":0,"msg_per_sec":100,"mb_per_sec":0.1,
	  "quantiles":{"e2e":{"p50_ns":10,"p99_ns":20,"count":5}},
	  "residency":{"segments":["a","b"],"t":[1],"fraction":[[0.5]]},
	  "files":{"hgrm":{"e2e":"missing.hgrm"}}},
	 {"name":"path=pwrite/flush=async","system":"brokerlab","rep":0,"msg_per_sec":80,"mb_per_sec":0.08,
	  "quantiles":{"e2e":{"p50_ns":12,"p99_ns":30,"count":5}},"files":{}}]}`
	if err := os.WriteFile(filepath.Join(dir, result.ResultFile), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := planned(t, dir); !slices.Equal(got, []string{"bars-msg_s", "bars-p99"}) {
		t.Fatalf("partial: %v", got)
	}
}

func TestRenderRunFromBenchTxtOnly(t *testing.T) {
	root := t.TempDir()
	dir, err := result.CreateRunDir(root, "bench", "20260101T000000Z-00000000")
	if err != nil {
		t.Fatal(err)
	}
	if err := result.WriteBenchFile(dir, result.Manifest{Experiment: "bench"}, barCells()); err != nil {
		t.Fatal(err)
	}
	if got := planned(t, dir); !slices.Equal(got, []string{"bars-msg_s", "bars-p99"}) {
		t.Fatalf("bench-only run: %v", got)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The CLI's run → plot on a tiny experiment, in-process.
func TestRunThenPlot(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "tiny.yaml")
	os.WriteFile(exp, []byte(`
name: tiny
settle: 1ms
warmup: 100ms
duration: 300ms
interval: 100ms
engine: {segment_size: 1MiB}
workload: {mode: closed, producers: 2, size: fixed:256}
matrix:
  - {param: flush, values: [group]} # one cell: drawing is slow under -race
`), 0o644)
	out := filepath.Join(dir, "results")
	var stdout bytes.Buffer
	root := newRoot()
	root.SetOut(&stdout)
	root.SetArgs([]string{"run", exp, "--out", out, "--store", t.TempDir(), "--no-plots"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(strings.Split(stdout.String(), "\n")[0])
	runDir, ok := strings.CutPrefix(line, "results: ")
	if !ok {
		t.Fatalf("run printed %q", stdout.String())
	}
	runDir = strings.TrimSuffix(runDir, " (ok)")
	for _, f := range []string{"manifest.json", "result.json", "bench.txt"} {
		if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
			t.Fatal(err)
		}
	}
	stdout.Reset()
	root = newRoot()
	root.SetOut(&stdout)
	figs := filepath.Join(dir, "figs")
	root.SetArgs([]string{"plot", "--out", figs, runDir})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".png", ".svg", ".service.hgrm"} {
		if !strings.Contains(stdout.String(), ext) {
			t.Fatalf("plot printed no %s: %q", ext, stdout.String())
		}
	}
	// Derived files land under --out/<experiment>/<stamp>, not in the run.
	if !strings.Contains(stdout.String(), filepath.Join(figs, "tiny", filepath.Base(runDir))) {
		t.Fatalf("plot wrote elsewhere: %q", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(runDir, "figures")); err == nil {
		t.Fatal("figures written into the run")
	}
	// plot without --out is refused.
	root = newRoot()
	root.SetArgs([]string{"plot", runDir})
	if err := root.Execute(); err == nil {
		t.Fatal("plot without --out accepted")
	}
	// --replay refuses a binary that is not the recorded revision (a test
	// binary has no VCS stamp); --at-head reruns the recorded config with
	// this code and its manifest says so.
	root = newRoot()
	root.SetArgs([]string{"run", "--replay", runDir, "--out", out, "--store", t.TempDir(), "--no-plots"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "--at-head") {
		t.Fatalf("replay by another revision: %v", err)
	}
	stdout.Reset()
	root = newRoot()
	root.SetOut(&stdout)
	root.SetArgs([]string{"run", "--replay", runDir, "--at-head", "--out", out, "--store", t.TempDir(), "--no-plots"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	replayDir := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(strings.Split(stdout.String(), "\n")[0]), "results: "), " (ok)")
	a, _ := os.ReadFile(filepath.Join(runDir, "manifest.json"))
	b, _ := os.ReadFile(filepath.Join(replayDir, "manifest.json"))
	if cfgOf(t, a) != cfgOf(t, b) {
		t.Fatalf("replayed config differs:\n%s\n%s", cfgOf(t, a), cfgOf(t, b))
	}
	if !strings.Contains(string(b), "replay AT HEAD (--at-head)") {
		t.Fatalf("the replay's manifest does not say it ran other code:\n%s", b)
	}
	// A bad experiment file is a clear error, not a panic.
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nengine: {path: floppy}\n"), 0o644)
	root = newRoot()
	root.SetArgs([]string{"run", bad, "--out", out})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "engine.path") {
		t.Fatalf("bad experiment: %v", err)
	}
}

func cfgOf(t *testing.T, manifest []byte) string {
	t.Helper()
	var m struct {
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	return string(m.Config)
}

// run --plan prints the resolved cells and the estimate and runs nothing.
func TestRunPlanRunsNothing(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "tiny.yaml")
	os.WriteFile(exp, []byte(`
name: tiny
settle: 1s
warmup: 1s
duration: 3s
workload: {mode: closed, producers: 2, size: fixed:256}
matrix:
  - {param: flush, values: [async, group]}
`), 0o644)
	out := filepath.Join(dir, "results")
	var stdout bytes.Buffer
	root := newRoot()
	root.SetOut(&stdout)
	root.SetArgs([]string{"run", exp, "--out", out, "--plan", "--reps", "2"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	got := stdout.String()
	for _, want := range []string{"tiny (default): 2 cells + 0 fio jobs × 2 repetitions", "path=mmap/flush=async", "path=mmap/flush=group", "estimate: 20s"} {
		if !strings.Contains(got, want) {
			t.Fatalf("plan lacks %q:\n%s", want, got)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("--plan created %s (%v)", out, err)
	}
}

// --cpuprofile writes a gzip'd pprof profile of the command's run, also
// when the command fails.
func TestCPUProfileFlag(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", filepath.Join(dir, "missing.yaml")}, // fails: no such file
		{"run", filepath.Join(dir, "missing.yaml"), "--plan"},
	} {
		prof := filepath.Join(dir, "cpu.pprof")
		os.Remove(prof)
		root := newRoot()
		root.SetOut(&bytes.Buffer{})
		root.SetArgs(append([]string{"--cpuprofile", prof}, args...))
		if err := root.Execute(); err == nil {
			t.Fatalf("%v: no error for a missing experiment", args)
		}
		stopProfile() // as main does after Execute
		b, err := os.ReadFile(prof)
		if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Fatalf("%v: profile %d bytes, %v: not a gzip'd pprof profile", args, len(b), err)
		}
	}
}

// run draws the figures from the finished run's files into --figures (the
// stages figure of a run with engine.stages among them), never into the
// run; --no-plots draws none.
func TestRunDrawsFigures(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "stages-tiny.yaml")
	os.WriteFile(exp, []byte(`
name: stages-tiny
settle: 1ms
warmup: 100ms
duration: 300ms
interval: 100ms
engine: {segment_size: 1MiB, stages: true}
workload: {mode: closed, producers: 2, size: fixed:256}
matrix:
  - {param: flush, values: [group]} # one cell: drawing is slow under -race
`), 0o644)
	out := filepath.Join(dir, "results")
	figs := filepath.Join(dir, "figs")
	var stdout bytes.Buffer
	root := newRoot()
	root.SetOut(&stdout)
	root.SetArgs([]string{"run", exp, "--out", out, "--store", t.TempDir(), "--figures", figs})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	runDir := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(strings.Split(stdout.String(), "\n")[0]), "results: "), " (ok)")
	if _, err := os.Stat(filepath.Join(runDir, "result.json")); err != nil {
		t.Fatalf("run printed %q: %v", stdout.String(), err)
	}
	if _, err := os.Stat(filepath.Join(figs, "stages.png")); err != nil {
		entries, _ := os.ReadDir(figs)
		t.Fatalf("no stages figure in --figures (%d entries): %v", len(entries), err)
	}
	entries, _ := os.ReadDir(runDir)
	for _, en := range entries {
		if en.IsDir() || strings.HasSuffix(en.Name(), ".png") || strings.HasSuffix(en.Name(), ".svg") {
			t.Fatalf("derived file %s in the run", en.Name())
		}
	}
	// --no-plots: the same run draws nothing into --figures.
	none := filepath.Join(dir, "none")
	root = newRoot()
	root.SetOut(&bytes.Buffer{})
	root.SetArgs([]string{"run", exp, "--out", out, "--store", t.TempDir(), "--figures", none, "--no-plots"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Fatalf("--no-plots created %s (%v)", none, err)
	}
}

package main

import (
	"bytes"
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
warmup: 100ms
duration: 300ms
interval: 100ms
engine: {segment_size: 1MiB}
workload: {mode: closed, producers: 2, size: fixed:256}
matrix:
  - {param: flush, values: [async, group]}
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
	root.SetArgs([]string{"plot", runDir})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), ".png") || !strings.Contains(stdout.String(), ".svg") {
		t.Fatalf("plot printed %q", stdout.String())
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

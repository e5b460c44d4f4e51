package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/result"
)

func runRoot(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	root := newRoot()
	root.SetOut(&out)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatalf("brokerlab %s: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

// TestBenchratioPipeline runs what scripts/bench.sh runs after the
// benchmarks: fio JSON → benchmark lines, the ratios over both files, and
// the manifest's collection and finish.
func TestBenchratioPipeline(t *testing.T) {
	dir := t.TempDir()
	td := filepath.Join("..", "..", "experiments", "benchratio", "testdata")

	fioTxt := runRoot(t, "benchratio", "fio", "--set", "fs=ext4", filepath.Join(td, "fio-libaio-qd4.json"))
	for _, want := range []string{"fs: ext4", "fio-version: fio-3.33", "BenchmarkFioWrite/rw=write/direct=1/bs=65536/ioengine=libaio/iodepth=4 2127 "} {
		if !strings.Contains(fioTxt, want) {
			t.Fatalf("fio output lacks %q:\n%s", want, fioTxt)
		}
	}
	fioFile := filepath.Join(dir, "fio.txt")
	if err := os.WriteFile(fioFile, []byte(fioTxt), 0o644); err != nil {
		t.Fatal(err)
	}

	jsonFile := filepath.Join(dir, "ratios.json")
	text := runRoot(t, "benchratio", "--json", jsonFile, filepath.Join(td, "bench.txt"), fioFile)
	// The fio report measured 138.56 MB/s; the testdata's P3 row has 900,
	// 1000 and 800 MB/s, paired with the one fio run: 900/138.56.
	var p3line string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "P3") {
			p3line = l
		}
	}
	if !strings.Contains(text, "path=mmap append÷raw throughput") || !strings.Contains(p3line, " 6.5 ") {
		t.Fatalf("ratios:\n%s", text)
	}
	var rs []struct {
		Target, Label, Verdict string
		Values                 []float64
	}
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rs); err != nil {
		t.Fatal(err)
	}
	var p3 int
	for _, r := range rs {
		if r.Target == "P3" {
			p3++
			if len(r.Values) != 1 || r.Verdict != "ok" {
				t.Errorf("P3 %+v", r)
			}
		}
	}
	if p3 != 1 {
		t.Errorf("%d P3 ratios", p3)
	}

	man := runRoot(t, "benchratio", "manifest", "--store-dir", dir, "--set", "count=5", "--command", "scripts/bench.sh")
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, result.ManifestFile), []byte(man), 0o644); err != nil {
		t.Fatal(err)
	}
	runRoot(t, "benchratio", "manifest", "--finish", run, "--status", result.StatusInterrupted)
	m, err := result.ReadManifest(filepath.Join(run, result.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]string
	if err := json.Unmarshal(m.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	if m.Experiment != "bench" || m.Status != result.StatusInterrupted || m.Finished == nil ||
		m.Host.Kernel == "" || m.Go.Version == "" || strings.Join(m.Command, " ") != "scripts/bench.sh" ||
		cfg["count"] != "5" {
		t.Fatalf("manifest: experiment %q status %q finished %v kernel %q go %q command %q config %v",
			m.Experiment, m.Status, m.Finished, m.Host.Kernel, m.Go.Version, m.Command, cfg)
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPredictCommand predicts reclaim.yaml's cells from a fixture /proc:
// 100 MB/s with a 1 GiB budget on cgroup v1 (global limits 10 %/20 % of
// 10 GiB, far above the budget): buffered async cells never start the
// kernel's writeback, direct keeps nothing cached; a closed loop without
// --mbps is refused.
func TestPredictCommand(t *testing.T) {
	proc := t.TempDir()
	vm := filepath.Join(proc, "sys", "vm")
	os.MkdirAll(vm, 0o755)
	for name, v := range map[string]string{"dirty_background_ratio": "10", "dirty_background_bytes": "0", "dirty_ratio": "20",
		"dirty_bytes": "0", "dirty_expire_centisecs": "3000", "dirty_writeback_centisecs": "500"} {
		os.WriteFile(filepath.Join(vm, name), []byte(v+"\n"), 0o644)
	}
	os.WriteFile(filepath.Join(proc, "meminfo"), []byte("MemAvailable: 10485760 kB\n"), 0o644)
	yaml := filepath.Join("..", "..", "experiments", "reclaim.yaml")
	out := runRoot(t, "predict", yaml, "--mbps", "100", "--proc", proc)
	for _, want := range []string{"path=pwrite", "path=direct", "path=uncached", "per-cgroup writeback", "background 10%"} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in\n%s", want, out)
		}
	}
	js := runRoot(t, "predict", yaml, "--mbps", "100", "--proc", proc, "--json")
	var got struct {
		Cells       []string
		Predictions []struct {
			BackgroundAt float64 `json:"background_at"`
			Resident     []int64
			Dirty        []int64
		}
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatal(err)
	}
	for i, c := range got.Cells {
		p := got.Predictions[i]
		last := len(p.Resident) - 1
		switch {
		case strings.Contains(c, "path=direct"):
			if p.Resident[last] != 0 || p.Dirty[last] != 0 {
				t.Fatalf("%s: %d resident", c, p.Resident[last])
			}
		case strings.Contains(c, "path=pwrite"):
			// Async 500 ms flush at 100 MB/s: 25 MB dirty on average, the
			// cache at the 1 GiB budget.
			if p.BackgroundAt != -1 || p.Dirty[last] != 25e6 || p.Resident[last] != 1<<30 {
				t.Fatalf("%s: background %v dirty %d resident %d", c, p.BackgroundAt, p.Dirty[last], p.Resident[last])
			}
		}
	}
	root := newRoot()
	root.SetArgs([]string{"predict", yaml, "--proc", proc})
	root.SetOut(new(strings.Builder))
	root.SetErr(new(strings.Builder))
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "--mbps") {
		t.Fatalf("closed loop without --mbps: %v", err)
	}
}

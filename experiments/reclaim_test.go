package experiments

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReclaimQuickVariant runs reclaim.yaml's quick variant, shrunk to a
// fraction of a second on pwrite: the budget's fate is stated in the
// manifest, the cell records written_over_budget, and its residency
// carries the model's prediction beside the probe's layers.
func TestReclaimQuickVariant(t *testing.T) {
	e, err := Load("reclaim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e.ApplyQuick()
	e.Warmup, e.Duration, e.Interval = Duration(50*time.Millisecond), Duration(200*time.Millisecond), Duration(50*time.Millisecond)
	e.Settle = Duration(time.Millisecond)
	e.Matrix[0].Values = []string{"pwrite"}
	// The quick variant's own 32 MiB: the whole test process joins the
	// cgroup, and its heap (more than 32 MiB under -race) is met by the
	// limit following the anonymous memory, not by the OOM killer.
	e.Pairings = nil
	out := t.TempDir()
	o, err := Run(context.Background(), e, Options{OutRoot: out, StoreRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Cells) != 1 || o.Cells[0].Error != "" {
		t.Fatalf("cells %+v", o.Cells)
	}
	c := o.Cells[0]
	b, err := os.ReadFile(filepath.Join(o.RunDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	enforced := strings.Contains(string(b), "page-cache budget enforced")
	if !enforced && !strings.Contains(string(b), "page-cache budget UNENFORCED") {
		t.Fatalf("the manifest must say whether the budget is enforced:\n%s", b)
	}
	if _, failed := c.Extra["budget_applied"]; failed == enforced {
		t.Fatalf("budget enforced %v but the cell says budget_applied %v", enforced, c.Extra)
	}
	if enforced && (c.Extra["budget_anon_max_mib"] <= 0 || c.Extra["budget_follow_failed"] != 0) {
		t.Fatalf("an enforced budget records the anonymous memory it followed: %v", c.Extra)
	}
	if c.Extra["written_over_budget"] <= 0 {
		t.Fatalf("no written_over_budget: %v", c.Extra)
	}
	rs := c.Residency
	if rs == nil || rs.Model == nil || len(rs.Model.T) == 0 || len(rs.Model.ResidentMiB) != len(rs.Model.T) {
		t.Fatalf("no prediction beside the residency: %+v", rs)
	}
	if rs.Model.Params["budget"] != 32<<20 || rs.Model.Params["append_bps"] <= 0 {
		t.Fatalf("model params %v", rs.Model.Params)
	}
}

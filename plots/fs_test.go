package plots

import (
	"fmt"
	"slices"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// fsCells: 2 paths × 2 file systems, fio device and page-cache ceilings on
// each file system.
func fsCells() []result.Cell {
	var cs []result.Cell
	for fi, fs := range []string{"ext4", "xfs"} {
		for pi, path := range []string{"mmap", "pwrite"} {
			c := cell(result.SystemBrokerlab, fmt.Sprintf("path=%s/flush=group/fs=%s", path, fs), 0,
				10000+2000*float64(pi)+5000*float64(fi), 200000, 1)
			c.Extra = map[string]float64{"flush_mean_ns": 1e6 * float64(1+fi)}
			cs = append(cs, c)
		}
		cs = append(cs,
			cell(result.SystemFio, "path=direct/flush=group/size=1024/conc=64/ceiling=device/fs="+fs, 0, 20000+float64(fi)*1000, 100000, 1),
			cell(result.SystemFio, "path=buffered/flush=none/size=1024/conc=64/ceiling=page-cache/fs="+fs, 0, 300000, 2000, 1))
	}
	return cs
}

func TestBarsByFileSystem(t *testing.T) {
	f, err := BarsBy(fsCells(), "msg/s", "fs")
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "fs-msg_s" {
		t.Fatalf("name %q", f.Name)
	}
	p := f.Panels[0][0]
	if p.X.Label.Text != "fs" {
		t.Fatalf("x groups by %q, want fs", p.X.Label.Text)
	}
	// Two bar series (path) and one legend entry per ceiling kind, not per
	// file system.
	if n := legendLen(p.Legend); n != 4 {
		t.Fatalf("legend has %d entries, want 2 series + 2 ceilings", n)
	}
	if got := planned(t, writeRun(t, "fs", fsCells())); !slices.Contains(got, "fs-msg_s") ||
		!slices.Contains(got, "fs-p99") || !slices.Contains(got, "fs-flush_mean_ns") {
		t.Fatalf("figures %v lack the file-system bars", got)
	}
	if got := planned(t, writeRun(t, "nofs", barCells())); slices.Contains(got, "fs-msg_s") {
		t.Fatalf("figures %v: file-system bars without an fs parameter", got)
	}
}

func TestReplicationLagTimeSeries(t *testing.T) {
	cs := barCells()[:2]
	for i := range cs {
		cs[i].Series = timeSeries(10, float64(i))
	}
	for j := range cs[1].Series {
		cs[1].Series[j].Extra = map[string]float64{FieldReplicationLag: float64(1000 * j)}
	}
	got := planned(t, writeRun(t, "repl", cs))
	if !slices.Contains(got, "timeseries-"+FieldReplicationLag) {
		t.Fatalf("figures %v lack the replication lag", got)
	}
	if got := planned(t, writeRun(t, "norepl", barCells()[:2])); slices.Contains(got, "timeseries-"+FieldReplicationLag) {
		t.Fatalf("figures %v: replication lag without a replicated cell", got)
	}
}

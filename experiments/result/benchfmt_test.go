// This test proves that golang.org/x/perf/benchfmt (what benchstat uses)
// reads bench.txt.

package result

import (
	"bytes"
	"testing"

	"golang.org/x/perf/benchfmt"
)

func TestBenchfmtReadsBenchTxt(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteBench(&buf, sampleManifest(), sampleCells()); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(&buf, "bench.txt")
	type row struct {
		name, system, metric string
		values               map[string]float64 // by original unit
	}
	var rows []row
	units := map[string]string{}
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v", rec)
		case *benchfmt.UnitMetadata:
			units[rec.OrigUnit] = rec.Value
		case *benchfmt.Result:
			for _, key := range []string{"experiment", "commit", "dirty", "kernel", "cpu", "fs", "mount-options",
				"device", "vm-dirty-ratio", "vm-dirty-background-ratio", "vm-dirty-expire-centisecs",
				"vm-dirty-writeback-centisecs", "go", "seed"} {
				pos, ok := rec.ConfigIndex(key)
				if !ok || !rec.Config[pos].File {
					t.Errorf("%s: file config key %q missing", rec.Name, key)
				}
			}
			vals := map[string]float64{}
			for _, v := range rec.Values {
				u, x := v.Unit, v.Value
				if v.OrigUnit != "" {
					u, x = v.OrigUnit, v.OrigValue
				}
				vals[u] = x
			}
			rows = append(rows, row{rec.Name.String(), rec.GetConfig("system"), rec.GetConfig("metric"), vals})
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("rows: %+v", rows)
	}
	first := rows[0]
	if first.name != "Produce/path=mmap/flush=group/size=1024/conc=64" || first.system != "brokerlab" || first.metric != "e2e" {
		t.Errorf("first row: %+v", first)
	}
	want := map[string]float64{"ns/op": 20000, "MB/s": 51.2, "ops/s": 50000, "p50-ns": 410000, "p99-ns": 2100000, "p999-ns": 7900000}
	for u, v := range want {
		if first.values[u] != v {
			t.Errorf("%s = %v, want %v (all: %v)", u, first.values[u], v, first.values)
		}
	}
	if rows[2].system != "fio" || rows[2].metric != "sync" {
		t.Errorf("peer row: %+v", rows[2])
	}
	if units["p99-ns"] != "lower" || units["ops/s"] != "higher" {
		t.Errorf("unit metadata: %v", units)
	}
	// Sub-benchmark keys are visible to benchstat's /key projections.
	base, parts := benchfmt.Name(first.name).Parts()
	if string(base) != "Produce" || len(parts) != 4 || string(parts[1]) != "/flush=group" {
		t.Errorf("name parts: %s %q", base, parts)
	}
}

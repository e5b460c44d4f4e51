package experiments

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]Size{"4096": 4096, "64KiB": 64 << 10, "8MiB": 8 << 20, "1GiB": 1 << 30, "2G": 2 << 30} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1MiB", "1.5GiB"} {
		if _, err := ParseSize(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseSize(%q) err = %v", bad, err)
		}
	}
	if s := Size(64 << 20).String(); s != "64MiB" {
		t.Errorf("String = %s", s)
	}
}

// Every bad value is an error naming the key at fault.
func TestValidationErrors(t *testing.T) {
	base := "name: t\n"
	cases := []struct{ yaml, want string }{
		{"name: t\nbogus: 1\n", "field bogus not found"},
		{"name: t\nengine:\n  pth: mmap\n", "field pth not found"},
		{"engine:\n  path: mmap\n", "name is required"},
		{base + "engine:\n  path: nvme\n", "engine.path"},
		{base + "engine:\n  flush: often\n", "engine.flush"},
		{base + "engine:\n  segment_size: 1000\n", "engine.segment_size"},
		{base + "engine:\n  segment_size: lots\n", "size \"lots\""},
		{base + "duration: soon\n", "duration \"soon\""},
		{base + "workload:\n  mode: open\n", "workload.rate"},
		{base + "workload:\n  mode: sideways\n", "workload.mode"},
		{base + "workload:\n  size: huge:1\n", "workload.size"},
		{base + "matrix:\n  - param: colour\n    values: [red]\n", "unknown matrix parameter \"colour\""},
		{base + "matrix:\n  - param: path\n    values: [mmap, floppy]\n", "engine.path"},
		{base + "matrix:\n  - param: conc\n    values: [\"0\"]\n", "producer count"},
		{base + "matrix:\n  - param: path\n    values: []\n", "at least one value"},
		{base + "peers: [kafka]\n", "peers"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.yaml))
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v; want an ErrConfig mentioning %q", c.yaml, err, c.want)
		}
	}
}

func TestMatrixCells(t *testing.T) {
	e, err := Parse([]byte(`
name: m
engine: {path: pwrite}
matrix:
  - {param: flush, values: [sync, group]}
  - {param: segment_size, values: [8MiB, 1GiB]}
  - {param: producers, values: ["1", "64"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := e.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 8 {
		t.Fatalf("%d cells, want 8", len(cells))
	}
	if cells[0].Name != "path=pwrite/flush=sync/seg=8MiB/conc=1" || cells[7].Name != "path=pwrite/flush=group/seg=1GiB/conc=64" {
		t.Fatalf("names %q … %q", cells[0].Name, cells[7].Name)
	}
	c := cells[7].Exp
	if c.Engine.Flush != "group" || c.Engine.SegmentSize != 1<<30 || c.Workload.Producers != 64 || c.Engine.Path != "pwrite" {
		t.Fatalf("cell config %+v", c.Engine)
	}
}

// Every shipped experiment file parses, expands, and its quick form too.
func TestShippedExperimentsValid(t *testing.T) {
	files, _ := filepath.Glob("*.yaml")
	if len(files) < 7 {
		t.Fatalf("only %d experiment files: %v", len(files), files)
	}
	for _, f := range files {
		e, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if e.Name+".yaml" != f {
			t.Errorf("%s: name %q does not match the file", f, e.Name)
		}
		if _, err := e.Cells(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		q := *e
		q.ApplyQuick()
		if err := q.Validate(); err != nil {
			t.Errorf("%s --quick: %v", f, err)
		}
		r := *e
		r.ApplyReference()
		// A transient keeps its own warm-up (ApplyReference's doc).
		if err := r.Validate(); err != nil || (r.Warmup < ReferenceWarmup && !r.Transient) || r.Repetitions < ReferenceReps ||
			r.Duration < ReferenceMinDuration {
			t.Errorf("%s --reference: %v (%v warm-up, %d reps)", f, err, r.Warmup.D(), r.Repetitions)
		}
		// The plans, with each cell's own measured duration: every pairing
		// still compares like with like.
		for _, opt := range []Options{{}, {Quick: true}, {Reference: true}} {
			if _, err := NewPlan(e, opt); err != nil {
				t.Errorf("%s plan (quick %v, reference %v): %v", f, opt.Quick, opt.Reference, err)
			}
		}
	}
	if _, err := os.Stat("quick.yaml"); err != nil {
		t.Fatal("quick.yaml (the README default) is missing")
	}
}

// The plan is what Run runs: the overrides and reference minimums
// applied, async cells raised to the reference duration, fio jobs listed,
// and the estimate the sum of every repetition's cells, settles and jobs.
func TestPlanResolvesAndEstimates(t *testing.T) {
	e, err := Parse([]byte(`
name: plan-tiny
warmup: 1s
duration: 2s
repetitions: 2
settle: 500ms
workload: {mode: closed, producers: 2, size: "fixed:128"}
matrix:
  - {param: flush, values: [async, group]}
peers: [fio]
peer_duration: 3s
`))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := NewPlan(e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Cells) != 2 || len(pl.Fio) == 0 {
		t.Fatalf("%d cells, %d fio jobs", len(pl.Cells), len(pl.Fio))
	}
	want := 2 * (2*(time.Second+2*time.Second+500*time.Millisecond) + time.Duration(len(pl.Fio))*3*time.Second)
	if got := pl.Estimate(); got != want {
		t.Fatalf("estimate %v, want %v", got, want)
	}
	var b strings.Builder
	WritePlan(&b, pl)
	if !strings.Contains(b.String(), "plan-tiny (default): 2 cells") || !strings.Contains(b.String(), "estimate: "+want.String()) {
		t.Fatalf("plan text:\n%s", b.String())
	}

	ref, err := NewPlan(e, Options{Reference: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ref.Cells {
		wantD := ref.Exp.Duration.D()
		if c.Exp.Engine.Flush == "async" {
			wantD = max(wantD, ReferenceDuration.D())
		}
		if c.Exp.Duration.D() != wantD {
			t.Errorf("reference cell %s measures %v, want %v", c.Name, c.Exp.Duration.D(), wantD)
		}
	}
	if ref.Exp.Warmup < ReferenceWarmup || ref.Exp.Repetitions < ReferenceReps || ref.Estimate() <= pl.Estimate() {
		t.Fatalf("reference plan %v warm-up, %d reps, estimate %v", ref.Exp.Warmup.D(), ref.Exp.Repetitions, ref.Estimate())
	}
	if _, err := NewPlan(e, Options{Replay: true, Quick: true}); !errors.Is(err, ErrConfig) {
		t.Fatalf("replay with --quick: %v", err)
	}
}

// flush=dsync needs a write path with a durable write: a matrix that crosses
// it with mmap is refused with a clear error once the cells are resolved
// (the flush axis may come before the path axis); with pwrite it resolves.
func TestDSyncCellsNeedDurableWritePath(t *testing.T) {
	for _, tc := range []struct {
		paths string
		ok    bool
	}{{"[pwrite, direct]", true}, {"[pwrite, mmap]", false}} {
		e, err := Parse([]byte(`
name: d
matrix:
  - {param: flush, values: [group, dsync]}
  - {param: path, values: ` + tc.paths + `}
`))
		if err != nil {
			t.Fatalf("%s: %v", tc.paths, err)
		}
		_, err = e.Cells()
		if tc.ok && err != nil {
			t.Fatalf("%s: %v", tc.paths, err)
		}
		if !tc.ok && (!errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "path=mmap")) {
			t.Fatalf("%s: err %v, want ErrConfig naming path=mmap", tc.paths, err)
		}
	}
}

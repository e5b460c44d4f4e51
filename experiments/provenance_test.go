package experiments

import (
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// fakeGit answers rev-parse --show-toplevel with top, status with status
// and diff with a fixed text.
func fakeGit(top, status string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		switch args[0] {
		case "rev-parse":
			return top + "\n", nil
		case "status":
			return status, nil
		case "diff":
			return "diff --git a/x.go b/x.go\n+changed\n", nil
		}
		return "", errors.New("unexpected git call")
	}
}

func noBuildInfo() (*debug.BuildInfo, bool) { return nil, false }

func TestDirtyTreeRefusedIntoResults(t *testing.T) {
	top := t.TempDir()
	os.MkdirAll(filepath.Join(top, "results"), 0o755)
	s := sourceState{git: fakeGit(top, " M engine/x.go\n"), buildInfo: noBuildInfo}
	if _, err := s.checkSource(filepath.Join(top, "results"), false); !errors.Is(err, ErrDirtyTree) {
		t.Fatalf("dirty into results/: %v", err)
	}
	diff, err := s.checkSource(filepath.Join(top, "results"), true)
	if err != nil || !strings.Contains(string(diff), "+changed") || !strings.Contains(string(diff), "M engine/x.go") {
		t.Fatalf("allow-dirty: %v\n%s", err, diff)
	}
	// Elsewhere (a temp results root) is not the committed results/.
	if d, err := s.checkSource(t.TempDir(), false); err != nil || d != nil {
		t.Fatalf("outside the repo: %v %q", err, d)
	}
	// A clean tree writes into results/.
	clean := sourceState{git: fakeGit(top, ""), buildInfo: noBuildInfo}
	if d, err := clean.checkSource(filepath.Join(top, "results"), false); err != nil || d != nil {
		t.Fatalf("clean: %v", err)
	}
	// The binary's own stamp wins over git status.
	stamped := sourceState{git: fakeGit(top, ""), buildInfo: func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}}, true
	}}
	if _, err := stamped.checkSource(filepath.Join(top, "results"), false); !errors.Is(err, ErrDirtyTree) || !strings.Contains(err.Error(), "vcs.modified=true") {
		t.Fatalf("stamped dirty: %v", err)
	}
}

// A replay reruns exactly the resolved config the run recorded: same
// manifest config, same cells in the same shuffled order.
func TestReplayReproducesConfig(t *testing.T) {
	t.Parallel() // a run of its own: own directories and ports
	e, err := Parse([]byte(`
name: replayme
seed: 77
warmup: 50ms
duration: 200ms
interval: 100ms
settle: 1ms
engine: {segment_size: 1MiB}
workload: {mode: closed, producers: 2, size: fixed:256}
matrix:
  - {param: flush, values: [async, group]}
quick: {duration: 150ms, repetitions: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	o, err := Run(t.Context(), e, Options{OutRoot: t.TempDir(), StoreRoot: t.TempDir(), Quick: true, Duration: 120 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	re, m1, err := LoadReplay(o.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	if re.Duration.D() != 120*time.Millisecond || re.Repetitions != 2 || re.Seed != 77 || re.Mode != "quick" {
		t.Fatalf("replayed config %+v", re)
	}
	if _, err := Run(t.Context(), re, Options{OutRoot: t.TempDir(), Replay: true, Quick: true}); !errors.Is(err, ErrConfig) {
		t.Fatalf("replay with overrides: %v", err)
	}
	o2, err := Run(t.Context(), re, Options{OutRoot: t.TempDir(), StoreRoot: t.TempDir(), Replay: true})
	if err != nil {
		t.Fatal(err)
	}
	_, m2, err := LoadReplay(o2.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	if string(m1.Config) != string(m2.Config) {
		t.Fatalf("configs differ:\n%s\n%s", m1.Config, m2.Config)
	}
	if len(o.Cells) != 4 || len(o2.Cells) != len(o.Cells) {
		t.Fatalf("cells %d vs %d", len(o.Cells), len(o2.Cells))
	}
	for i := range o.Cells {
		a, b := o.Cells[i], o2.Cells[i]
		if a.Name != b.Name || a.Rep != b.Rep || a.Order != b.Order {
			t.Fatalf("cell %d: %s r%d #%d vs %s r%d #%d", i, a.Name, a.Rep, a.Order, b.Name, b.Rep, b.Order)
		}
		// Only repetition 0 keeps an interval log.
		logs, _ := filepath.Glob(filepath.Join(o.RunDir, result.FileStem(a.Name, a.Rep)+".hlog*"))
		if want := a.Rep == 0; (a.Files.Hlog != "") != want || (len(logs) == 1) != want {
			t.Fatalf("cell %s r%d: hlog %q, files %v", a.Name, a.Rep, a.Files.Hlog, logs)
		}
	}
	if _, _, err := LoadReplay(t.TempDir()); !errors.Is(err, ErrReplay) {
		t.Fatalf("empty dir: %v", err)
	}
}

func TestReferenceMinimums(t *testing.T) {
	e, err := Parse([]byte(`
name: ref
warmup: 1s
duration: 10s
repetitions: 1
engine: {segment_size: 1MiB}
matrix:
  - {param: flush, values: [sync, group]}
reference: {duration: 90s}
`))
	if err != nil {
		t.Fatal(err)
	}
	if e.WritebackMatters() {
		t.Fatal("durable-only experiment flagged as writeback-bound")
	}
	r := *e
	r.ApplyReference()
	if r.Warmup != ReferenceWarmup || r.Repetitions != ReferenceReps || r.Duration.D() != 90*time.Second || r.Mode != "reference" ||
		r.Interval != ReferenceInterval {
		t.Fatalf("reference %+v", r)
	}
	e.Matrix[0].Values = append(e.Matrix[0].Values, "async")
	if !e.WritebackMatters() {
		t.Fatal("an async cell does not make the experiment writeback-bound")
	}
	r = *e
	r.ApplyReference()
	cells, _ := r.Cells()
	cellDurations(&r, cells)
	for _, c := range cells {
		want := 90 * time.Second
		if c.Exp.Engine.Flush == "async" {
			want = ReferenceDuration.D()
		}
		if c.Exp.Duration.D() != want {
			t.Errorf("reference cell %s measures %v, want %v", c.Name, c.Exp.Duration.D(), want)
		}
	}
	r = *e
	r.Writeback = true
	r.ApplyReference()
	if r.Duration != ReferenceDuration {
		t.Fatalf("experiment marked writeback measures %v", r.Duration.D())
	}
	// A transient keeps its warm-up and interval and measures the 60 s
	// minimum in every cell, async ones included; repetitions stay raised.
	r = *e
	r.Writeback, r.Transient = true, true
	r.Warmup, r.Duration, r.Interval = Duration(2*time.Second), Duration(30*time.Second), Duration(time.Second)
	r.Reference = nil
	r.ApplyReference()
	cells, _ = r.Cells()
	cellDurations(&r, cells)
	if r.Warmup.D() != 2*time.Second || r.Interval.D() != time.Second || r.Repetitions != ReferenceReps || r.Duration != ReferenceMinDuration {
		t.Fatalf("transient reference %+v", r)
	}
	for _, c := range cells {
		if c.Exp.Duration != ReferenceMinDuration {
			t.Errorf("transient reference cell %s measures %v", c.Name, c.Exp.Duration.D())
		}
	}
	q := *e
	q.ApplyQuick()
	if q.Mode != "quick" {
		t.Fatal(q.Mode)
	}
}

// A run recorded before a field existed replays with that field's default;
// a config with a field this version does not know is refused.
func TestReplayOlderAndForeignConfigs(t *testing.T) {
	write := func(cfg string) string {
		dir := t.TempDir()
		m := `{"schema":1,"status":"ok","config":` + cfg + `}`
		if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	old := `{"name":"old","seed":3,"warmup":"1s","duration":"2s","repetitions":2,"interval":"1s",
		"engine":{"path":"mmap","flush":"group","segment_size":"1MiB","transport":"inproc"},
		"workload":{"mode":"closed","producers":4,"size":"fixed:100","topics":1,"queues":4,"queue_choice":"roundrobin","batch":1}}`
	e, _, err := LoadReplay(write(old))
	if err != nil {
		t.Fatal(err)
	}
	if e.Settle.D() != 2*time.Second || e.Repetitions != 2 || e.Seed != 3 || e.Duration.D() != 2*time.Second {
		t.Fatalf("replayed %+v", e)
	}
	foreign := strings.Replace(old, `"seed":3`, `"seed":3,"teleport":true`, 1)
	if _, _, err := LoadReplay(write(foreign)); !errors.Is(err, ErrReplay) || !strings.Contains(err.Error(), "teleport") {
		t.Fatalf("unknown field: %v", err)
	}
}

// TestReferenceReplacesMatrixAndExtra: a reference section may narrow the
// matrix and the extra cells (experiments/replication.yaml does), and the
// fio ceilings are planned from loopback cells too.
func TestReferenceReplacesMatrixAndExtra(t *testing.T) {
	e, err := Load("replication.yaml")
	if err != nil {
		t.Fatal(err)
	}
	full, err := e.Cells()
	if err != nil {
		t.Fatal(err)
	}
	r := *e
	r.ApplyReference()
	cells, err := r.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 5 || len(full) <= len(cells) {
		t.Fatalf("reference cells %d (full %d), want 5", len(cells), len(full))
	}
	none := 0
	for _, c := range cells {
		if c.Exp.Engine.Replication == "none" {
			none++
			if c.Exp.Engine.Flush != "group" {
				t.Errorf("extra cell %s", c.Name)
			}
		}
	}
	if none != 1 {
		t.Fatalf("%d cells without a replica, want the one extra", none)
	}
	jobs := fioPlan(cells)
	kinds := map[string]bool{}
	for _, j := range jobs {
		kinds[j.Sync+"/"+j.Ceiling()] = true
	}
	if !kinds["group/device"] || !kinds["none/device"] || !kinds["none/page-cache"] {
		t.Fatalf("fio plan for loopback cells: %v", kinds)
	}
}

// A replay by another revision (or one unknown) is refused unless
// --at-head, and then the note names both revisions.
func TestReplayRevision(t *testing.T) {
	var m result.Manifest
	m.Build.Revision, m.Git.SHA = "aaa", "aaa"
	if note, err := replayRevision(m, false, "aaa"); err != nil || note != "" {
		t.Fatalf("same revision: %q %v", note, err)
	}
	for _, now := range []string{"bbb", ""} {
		if _, err := replayRevision(m, false, now); !errors.Is(err, ErrReplayRevision) {
			t.Fatalf("revision %q: err = %v", now, err)
		}
		note, err := replayRevision(m, true, now)
		if err != nil || !strings.Contains(note, "AT HEAD") || !strings.Contains(note, "aaa") {
			t.Fatalf("--at-head, revision %q: %q %v", now, note, err)
		}
	}
	m.Build.Revision = result.Unknown // an old manifest: its git commit counts
	if _, err := replayRevision(m, false, "aaa"); err != nil {
		t.Fatal(err)
	}
}

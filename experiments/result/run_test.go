package result

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRunStamp(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	s := RunStamp(at, []byte(`{"a":1}`))
	if !strings.HasPrefix(s, "20260102T020405Z-") || len(s) != len("20260102T020405Z-")+8 {
		t.Fatalf("stamp %q", s)
	}
	if s == RunStamp(at, []byte(`{"a":2}`)) {
		t.Fatal("config hash ignored")
	}
}

func TestLoadRunAndListRuns(t *testing.T) {
	root := t.TempDir()
	dirA, err := CreateRunDir(root, "e1-write-paths", "20260102T000000Z-aaaaaaaa")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dirA); err != nil || !fi.IsDir() {
		t.Fatalf("run dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dirA, FiguresDir)); err == nil {
		t.Fatal("a run directory holds no figures: they are derived outside it")
	}
	m := sampleManifest()
	cells := sampleCells()
	if err := WriteManifest(dirA, m); err != nil {
		t.Fatal(err)
	}
	if err := WriteResult(dirA, Result{Experiment: m.Experiment, Cells: cells}); err != nil {
		t.Fatal(err)
	}
	if err := WriteBenchFile(dirA, m, cells); err != nil {
		t.Fatal(err)
	}
	run, err := LoadRun(dirA)
	if err != nil {
		t.Fatal(err)
	}
	if run.Manifest == nil || run.Manifest.Seed != 42 || run.FromBench || len(run.Result.Cells) != 4 || run.Result.Experiment != "e1-write-paths" {
		t.Fatalf("run: %+v", run)
	}

	// A run with only bench.txt (go test -bench output) still loads.
	dirB, _ := CreateRunDir(root, "e1-write-paths", "20260101T000000Z-bbbbbbbb")
	if err := WriteBenchFile(dirB, m, cells); err != nil {
		t.Fatal(err)
	}
	runB, err := LoadRun(dirB)
	if err != nil {
		t.Fatal(err)
	}
	if !runB.FromBench || runB.Manifest != nil || len(runB.Result.Cells) != 3 || runB.Result.Experiment != "e1-write-paths" {
		t.Fatalf("bench-only run: %+v", runB)
	}

	// Empty directory → ErrNoResult; corrupt result.json → an error.
	dirC, _ := CreateRunDir(root, "e2", "20260103T000000Z-cccccccc")
	if _, err := LoadRun(dirC); !errors.Is(err, ErrNoResult) {
		t.Fatalf("empty run: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dirC, ResultFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRun(dirC); err == nil {
		t.Fatal("corrupt result.json accepted")
	}
	if err := os.WriteFile(filepath.Join(root, "stray.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "e2", "not-a-run"), 0o755); err != nil {
		t.Fatal(err)
	}

	refs, err := ListRuns(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []RunRef{
		{"e1-write-paths", "20260101T000000Z-bbbbbbbb", dirB},
		{"e1-write-paths", "20260102T000000Z-aaaaaaaa", dirA},
		{"e2", "20260103T000000Z-cccccccc", dirC},
	}
	if !reflect.DeepEqual(refs, want) {
		t.Fatalf("ListRuns:\n got %+v\nwant %+v", refs, want)
	}
	if refs, err := ListRuns(filepath.Join(root, "missing")); err != nil || refs != nil {
		t.Fatalf("missing root: %v %v", refs, err)
	}
}

func TestCreateRunDirRejectsPaths(t *testing.T) {
	for _, bad := range [][2]string{{"", "s"}, {"..", "s"}, {"a/b", "s"}, {"e", "x/y"}, {"e", "."}} {
		if _, err := CreateRunDir(t.TempDir(), bad[0], bad[1]); !errors.Is(err, ErrBadExperiment) {
			t.Errorf("CreateRunDir(%q, %q) = %v", bad[0], bad[1], err)
		}
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	for _, content := range []string{"first", "second"} {
		if err := WriteFileAtomic(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != content {
			t.Fatalf("content %q %v", b, err)
		}
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "f"), nil, 0o644); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

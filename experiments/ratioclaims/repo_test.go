package ratioclaims

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// repoRoot is the repository root, from this package's directory.
const repoRoot = "../.."

// TestRepoRatiosTrace is the check itself: every ratio the README,
// GUARANTEES.md, OPERATING.md, results/**/FINDINGS.md and docs/**/*.md
// quote is in a committed ratios.txt of the project's runs. A failure
// lists each untraced claim by file:line; reword it, drop it, or point
// it at the run whose ratios.txt holds it (never invent a number).
func TestRepoRatiosTrace(t *testing.T) {
	bad, err := Untraced(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range bad {
		t.Errorf("%s: no ratios.txt holds it%s", c, scopeNote(c))
	}
}

func scopeNote(c Claim) string {
	if len(c.Scope) == 0 {
		return ""
	}
	return " (looked in results/" + c.Scope[0] + "/ and the other experiments the line names)"
}

// Limits on the committed results (issue 31): every clone carries them.
const (
	maxResultsBytes = 25 << 20
	maxRunDirBytes  = 5 << 20
)

// TestResultsSize checks that results/ holds at most 25 MiB and every run
// directory (results/<experiment>/<run>/) at most 5 MiB, counting the
// bytes of the files.
func TestResultsSize(t *testing.T) {
	results := filepath.Join(repoRoot, "results")
	total, runs, err := sizes(results)
	if err != nil {
		t.Fatal(err)
	}
	if total > maxResultsBytes {
		t.Errorf("results/ holds %.1f MiB, the limit is %d MiB", float64(total)/(1<<20), maxResultsBytes>>20)
	}
	for dir, n := range runs {
		if n > maxRunDirBytes {
			t.Errorf("%s holds %.1f MiB, the limit per run directory is %d MiB", dir, float64(n)/(1<<20), maxRunDirBytes>>20)
		}
	}
	if len(runs) == 0 {
		t.Fatal("no run directories under results/")
	}
}

// sizes returns the bytes of the files under results and per run
// directory (the second level below it).
func sizes(results string) (int64, map[string]int64, error) {
	var total int64
	runs := map[string]int64{}
	err := filepath.WalkDir(results, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		rel, _ := filepath.Rel(results, p)
		if parts := splitPath(rel); len(parts) >= 3 {
			runs[filepath.Join("results", parts[0], parts[1])] += info.Size()
		}
		return nil
	})
	return total, runs, err
}

func splitPath(p string) []string {
	var out []string
	for p != "." && p != "" && p != string(os.PathSeparator) {
		dir, file := filepath.Split(p)
		out = append([]string{file}, out...)
		p = filepath.Clean(dir)
		if dir == "" {
			break
		}
	}
	return out
}

// TestSizes checks the size accounting on a small tree.
func TestSizes(t *testing.T) {
	root := t.TempDir()
	write := func(rel string, n int) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", 10)
	write("a/FINDINGS.md", 20)
	write("a/run1/x.json", 100)
	write("a/run1/sub/y", 50)
	write("b/run2/z", 7)
	total, runs, err := sizes(root)
	if err != nil {
		t.Fatal(err)
	}
	if total != 187 || len(runs) != 2 || runs[filepath.Join("results", "a", "run1")] != 150 || runs[filepath.Join("results", "b", "run2")] != 7 {
		t.Fatalf("total %d, runs %v", total, runs)
	}
}

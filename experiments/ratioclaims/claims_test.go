package ratioclaims

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestScanClaims(t *testing.T) {
	doc := "group commit does 13× per-message fsync and 0.58x [0.5–0.6] of it\n" +
		"not claims: 5 × 10 s, 3×4 grid, 0x1f, `-benchtime=300x`, v1.2x, 2x2\n" +
		"```\nRATIO 9.9× inside a fence\n```\n" +
		"(1.9×; and 0.36×) end 2×\n"
	cs, err := ScanClaims(strings.NewReader(doc), "d.md")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.String()+"|"+c.Value+"|"+strings.Join(c.Range, ","))
	}
	want := []string{
		"d.md:1: 13×|13|",
		"d.md:1: 0.58x [0.5–0.6]|0.58|0.5,0.6",
		"d.md:6: 1.9×|1.9|",
		"d.md:6: 0.36×|0.36|",
		"d.md:6: 2×|2|",
	}
	if !slices.Equal(got, want) {
		t.Errorf("claims\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRatioValues(t *testing.T) {
	for line, want := range map[string][]float64{
		"RATIO group_commit_vs_sync_64 13 [8.4–14] n=5\t# path=pwrite/flush=group/conc=64 / …":                      {13, 8.4, 14},
		"RATIO async_vs_js n/a\t# not measured":                                                                     nil,
		"P1      path=direct append÷raw throughput, async 1024 B conc=1   0.847   0.725–1.08     5  ≥ 0.85  MISSED": {0.847, 0.725, 1.08},
		"P2      path=pool group÷sync throughput, 1024 B conc=64   123   100–140     5  —  info":                    {123, 100, 140},
		"P1      path=pool append÷raw throughput, async 1024 B conc=1   -   -   0  ≥ 0.85  missing: no samples":     nil,
		"target  comparison  median  min–max  n  goal  verdict":                                                     nil,
	} {
		if got := ratioValues(line); !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", line, got, want)
		}
	}
}

func TestHasAtPrintedPrecision(t *testing.T) {
	rs := &Ratios{vals: []float64{0.725, 0.847, 1.86, 13}, files: map[float64][]string{}}
	for printed, want := range map[string]bool{
		"0.85": true, "0.847": true, "0.8": true, "1.9": true, "1.86": true, "2": true, "13": true, "13.0": true,
		"0.84": false, "1.8": false, "12": false, "0.73": true, "0.72": true, "0.71": false, "3": false,
	} {
		if got := rs.Has(printed); got != want {
			t.Errorf("Has(%q) = %v, want %v", printed, got, want)
		}
	}
	if rs.Traced(Claim{Value: "0.85", Range: []string{"0.73", "1.9"}}) != true ||
		rs.Traced(Claim{Value: "0.85", Range: []string{"0.73", "1.5"}}) != false {
		t.Error("Traced checks the range's ends")
	}
}

// TestUntracedFindsByFileAndLine runs the whole check over a small tree.
func TestUntracedFindsByFileAndLine(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("results/x/run1/ratios.txt", "RATIO a 1.9 [1.5–2.2] n=5\t# …\n")
	write("results/y/run1/ratios.txt", "RATIO b 4.2 [4.0–4.4] n=5\t# …\n")
	write("README.md", "a is 1.9× [1.5–2.2]\nb is 3.1×\n| [y](results/y/FINDINGS.md) | 1.9× |\n| [y](results/y/FINDINGS.md) | 4.2× |\n")
	write("results/x/FINDINGS.md", "a: 1.9×\nb: 4.2×\n")
	write("docs/d.md", "c: 0.5x\n")
	write("experiments/README.md", "not checked: 7×\n")
	write("results/README.md", "index: 8.5×\n")
	bad, err := Untraced(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range bad {
		got = append(got, c.String())
	}
	// README:3 links y, whose ratios lack 1.9; x's FINDINGS quotes y's 4.2.
	want := []string{"README.md:2: 3.1×", "README.md:3: 1.9×", "docs/d.md:1: 0.5x", "results/README.md:1: 8.5×", "results/x/FINDINGS.md:2: 4.2×"}
	if !slices.Equal(got, want) {
		t.Errorf("untraced %v, want %v", got, want)
	}
}

// Package ratioclaims checks that every ratio the project's documents quote
// traces to a ratios.txt the project's own code wrote into a committed run
// directory (results/<experiment>/<run>/ratios.txt), and that results/
// stays small.
//
// A ratio claim is a number written straight before "×" or "x" (1.9×,
// 0.58x), optionally followed by a bracketed range ([0.5–0.6]); numbers
// in code spans and fenced code blocks, multiplications (3×4, "5 × 10 s")
// and hexadecimal (0x1f) are not claims. A claim is traced when its value,
// and each end of its range, equals some number of a ratios.txt (of the
// FINDINGS.md's own experiment, or of the experiments its line links to as
// results/<exp>/, else of any experiment) rounded
// to the claim's printed precision (1.9 traces to 1.86, 0.85 to 0.847,
// 0.73 and 0.72 to 0.725).
//
// Functions here are pure or read files only; they are safe to call from
// any goroutine.
package ratioclaims

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ErrNoRatios is returned by ReadRatios when no ratios.txt exists.
var ErrNoRatios = errors.New("ratioclaims: no ratios.txt under results/")

// Claim is one ratio a document quotes.
type Claim struct {
	File  string   // path relative to the repository root
	Line  int      // 1-based
	Text  string   // as written, e.g. "0.58× [0.5–0.6]"
	Value string   // "0.58"
	Range []string // the bracketed range's ends, if any ("0.5", "0.6")
	// Scope lists the experiments whose ratios.txt must hold it: a
	// FINDINGS.md's own, or those its line links to (results/<exp>/…);
	// empty means any.
	Scope []string
}

func (c Claim) String() string { return fmt.Sprintf("%s:%d: %s", c.File, c.Line, c.Text) }

// claimRE matches a number written straight before × or x, not part of a
// longer word or number, and an optional bracketed range after it.
var claimRE = regexp.MustCompile(`(?:^|[^0-9A-Za-z.,_=/-])(\d+(?:\.\d+)?)(?:×|x)(?:$|[^0-9A-Za-z_])(?:\s*\[(\d+(?:\.\d+)?)\s*[–-]\s*(\d+(?:\.\d+)?)\])?`)

// codeSpanRE matches inline code spans.
var codeSpanRE = regexp.MustCompile("`[^`]*`")

// ScanClaims returns the ratio claims in a Markdown document (name is
// used for Claim.File).
func ScanClaims(r io.Reader, name string) ([]Claim, error) {
	var out []Claim
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	fenced := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		scope := scopeOf(name, line)
		line = codeSpanRE.ReplaceAllStringFunc(line, func(s string) string { return strings.Repeat(" ", len(s)) })
		for _, m := range claimRE.FindAllStringSubmatchIndex(line, -1) {
			c := Claim{File: name, Line: n, Value: line[m[2]:m[3]], Scope: scope}
			end := m[3] + len("×")
			if line[m[3]] == 'x' {
				end = m[3] + 1
			}
			c.Text = line[m[2]:end]
			if m[4] >= 0 {
				c.Range = []string{line[m[4]:m[5]], line[m[6]:m[7]]}
				c.Text = strings.TrimSpace(line[m[2]:m[1]])
			}
			out = append(out, c)
		}
	}
	return out, sc.Err()
}

// Ratios is the set of numbers the committed ratios.txt files hold, with
// the file each came from.
type Ratios struct {
	vals  []float64
	files map[float64][]string
}

// numberRE finds decimal numbers.
var numberRE = regexp.MustCompile(`\d+(?:\.\d+)?`)

// ratioValues returns the ratio values of one ratios.txt line: in a RATIO
// line (experiments: "RATIO name 13 [8.4–14] n=5 # …") the value and its
// range; in a row of the engine benchmarks' table (benchratio: "P1 <label>
// 0.847 0.725–1.08 5 ≥ 0.85 MISSED") the median and the min–max.
func ratioValues(line string) []float64 {
	var fields string
	switch {
	case strings.HasPrefix(line, "RATIO "):
		rest := strings.TrimPrefix(line, "RATIO ")
		rest, _, _ = strings.Cut(rest, "#")
		f := strings.Fields(rest)
		if len(f) < 2 {
			return nil
		}
		fields = strings.Join(f[1:], " ") // after the name
		if i := strings.Index(fields, " n="); i >= 0 {
			fields = fields[:i]
		}
	default:
		m := benchRowRE.FindStringSubmatch(line)
		if m == nil {
			return nil
		}
		fields = m[1] + " " + m[2] + " " + m[3]
	}
	var out []float64
	for _, s := range numberRE.FindAllString(fields, -1) {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// benchRowRE matches benchratio's table row: median, min–max, n, goal.
var benchRowRE = regexp.MustCompile(`\s(\d+(?:\.\d+)?(?:e[-+]?\d+)?)\s+(\d+(?:\.\d+)?(?:e[-+]?\d+)?)–(\d+(?:\.\d+)?(?:e[-+]?\d+)?)\s+\d+\s+(?:≥|≤|—|\d)`)

// ReadRatios reads every ratios.txt under resultsDir (relative names are
// reported against root).
func ReadRatios(root, resultsDir string) (*Ratios, error) {
	rs := &Ratios{files: map[float64][]string{}}
	err := filepath.WalkDir(resultsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "ratios.txt" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for _, line := range strings.Split(string(b), "\n") {
			for _, v := range ratioValues(line) {
				if _, seen := rs.files[v]; !seen {
					rs.vals = append(rs.vals, v)
				}
				rs.files[v] = append(rs.files[v], rel)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(rs.vals) == 0 {
		return nil, ErrNoRatios
	}
	sort.Float64s(rs.vals)
	return rs, nil
}

// Has reports whether some ratio rounds to printed at its precision (the
// number of digits after its decimal point), in a ratios.txt under
// results/<exp>/ for one of scope's experiments (any, if scope is empty).
func (rs *Ratios) Has(printed string, scope ...string) bool {
	want, err := strconv.ParseFloat(printed, 64)
	if err != nil {
		return false
	}
	prec := 0
	if i := strings.IndexByte(printed, '.'); i >= 0 {
		prec = len(printed) - i - 1
	}
	// A ratio rounds to printed if it lies within half a unit of the last
	// printed digit (both ends included: 0.725 may be printed 0.72 or 0.73).
	half := 0.5*math.Pow(10, -float64(prec)) + 1e-9
	for i := sort.SearchFloat64s(rs.vals, want-half); i < len(rs.vals) && rs.vals[i] <= want+half; i++ {
		if len(scope) == 0 {
			return true
		}
		for _, f := range rs.files[rs.vals[i]] {
			for _, exp := range scope {
				if strings.HasPrefix(filepath.ToSlash(f), "results/"+exp+"/") {
					return true
				}
			}
		}
	}
	return false
}

// Traced reports whether c's value and range all appear in rs, in the
// ratios.txt of c's experiments (Scope) when it names any.
func (rs *Ratios) Traced(c Claim) bool {
	if !rs.Has(c.Value, c.Scope...) {
		return false
	}
	for _, e := range c.Range {
		if !rs.Has(e, c.Scope...) {
			return false
		}
	}
	return true
}

// linkRE finds the experiments a line links to or names (results/<exp>/).
var linkRE = regexp.MustCompile(`results/([A-Za-z0-9_-]+)/`)

// scopeOf returns the experiments a claim on line of file must trace to: a
// FINDINGS.md's own experiment, else the experiments the line links to
// (results/<exp>/…), else none (any ratios.txt).
func scopeOf(file, line string) []string {
	parts := strings.Split(filepath.ToSlash(file), "/")
	if len(parts) >= 3 && parts[0] == "results" && parts[len(parts)-1] == "FINDINGS.md" {
		return []string{parts[1]}
	}
	var out []string
	for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// DocFiles lists the documents whose ratios must trace, relative to root:
// README.md, GUARANTEES.md and OPERATING.md wherever they are, every
// results/**/FINDINGS.md, results/README.md (their index) and docs/**/*.md.
func DocFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		switch {
		case rel == "README.md", d.Name() == "GUARANTEES.md", d.Name() == "OPERATING.md":
		case top == "results" && (d.Name() == "FINDINGS.md" || rel == filepath.Join("results", "README.md")):
		case top == "docs" && strings.HasSuffix(d.Name(), ".md"):
		default:
			return nil
		}
		out = append(out, rel)
		return nil
	})
	return out, err
}

// Untraced returns the claims of the documents under root that no
// ratios.txt under root/results holds.
func Untraced(root string) ([]Claim, error) {
	rs, err := ReadRatios(root, filepath.Join(root, "results"))
	if err != nil {
		return nil, err
	}
	docs, err := DocFiles(root)
	if err != nil {
		return nil, err
	}
	var bad []Claim
	for _, d := range docs {
		f, err := os.Open(filepath.Join(root, d))
		if err != nil {
			return nil, err
		}
		cs, err := ScanClaims(f, filepath.ToSlash(d))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("ratioclaims: %s: %w", d, err)
		}
		for _, c := range cs {
			if !rs.Traced(c) {
				bad = append(bad, c)
			}
		}
	}
	return bad, nil
}

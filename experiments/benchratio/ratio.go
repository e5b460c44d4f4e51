package benchratio

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Quantity is one operand of a ratio: the samples of a benchmark in a unit.
// With Rate set, each sample x (ns/op) becomes the rate 1e9/x (ops/s), so
// a ratio of two rates is a ratio of throughputs (= the inverse ratio of
// sec/op).
type Quantity struct {
	Bench string `json:"bench"` // canonical name (see Samples)
	Unit  string `json:"unit"`
	Rate  bool   `json:"rate,omitempty"`
}

func (q Quantity) String() string {
	if q.Rate {
		return fmt.Sprintf("1/(%s %s)", q.Bench, q.Unit)
	}
	return fmt.Sprintf("%s %s", q.Bench, q.Unit)
}

// values returns q's value at each count index of its row, with ok false
// where that line lacks the unit.
func (q Quantity) values(s *Samples) ([]float64, []bool) {
	xs, ok := s.byCount(q.Bench, q.Unit)
	if q.Rate {
		for i, x := range xs {
			if ok[i] {
				xs[i] = 1e9 / x
			}
		}
	}
	return xs, ok
}

// present counts the true entries.
func present(ok []bool) int {
	n := 0
	for _, b := range ok {
		if b {
			n++
		}
	}
	return n
}

// Goal is what a ratio must reach: at least Min (when Min > 0) and at most
// Max (when Max > 0). The zero Goal judges nothing (informational rows).
type Goal struct {
	Min float64 `json:"min,omitempty"`
	Max float64 `json:"max,omitempty"`
}

func (g Goal) String() string {
	switch {
	case g.Min > 0 && g.Max > 0:
		return fmt.Sprintf("%g–%g", g.Min, g.Max)
	case g.Min > 0:
		return fmt.Sprintf("≥ %g", g.Min)
	case g.Max > 0:
		return fmt.Sprintf("≤ %g", g.Max)
	}
	return "—"
}

// Set reports whether g judges anything.
func (g Goal) Set() bool { return g.Min > 0 || g.Max > 0 }

// Met reports whether v meets g.
func (g Goal) Met(v float64) bool {
	return (g.Min <= 0 || v >= g.Min) && (g.Max <= 0 || v <= g.Max)
}

// Spec defines one ratio: Num ÷ Den per count.
type Spec struct {
	Target string   `json:"target"` // "P1", "P2", "P3"
	Label  string   `json:"label"`
	Num    Quantity `json:"num"`
	Den    Quantity `json:"den"`
	Goal   Goal     `json:"goal"`
	// WorkVaries, when set, says why the numerator's and denominator's
	// rows may run different iteration counts (different policies, a
	// time-based fio job); when empty, a pair of lines with different N
	// refuses the ratio.
	WorkVaries string `json:"work_varies,omitempty"`
}

// Ratio is a computed Spec. Values are the per-count ratios (line i of
// the numerator's row over line i of the denominator's, where both report
// the unit); Median, Min and Max summarize them. Missing, when set, says why
// nothing was computed.
type Ratio struct {
	Spec
	Values  []float64 `json:"values,omitempty"`
	Median  float64   `json:"median"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	Missing string    `json:"missing,omitempty"`
}

// Verdict is "ok" or "MISSED" for a judged ratio (by its median), "info"
// for an informational one and "missing" when it could not be computed.
func (r Ratio) Verdict() string {
	switch {
	case r.Missing != "":
		return "missing"
	case !r.Goal.Set():
		return "info"
	case r.Goal.Met(r.Median):
		return "ok"
	}
	return "MISSED"
}

// Compute evaluates spec over s.
func Compute(s *Samples, spec Spec) Ratio {
	r := Ratio{Spec: spec}
	num, numOK := spec.Num.values(s)
	den, denOK := spec.Den.values(s)
	switch {
	case present(numOK) == 0:
		r.Missing = "no samples of " + spec.Num.Bench + " " + spec.Num.Unit
		return r
	case present(denOK) == 0:
		r.Missing = "no samples of " + spec.Den.Bench + " " + spec.Den.Unit
		return r
	}
	// Paired by count index: line i of each row.
	n := min(len(num), len(den))
	if spec.WorkVaries == "" && spec.Num.Bench != spec.Den.Bench {
		ni, di := s.Iters(spec.Num.Bench), s.Iters(spec.Den.Bench)
		for i := 0; i < n; i++ {
			if numOK[i] && denOK[i] && ni[i] != di[i] {
				r.Missing = fmt.Sprintf("refused: unequal work at count %d, %s ran N=%d and %s N=%d (run each row with -benchtime=Nx from the plan)",
					i+1, spec.Num.Bench, ni[i], spec.Den.Bench, di[i])
				return r
			}
		}
	}
	for i := 0; i < n; i++ {
		if !numOK[i] || !denOK[i] || den[i] == 0 || math.IsInf(num[i], 0) || math.IsInf(den[i], 0) {
			continue
		}
		r.Values = append(r.Values, num[i]/den[i])
	}
	if len(r.Values) == 0 {
		r.Missing = "no usable sample pairs (zero denominator)"
		return r
	}
	r.Median, r.Min, r.Max = summarize(r.Values)
	return r
}

// summarize returns the median (mean of the middle two for an even count),
// minimum and maximum of xs (len(xs) > 0).
func summarize(xs []float64) (median, lo, hi float64) {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	median = s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return median, s[0], s[n-1]
}

// The cells the targets are defined on (issue 10).
const (
	p1Size, p1Conc          = 1024, 1
	p2Size, p2Conc, p2Solo  = 1024, 64, 1
	p3Size, p3Conc          = 65536, 4
	fioBS, fioEngine, fioQD = 65536, "libaio", 4
)

// p2Judged are the paths P2's goals apply to; other paths are reported for
// information.
var p2Judged = map[string]bool{"pwrite": true, "mmap": true}

// appendName and rawName build the benchmark names of the engine matrix
// (engine/commitlog/bench_test.go).
func appendName(path, flush string, size, conc int) string {
	return fmt.Sprintf("Append/path=%s/flush=%s/size=%d/conc=%d", path, flush, size, conc)
}

func rawName(path, flush string, size, conc int) string {
	return fmt.Sprintf("RawPath/path=%s/flush=%s/size=%d/conc=%d", path, flush, size, conc)
}

// independentName is the row of the baseline that shares no engine code
// (pre-encoded records, bare pwrite, fdatasync every 500 ms).
func independentName(size int) string {
	return fmt.Sprintf("Independent/path=pwrite/flush=async/size=%d/conc=1", size)
}

// FioName is the benchmark name WriteFioBench gives fio's O_DIRECT
// sequential-write ceiling with the given block size, engine and depth.
func FioName(bs int, engine string, depth int) string {
	return fmt.Sprintf("FioWrite/rw=write/direct=1/bs=%d/ioengine=%s/iodepth=%d", bs, engine, depth)
}

// FioFilesName is FioName for a job that writes a set of fresh files of
// fileSize bytes each once (the commit log's pattern: preallocated
// segments, created as they are reached) instead of looping over one.
func FioFilesName(bs int, engine string, depth, fileSize int) string {
	return fmt.Sprintf("%s/filesize=%d", FioName(bs, engine, depth), fileSize)
}

// Paths returns the write paths that appear in BenchmarkAppend names, sorted.
func Paths(s *Samples) []string {
	seen := map[string]bool{}
	var ps []string
	for _, n := range s.Names() {
		if p := Key(n, "path"); p != "" && len(n) > 7 && n[:7] == "Append/" && !seen[p] {
			seen[p] = true
			ps = append(ps, p)
		}
	}
	sort.Strings(ps)
	return ps
}

// Why some ratios divide rows of unequal N (Spec.WorkVaries).
const (
	asyncWork = "an async row's N is set by its flush cycles, a group row's by its segment rolls"
	fioWork   = "fio runs for a fixed time; its N is the I/Os it issued"
)

// Specs returns issue 10's target ratios for the paths in s:
//
//	P1 per path: Append ÷ RawPath throughput, flush=async, 1 KiB, 1 producer (≥ 0.85);
//	   and RawPath ÷ Append p50 latency (information: the per-call cost
//	   without the stalls that weigh on the mean); where the independent
//	   baseline ran (issue 32), Append ÷ Independent throughput (≥ 0.85)
//	P2 per path (judged on pwrite and mmap), 1 KiB, 64 producers:
//	   group ÷ async throughput (≥ 0.5), group ÷ sync throughput (≥ 20),
//	   group throughput ÷ its limit-ops/s (≥ 0.8); rmqgroup ÷ group
//	   throughput (information); and with 1 producer group ÷ sync latency
//	   (sec/op, ≤ 1.1)
//	P3: Append/path=direct/flush=async/size=65536/conc=4 MB/s ÷ fio's
//	   O_DIRECT sequential write at bs=64k, libaio, iodepth 4 (≥ 0.9)
func Specs(s *Samples) []Spec {
	var out []Spec
	paths := Paths(s)
	for _, p := range paths {
		out = append(out, Spec{
			Target: "P1",
			Label:  fmt.Sprintf("path=%s append÷raw throughput, async %d B conc=%d", p, p1Size, p1Conc),
			Num:    Quantity{Bench: appendName(p, "async", p1Size, p1Conc), Unit: "ns/op", Rate: true},
			Den:    Quantity{Bench: rawName(p, "async", p1Size, p1Conc), Unit: "ns/op", Rate: true},
			Goal:   Goal{Min: 0.85},
		}, Spec{
			Target: "P1",
			Label:  fmt.Sprintf("path=%s raw÷append p50 latency, async %d B conc=%d", p, p1Size, p1Conc),
			Num:    Quantity{Bench: rawName(p, "async", p1Size, p1Conc), Unit: "p50-ns"},
			Den:    Quantity{Bench: appendName(p, "async", p1Size, p1Conc), Unit: "p50-ns"},
		})
		if s.Get(independentName(p1Size), "ns/op") != nil {
			out = append(out, Spec{
				Target: "P1",
				Label:  fmt.Sprintf("path=%s append÷independent throughput, async %d B conc=%d", p, p1Size, p1Conc),
				Num:    Quantity{Bench: appendName(p, "async", p1Size, p1Conc), Unit: "ns/op", Rate: true},
				Den:    Quantity{Bench: independentName(p1Size), Unit: "ns/op", Rate: true},
				Goal:   Goal{Min: 0.85},
			})
		}
	}
	for _, p := range paths {
		judged := func(g Goal) Goal {
			if p2Judged[p] {
				return g
			}
			return Goal{}
		}
		group := Quantity{Bench: appendName(p, "group", p2Size, p2Conc), Unit: "ns/op", Rate: true}
		out = append(out,
			Spec{Target: "P2", Label: fmt.Sprintf("path=%s group÷async throughput, %d B conc=%d", p, p2Size, p2Conc),
				Num: group, Den: Quantity{Bench: appendName(p, "async", p2Size, p2Conc), Unit: "ns/op", Rate: true},
				Goal: judged(Goal{Min: 0.5}), WorkVaries: asyncWork},
			Spec{Target: "P2", Label: fmt.Sprintf("path=%s group÷sync throughput, %d B conc=%d", p, p2Size, p2Conc),
				Num: group, Den: Quantity{Bench: appendName(p, "sync", p2Size, p2Conc), Unit: "ns/op", Rate: true},
				Goal: judged(Goal{Min: 20})},
			Spec{Target: "P2", Label: fmt.Sprintf("path=%s group÷limit (conc/flush latency), %d B conc=%d", p, p2Size, p2Conc),
				Num: group, Den: Quantity{Bench: group.Bench, Unit: "limit-ops/s"},
				Goal: judged(Goal{Min: 0.8})},
			Spec{Target: "P2", Label: fmt.Sprintf("path=%s group÷sync latency, %d B conc=%d", p, p2Size, p2Solo),
				Num:  Quantity{Bench: appendName(p, "group", p2Size, p2Solo), Unit: "ns/op"},
				Den:  Quantity{Bench: appendName(p, "sync", p2Size, p2Solo), Unit: "ns/op"},
				Goal: judged(Goal{Max: 1.1})},
		)
		if rmq := appendName(p, "rmqgroup", p2Size, p2Conc); s.Get(rmq, "ns/op") != nil {
			out = append(out, Spec{Target: "P2", Label: fmt.Sprintf("path=%s rmqgroup÷group throughput, %d B conc=%d", p, p2Size, p2Conc),
				Num: Quantity{Bench: rmq, Unit: "ns/op", Rate: true}, Den: group})
		}
	}
	direct := Quantity{Bench: appendName("direct", "async", p3Size, p3Conc), Unit: "MB/s"}
	out = append(out, Spec{
		Target:     "P3",
		Label:      fmt.Sprintf("path=direct append MB/s ÷ fio O_DIRECT write bs=%d %s iodepth=%d, async %d B conc=%d", fioBS, fioEngine, fioQD, p3Size, p3Conc),
		Num:        direct,
		Den:        Quantity{Bench: FioName(fioBS, fioEngine, fioQD), Unit: "MB/s"},
		Goal:       Goal{Min: 0.9},
		WorkVaries: fioWork,
	})
	// The same fio job over the log's own file pattern, when it ran: fresh
	// preallocated files of the segment size, each written once.
	prefix := FioName(fioBS, fioEngine, fioQD) + "/filesize="
	for _, n := range s.Names() {
		if fs, ok := strings.CutPrefix(n, prefix); ok {
			out = append(out, Spec{
				Target: "P3",
				Label: fmt.Sprintf("path=direct append MB/s ÷ fio O_DIRECT write bs=%d %s iodepth=%d over fresh %s-byte files, async %d B conc=%d",
					fioBS, fioEngine, fioQD, fs, p3Size, p3Conc),
				Num:        direct,
				Den:        Quantity{Bench: n, Unit: "MB/s"},
				Goal:       Goal{Min: 0.9},
				WorkVaries: fioWork,
			})
		}
	}
	return out
}

// All computes every Spec for s.
func All(s *Samples) []Ratio {
	specs := Specs(s)
	out := make([]Ratio, len(specs))
	for i, sp := range specs {
		out[i] = Compute(s, sp)
	}
	return out
}

package commitlog

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
)

// The fixed work of a benchmark row (rowN) and the order scripts/bench.sh
// runs the rows in (planOrder). go test ./engine/commitlog -run '^$'
// -bench.plan REGEXP -bench.passes K prints the plan and exits.

var (
	benchPlan   = flag.String("bench.plan", "", "print the rows matching this regexp (Append/path=…) with their N, in run order, and exit")
	benchPasses = flag.Int("bench.passes", 5, "passes over the rows -bench.plan prints")
	benchMinN   = flag.Int("bench.minn", 2000, "least N of any row (rowN)")
	benchOps    = flag.Float64("bench.asyncops", 1e6, "fastest async append rate assumed, appends/s (rowN)")
	benchBytes  = flag.Float64("bench.asyncbytes", 2<<30, "fastest async append rate assumed, bytes/s (rowN)")
)

// asyncCycles is how many of the async loop's cycles every async row must
// cross, at the loop's RocketMQ interval (500 ms).
const asyncCycles = 2

var asyncInterval = flush.DefaultConfig(flush.Async).Interval

// rowWork is what decides a row's N: the encoded record length, whether
// its durability comes from a background flush loop (async), the segment
// size, and the assumptions of the async bound.
type rowWork struct {
	recLen   int
	async    bool
	segSize  int64
	minN     int
	maxOps   float64       // appends/s no async row exceeds
	maxBytes float64       // bytes/s no async row exceeds
	interval time.Duration // the async loop's cycle
}

// rollN is the least number of records of recLen bytes that roll twice:
// a segment holds at most ceil(segSize/recLen) of them (fewer, for the
// end-of-segment blank), so two full segments and one more record start a
// third.
func (w rowWork) rollN() int {
	return 2*int((w.segSize+int64(w.recLen)-1)/int64(w.recLen)) + 1
}

// cycleN is the least number of records an async row must append to run
// for asyncCycles intervals at the fastest rate it could reach: the lower
// of maxOps and maxBytes/recLen. On this project's machine no async row
// exceeded 560k appends/s (1 KiB, direct) or 1.5 GB/s (64 KiB, pwrite,
// 4 producers) in results/bench/20261202T134614Z, so the defaults (1M
// appends/s, 2 GiB/s) leave a margin; a faster machine is caught after the
// run (reportOwed: flush-cycles < 2 fails the row) and raises the flags.
func (w rowWork) cycleN() int {
	rate := min(w.maxOps, w.maxBytes/float64(w.recLen))
	return int(math.Ceil(asyncCycles * w.interval.Seconds() * rate))
}

// n is the row's fixed work: at least minN, enough to roll two segments,
// and for async rows enough to cross asyncCycles flush cycles. Rows with
// the same record size and the same kind of durability (async or not) get
// the same N, whatever their path, policy or benchmark, so the rows a ratio
// divides do equal work; an async row and a sync/group row of the same cell
// do not (an async row's work is set by time, the others' by rolls).
func (w rowWork) n() int {
	n := max(w.minN, w.rollN())
	if w.async {
		n = max(n, w.cycleN())
	}
	return n
}

// benchRecLen is the encoded length of the record every row of size
// appends (the same message as BenchmarkAppend's, with the store host the
// log stamps).
func benchRecLen(size int) int {
	m := &record.Message{Topic: "BenchmarkTest", Body: make([]byte, size), BornHost: born,
		StoreHost: DefaultConfig("").StoreHost, BornTimestamp: 1}
	rec, err := record.AppendEncode(nil, m, 0, 0, 0, 0)
	if err != nil {
		panic(err) // a fixed, valid message
	}
	return len(rec)
}

// benchWork is rowWork with the flags' values.
func benchWork(size int, pol flush.Kind) rowWork {
	return rowWork{recLen: benchRecLen(size), async: !waitsForFlush(pol), segSize: *benchSeg, minN: *benchMinN,
		maxOps: *benchOps, maxBytes: *benchBytes, interval: asyncInterval}
}

// rowN is the N scripts/bench.sh passes a row as -benchtime=Nx.
func rowN(size int, pol flush.Kind) int { return benchWork(size, pol).n() }

// benchRow is one row of the matrix.
type benchRow struct {
	bench string // "Append", "RawPath", "Independent"
	path  iopath.Kind
	pol   flush.Kind
	cell  benchCell
}

// name is the row's name as benchratio reads it (without "Benchmark").
func (r benchRow) name() string {
	return fmt.Sprintf("%s/path=%s/flush=%s/%s", r.bench, r.path, r.pol, r.cell)
}

// pattern is the -test.bench pattern that selects exactly this row.
func (r benchRow) pattern() string {
	q := regexp.QuoteMeta
	return fmt.Sprintf("^Benchmark%s$/^path=%s$/^flush=%s$/^size=%d$/^conc=%d$",
		q(r.bench), q(string(r.path)), q(string(r.pol)), r.cell.size, r.cell.conc)
}

// benchOrder is the order of the benchmarks within a block.
var benchOrder = []string{"Append", "RawPath", "Independent"}

// allRows lists every row of BenchmarkAppend, BenchmarkRawPath and
// BenchmarkIndependent (BenchmarkAppendTail is not part of the plan).
func allRows() []benchRow {
	var rows []benchRow
	for _, path := range iopath.Kinds() {
		for _, c := range benchCells() {
			for _, pol := range flush.Kinds() {
				rows = append(rows, benchRow{"Append", path, pol, c})
			}
			for _, pol := range baselineFlushes {
				rows = append(rows, benchRow{"RawPath", path, pol, c})
			}
		}
	}
	for _, c := range independentCells() {
		rows = append(rows, benchRow{"Independent", iopath.Pwrite, flush.Async, c})
	}
	return rows
}

// planOrder returns the rows of each of passes passes. Within a pass the
// rows of one cell (size and producers) run together, by policy, then
// path, then benchmark (Append, RawPath, Independent): the rows a ratio
// divides (Append and RawPath of one path and policy, the independent
// baseline beside pwrite's async pair, one path's policies) run seconds
// apart, not minutes. Every other pass runs in reverse, so neither row of
// a pair always runs first.
func planOrder(rows []benchRow, passes int) [][]benchRow {
	idx := func(xs []string, x string) int { return slices.Index(xs, x) }
	cells := benchCells()
	pols, paths := flush.Kinds(), iopath.Kinds()
	key := func(r benchRow) []int {
		return []int{slices.Index(cells, r.cell), slices.Index(pols, r.pol), slices.Index(paths, r.path), idx(benchOrder, r.bench)}
	}
	fwd := slices.Clone(rows)
	slices.SortStableFunc(fwd, func(a, b benchRow) int { return slices.Compare(key(a), key(b)) })
	out := make([][]benchRow, passes)
	for p := range out {
		out[p] = slices.Clone(fwd)
		if p%2 == 1 {
			slices.Reverse(out[p])
		}
	}
	return out
}

// printPlan writes the plan for the rows whose name matches re: one line
// per row run, "pass<TAB>pattern<TAB>N<TAB>name", passes numbered from 1.
func printPlan(w io.Writer, re *regexp.Regexp, passes int) error {
	var rows []benchRow
	for _, r := range allRows() {
		if re.MatchString(r.name()) {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return fmt.Errorf("commitlog bench: no row matches %q", re)
	}
	for p, pass := range planOrder(rows, passes) {
		for _, r := range pass {
			if _, err := fmt.Fprintf(w, "%d\t%s\t%d\t%s\n", p+1, r.pattern(), rowN(r.cell.size, r.pol), r.name()); err != nil {
				return err
			}
		}
	}
	return nil
}

// reportOwed reports an async row's owed flush (owed-flush-ns) and the
// background flushes its run crossed (flush-cycles), and fails a row that
// did its planned work (b.N >= rowN) but crossed fewer than asyncCycles:
// its N was too small for this machine.
func reportOwed(b interface {
	ReportMetric(float64, string)
	Errorf(string, ...any)
}, n, size int, cycles int64, owed time.Duration) {
	b.ReportMetric(float64(owed.Nanoseconds()), "owed-flush-ns")
	b.ReportMetric(float64(cycles), "flush-cycles")
	if planned := rowN(size, flush.Async); n >= planned && cycles < asyncCycles {
		b.Errorf("%d appends crossed %d async flush cycles, want >= %d: this machine appends faster than "+
			"-bench.asyncops=%g / -bench.asyncbytes=%g assume; raise them", n, cycles, asyncCycles, *benchOps, *benchBytes)
	}
}

// TestRowN checks the fixed work of a row: rollN records of a size roll a
// real log (every path, a small segment) at least twice; cycleN is the
// async bound's arithmetic; async rows get at least both bounds, others
// only the roll bound and the floor; and the rows a ratio divides get the
// same N.
func TestRowN(t *testing.T) {
	const seg = 64 << 10
	for _, size := range []int{128, 1024, 4096, 16384} {
		w := rowWork{recLen: benchRecLen(size), segSize: seg}
		n := w.rollN()
		cfg := DefaultConfig(t.TempDir())
		cfg.SegmentSize = seg
		cfg.Flush = flush.DefaultConfig(flush.Async)
		l, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		body := benchBody(size)
		for i := 0; i < n; i++ {
			m := record.Message{Topic: "BenchmarkTest", Body: body, BornHost: born, BornTimestamp: 1}
			res, err := l.Append(context.Background(), &m, int64(i))
			if err != nil {
				t.Fatal(err)
			}
			if int(res.Size) != w.recLen {
				t.Fatalf("size %d: benchRecLen %d, the log wrote a %d-byte record", size, w.recLen, res.Size)
			}
		}
		if got := len(l.Segments()); got < 3 {
			t.Errorf("size %d: %d records (rollN) left %d segments, want >= 3 (two rolls)", size, n, got)
		}
		l.Close()
	}

	w := rowWork{recLen: 1000, segSize: 1 << 20, minN: 10, maxOps: 1e6, maxBytes: 2e9, interval: 500 * time.Millisecond}
	if got := w.cycleN(); got != 1000000 { // 2 cycles × 0.5 s × min(1e6, 2e9/1000 = 2e6)
		t.Errorf("cycleN(1000 B) = %d, want 1e6", got)
	}
	w.recLen = 65600
	if got := w.cycleN(); got != 30488 { // ceil(2 × 0.5 × 2e9/65600 = 30487.8)
		t.Errorf("cycleN(65600 B) = %d, want 30488", got)
	}
	if got, want := w.n(), max(w.minN, w.rollN()); got != want {
		t.Errorf("non-async n = %d, want %d (floor and rolls only)", got, want)
	}
	w.async = true
	if got := w.n(); got != 30488 {
		t.Errorf("async n = %d, want cycleN 30488", got)
	}
	w.minN = 50000
	if got := w.n(); got != 50000 {
		t.Errorf("async n with floor 50000 = %d", got)
	}
	for _, size := range []int{128, 1024, 65536} {
		if rowN(size, flush.Async) < rowN(size, flush.Sync) {
			t.Errorf("size %d: async N %d below sync N %d", size, rowN(size, flush.Async), rowN(size, flush.Sync))
		}
		if rowN(size, flush.Sync) != rowN(size, flush.Group) || rowN(size, flush.Group) != rowN(size, flush.RMQGroup) {
			t.Errorf("size %d: sync, group and rmqgroup rows differ in N", size)
		}
	}
}

// TestPlanOrder checks the run order: every row once per pass; the pairs
// benchratio divides (Append and RawPath of one path, policy and cell; the
// independent baseline beside pwrite's async rows) adjacent; every other
// pass reversed; and each row's pattern selects that row and no other.
func TestPlanOrder(t *testing.T) {
	rows := allRows()
	passes := planOrder(rows, 3)
	if len(passes) != 3 {
		t.Fatalf("%d passes", len(passes))
	}
	for p, pass := range passes {
		if len(pass) != len(rows) {
			t.Fatalf("pass %d has %d rows, want %d", p, len(pass), len(rows))
		}
		seen := map[string]bool{}
		for _, r := range pass {
			if seen[r.name()] {
				t.Fatalf("pass %d runs %s twice", p, r.name())
			}
			seen[r.name()] = true
		}
	}
	if !slices.Equal(passes[0], passes[2]) {
		t.Error("passes 1 and 3 differ")
	}
	rev := slices.Clone(passes[1])
	slices.Reverse(rev)
	if !slices.Equal(passes[0], rev) {
		t.Error("pass 2 is not pass 1 reversed")
	}
	pos := map[string]int{}
	for i, r := range passes[0] {
		pos[r.name()] = i
	}
	pairs := 0
	for _, r := range rows {
		if r.bench != "RawPath" {
			continue
		}
		a := benchRow{"Append", r.path, r.pol, r.cell}
		if pos[r.name()]-pos[a.name()] != 1 {
			t.Errorf("%s runs at %d, %s at %d: not adjacent", a.name(), pos[a.name()], r.name(), pos[r.name()])
		}
		pairs++
		if r.path == iopath.Pwrite && r.pol == flush.Async && r.cell.conc == 1 {
			ind := benchRow{"Independent", r.path, r.pol, r.cell}
			if pos[ind.name()]-pos[r.name()] != 1 {
				t.Errorf("%s at %d is not right after %s at %d", ind.name(), pos[ind.name()], r.name(), pos[r.name()])
			}
		}
	}
	if pairs == 0 {
		t.Fatal("no RawPath rows")
	}
	// Each pattern, split into the per-level patterns go test matches
	// against the levels of a name, matches at every level its own row's
	// value and no other value seen at that level; rows differ in some
	// level, so a pattern selects its own row and no other.
	levels := map[int]map[string]bool{}
	for _, r := range rows {
		for k, v := range strings.Split("Benchmark"+r.name(), "/") {
			if levels[k] == nil {
				levels[k] = map[string]bool{}
			}
			levels[k][v] = true
		}
	}
	for _, r := range rows {
		own := strings.Split("Benchmark"+r.name(), "/")
		pats := strings.Split(r.pattern(), "/")
		if len(pats) != len(own) {
			t.Fatalf("pattern %s has %d levels, name %d", r.pattern(), len(pats), len(own))
		}
		for k, p := range pats {
			re := regexp.MustCompile(p)
			for v := range levels[k] {
				if re.MatchString(v) != (v == own[k]) {
					t.Fatalf("pattern %s level %d matches %q: %v", r.pattern(), k, v, re.MatchString(v))
				}
			}
		}
	}
}

// TestPrintPlan checks the plan's lines: pass, pattern, the row's N, name,
// filtered by the regexp, and an error when nothing matches.
func TestPrintPlan(t *testing.T) {
	var buf bytes.Buffer
	if err := printPlan(&buf, regexp.MustCompile(`^(Append|Independent)/path=pwrite/flush=async/size=1024/conc=1$`), 2); err != nil {
		t.Fatal(err)
	}
	n := rowN(1024, flush.Async)
	want := fmt.Sprintf("1\t%s\t%d\tAppend/path=pwrite/flush=async/size=1024/conc=1\n"+
		"1\t%s\t%d\tIndependent/path=pwrite/flush=async/size=1024/conc=1\n"+
		"2\t%s\t%d\tIndependent/path=pwrite/flush=async/size=1024/conc=1\n"+
		"2\t%s\t%d\tAppend/path=pwrite/flush=async/size=1024/conc=1\n",
		benchRow{"Append", iopath.Pwrite, flush.Async, benchCell{1024, 1}}.pattern(), n,
		benchRow{"Independent", iopath.Pwrite, flush.Async, benchCell{1024, 1}}.pattern(), n,
		benchRow{"Independent", iopath.Pwrite, flush.Async, benchCell{1024, 1}}.pattern(), n,
		benchRow{"Append", iopath.Pwrite, flush.Async, benchCell{1024, 1}}.pattern(), n)
	if buf.String() != want {
		t.Errorf("plan:\n%s\nwant:\n%s", buf.String(), want)
	}
	if err := printPlan(io.Discard, regexp.MustCompile(`^Nothing`), 1); err == nil {
		t.Error("an empty plan is not an error")
	}
}

// fakeB records what reportOwed reports.
type fakeB struct {
	metrics map[string]float64
	errs    int
}

func (f *fakeB) ReportMetric(v float64, unit string) { f.metrics[unit] = v }
func (f *fakeB) Errorf(string, ...any)               { f.errs++ }

// TestReportOwed checks that a row that did its planned work but crossed
// fewer than two flush cycles fails, and that a short (probe) run does not.
func TestReportOwed(t *testing.T) {
	planned := rowN(1024, flush.Async)
	for _, c := range []struct {
		n      int
		cycles int64
		fails  bool
	}{{planned, 2, false}, {planned, 1, true}, {planned + 5, 0, true}, {1, 0, false}, {planned - 1, 0, false}} {
		f := &fakeB{metrics: map[string]float64{}}
		reportOwed(f, c.n, 1024, c.cycles, 3*time.Millisecond)
		if (f.errs > 0) != c.fails {
			t.Errorf("n=%d cycles=%d: failed %v, want %v", c.n, c.cycles, f.errs > 0, c.fails)
		}
		if f.metrics["flush-cycles"] != float64(c.cycles) || f.metrics["owed-flush-ns"] != 3e6 {
			t.Errorf("metrics %v", f.metrics)
		}
	}
}

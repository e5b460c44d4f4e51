package benchratio

import (
	"bytes"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

func readTestdata(t *testing.T) *Samples {
	t.Helper()
	s, err := ReadFiles("testdata/bench.txt", "testdata/fio.txt")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRatios checks every target ratio on a fixed input against values
// worked out by hand (see the comments).
func TestRatios(t *testing.T) {
	rs := All(readTestdata(t))
	type want struct {
		median, min, max float64
		n                int
		verdict          string
	}
	wants := map[string]want{
		// raw ns / append ns, paired by count: 1800/2000, 1900/2000 (Append has 2 counts).
		"path=direct append÷raw throughput, async 1024 B conc=1": {0.925, 0.9, 0.95, 2, "ok"},
		// 3600/4000, 4000/5000, 4400/4400.
		"path=mmap append÷raw throughput, async 1024 B conc=1": {0.9, 0.8, 1, 3, "ok"},
		// 3000/4000, 3200/4000, 2800/4000.
		"path=pwrite append÷raw throughput, async 1024 B conc=1": {0.75, 0.7, 0.8, 3, "MISSED"},
		"path=pool append÷raw throughput, async 1024 B conc=1":   {0, 0, 0, 0, "missing"},
		// raw p50 / append p50: 600/700 each count.
		"path=mmap raw÷append p50 latency, async 1024 B conc=1":   {6.0 / 7, 6.0 / 7, 6.0 / 7, 3, "info"},
		"path=direct raw÷append p50 latency, async 1024 B conc=1": {6.0 / 7, 6.0 / 7, 6.0 / 7, 2, "info"},
		// async ns / group ns: 4000/10000, 4000/12000, 4000/8000.
		"path=mmap group÷async throughput, 1024 B conc=64": {0.4, 1.0 / 3, 0.5, 3, "MISSED"},
		// sync ns / group ns: 400000/10000, 360000/12000, 240000/8000.
		"path=mmap group÷sync throughput, 1024 B conc=64": {30, 30, 40, 3, "ok"},
		// (1e9/group ns) / limit-ops/s: 100000/125000, 83333.3/100000, 125000/100000.
		"path=mmap group÷limit (conc/flush latency), 1024 B conc=64": {5.0 / 6, 0.8, 1.25, 3, "ok"},
		// group ns / sync ns at conc=1: 420000/400000, 400000/400000, 450000/400000.
		"path=mmap group÷sync latency, 1024 B conc=1": {1.05, 1, 1.125, 3, "ok"},
		// group ns / rmqgroup ns.
		"path=mmap rmqgroup÷group throughput, 1024 B conc=64": {0.5, 0.4, 0.6, 3, "info"},
		"path=pwrite group÷async throughput, 1024 B conc=64":  {0.5, 0.5, 0.5, 1, "ok"},
		"path=pwrite group÷sync throughput, 1024 B conc=64":   {0, 0, 0, 0, "missing"},
		// pool is not judged by P2.
		"path=pool group÷async throughput, 1024 B conc=64": {0, 0, 0, 0, "missing"},
		// independent ns / append ns, pwrite: 2000/4000, 2500/4000, 4000/4000.
		"path=pwrite append÷independent throughput, async 1024 B conc=1": {0.625, 0.5, 1, 3, "MISSED"},
		// mmap: 2000/4000, 2500/5000, 4000/4400.
		"path=mmap append÷independent throughput, async 1024 B conc=1": {0.5, 0.5, 4000.0 / 4400, 3, "MISSED"},
		// direct's Append has 2 counts: 2000/2000, 2500/2000.
		"path=direct append÷independent throughput, async 1024 B conc=1": {1.125, 1, 1.25, 2, "ok"},
		// pool has one count: 2000/4000.
		"path=pool append÷independent throughput, async 1024 B conc=1": {0.5, 0.5, 0.5, 1, "MISSED"},
		// MB/s / fio MB/s: 900/1000, 1000/1000, 800/1000.
		"path=direct append MB/s ÷ fio O_DIRECT write bs=65536 libaio iodepth=4, async 65536 B conc=4": {0.9, 0.8, 1, 3, "ok"},
	}
	got := map[string]Ratio{}
	for _, r := range rs {
		if _, dup := got[r.Label]; dup {
			t.Errorf("duplicate ratio %q", r.Label)
		}
		got[r.Label] = r
	}
	for label, w := range wants {
		r, ok := got[label]
		if !ok {
			t.Errorf("no ratio %q", label)
			continue
		}
		if v := r.Verdict(); v != w.verdict {
			t.Errorf("%s: verdict %s (%s), want %s", label, v, r.Missing, w.verdict)
		}
		if w.verdict == "missing" {
			continue
		}
		if len(r.Values) != w.n || !near(r.Median, w.median) || !near(r.Min, w.min) || !near(r.Max, w.max) {
			t.Errorf("%s: median %v min %v max %v n %d, want %v %v %v %d", label, r.Median, r.Min, r.Max, len(r.Values),
				w.median, w.min, w.max, w.n)
		}
	}
	// P1 three per path (the independent baseline ran), P2 four (plus
	// rmqgroup where measured) per path, one P3.
	counts := map[string]int{}
	for _, r := range rs {
		counts[r.Target]++
	}
	if counts["P1"] != 3*4 || counts["P2"] != 4*4+1 || counts["P3"] != 1 {
		t.Errorf("ratio counts %v", counts)
	}
	if g := got["path=pool group÷async throughput, 1024 B conc=64"].Goal; g.Set() {
		t.Errorf("P2 judges pool: %v", g)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestMedianEvenAndOdd(t *testing.T) {
	for _, c := range []struct {
		xs          []float64
		med, lo, hi float64
	}{
		{[]float64{3}, 3, 3, 3},
		{[]float64{5, 1, 3}, 3, 1, 5},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4},
	} {
		m, lo, hi := summarize(c.xs)
		if m != c.med || lo != c.lo || hi != c.hi {
			t.Errorf("summarize(%v) = %v %v %v, want %v %v %v", c.xs, m, lo, hi, c.med, c.lo, c.hi)
		}
	}
}

func TestCanonicalNameAndKey(t *testing.T) {
	s := readTestdata(t)
	n := "Append/path=mmap/flush=group/size=1024/conc=64"
	if got := s.Get(n, "limit-ops/s"); len(got) != 3 || got[0] != 125000 {
		t.Fatalf("%s limit-ops/s = %v", n, got)
	}
	// Units are kept as written, not tidied (ns/op, not sec/op).
	if got := s.Get(n, "ns/op"); len(got) != 3 || got[1] != 12000 {
		t.Fatalf("%s ns/op = %v", n, got)
	}
	if Key(n, "flush") != "group" || Key(n, "conc") != "64" || Key(n, "nope") != "" {
		t.Fatal("Key")
	}
	if ps := Paths(s); strings.Join(ps, ",") != "direct,mmap,pool,pwrite" {
		t.Fatalf("paths %v", ps)
	}
}

func TestReadRejectsSyntaxErrorsAndEmptyFiles(t *testing.T) {
	s := NewSamples()
	if err := s.Read(strings.NewReader("BenchmarkX 10 abc ns/op\n"), "bad.txt"); err == nil {
		t.Fatal("syntax error accepted")
	}
	if err := s.Read(strings.NewReader("goos: linux\nPASS\n"), "empty.txt"); !errors.Is(err, ErrNoSamples) {
		t.Fatalf("empty file: %v", err)
	}
}

func TestFioToBenchRoundTrip(t *testing.T) {
	data, err := os.ReadFile("testdata/fio-libaio-qd4.json")
	if err != nil {
		t.Fatal(err)
	}
	run, err := ParseFio(append([]byte("fio: some warning\n"), data...))
	if err != nil {
		t.Fatal(err)
	}
	// Values from the report (fio 3.33, 1 s O_DIRECT sequential write).
	if run.BS != 65536 || run.IODepth != 4 || run.IOEngine != "libaio" || !run.Direct || run.RW != "write" ||
		run.BWBytes != 138563689 || run.TotalIOs != 2127 || run.RuntimeMS != 1006 || run.ClatP50 <= 0 {
		t.Fatalf("parsed %+v", run)
	}
	if run.Name() != FioName(65536, "libaio", 4) {
		t.Fatalf("name %s, want %s", run.Name(), FioName(65536, "libaio", 4))
	}
	var buf bytes.Buffer
	if err := WriteFioBench(&buf, []FioRun{run, run}, map[string]string{"fio-version": run.Version, "fs": "ext4"}); err != nil {
		t.Fatal(err)
	}
	s := NewSamples()
	if err := s.Read(&buf, "fio.txt"); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	mb := s.Get(run.Name(), "MB/s")
	if len(mb) != 2 || !near(mb[0], 138.564) {
		t.Fatalf("MB/s %v\n%s", mb, buf.String())
	}
	if ns := s.Get(run.Name(), "ns/op"); len(ns) != 2 || !near(ns[0], 1e9/run.IOPS) {
		t.Fatalf("ns/op %v", ns)
	}
}

func TestParseFioRejects(t *testing.T) {
	for name, in := range map[string]string{
		"not json": "fio: engine libaio not loadable",
		"no jobs":  `{"fio version":"fio-3.33","jobs":[]}`,
		"error":    `{"jobs":[{"error":5,"job options":{"bs":"64k"},"write":{"bw_bytes":1,"total_ios":1}}]}`,
		"no write": `{"jobs":[{"job options":{"bs":"64k"},"write":{"bw_bytes":0,"total_ios":0}}]}`,
		"bad bs":   `{"jobs":[{"job options":{"bs":"64q"},"write":{"bw_bytes":1,"iops":1,"total_ios":1}}]}`,
	} {
		if _, err := ParseFio([]byte(in)); !errors.Is(err, ErrFio) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestParseFioSize(t *testing.T) {
	for in, want := range map[string]int{"4096": 4096, "64k": 65536, "64K": 65536, "64kb": 65536, "64KiB": 65536, "1m": 1 << 20, "2g": 2 << 30} {
		if got, err := parseFioSize(in); err != nil || got != want {
			t.Errorf("parseFioSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := parseFioSize("k"); err == nil {
		t.Error(`"k" accepted`)
	}
}

func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, All(readTestdata(t))); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"target", "P1", "path=mmap append÷raw throughput", "0.9", "0.8–1", "≥ 0.85", "MISSED",
		"missing: no samples of RawPath/path=pool/flush=async/size=1024/conc=1 ns/op", "≤ 1.1", "info",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := WriteJSON(&buf, All(readTestdata(t))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"verdict": "MISSED"`) {
		t.Errorf("json lacks verdicts:\n%s", buf.String())
	}
}

// A fio job over a set of fresh files (the commit log's segment pattern)
// parses with its file size, gets its own benchmark name and its own P3
// ratio beside the single-file ceiling's.
func TestFioFilesCeiling(t *testing.T) {
	data, err := os.ReadFile("testdata/fio-libaio-qd4-files.json")
	if err != nil {
		t.Fatal(err)
	}
	run, err := ParseFio(data)
	if err != nil {
		t.Fatal(err)
	}
	if run.FileSize != 64<<20 || run.BS != 65536 || run.IODepth != 4 || !run.Direct {
		t.Fatalf("parsed %+v", run)
	}
	if want := FioFilesName(65536, "libaio", 4, 64<<20); run.Name() != want {
		t.Fatalf("name %s, want %s", run.Name(), want)
	}
	single, err := os.ReadFile("testdata/fio-libaio-qd4.json")
	if err != nil {
		t.Fatal(err)
	}
	one, err := ParseFio(single)
	if err != nil {
		t.Fatal(err)
	}
	if one.FileSize != 0 || one.Name() != FioName(65536, "libaio", 4) {
		t.Fatalf("single-file run %+v named %s", one, one.Name())
	}
	var buf bytes.Buffer
	if err := WriteFioBench(&buf, []FioRun{one, run}, nil); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("BenchmarkAppend/path=direct/flush=async/size=65536/conc=4-2 100 1000 ns/op 245 MB/s\n")
	s := NewSamples()
	if err := s.Read(&buf, "fio.txt"); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	var p3 []Ratio
	for _, r := range All(s) {
		if r.Target == "P3" {
			p3 = append(p3, r)
		}
	}
	if len(p3) != 2 {
		t.Fatalf("%d P3 ratios, want the single-file and the files ceiling: %+v", len(p3), p3)
	}
	files := p3[1]
	if !strings.Contains(files.Label, "fresh 67108864-byte files") || !near(files.Median, 245/round3(run.BWBytes/1e6)) {
		t.Fatalf("files ratio %+v (fio %.3f MB/s)", files, run.BWBytes/1e6)
	}
}

// Samples pair by row name and count index: a row whose line in one count
// lacks the unit (a percentile omitted for too few samples) or a row that
// ran fewer counts never shifts another row's pairs, whatever the order of
// the lines in the file.
func TestPairsByRowAndCountIndex(t *testing.T) {
	const in = `BenchmarkA/x=1 100 100 ns/op 5 p99-ns
BenchmarkB/x=1 100 200 ns/op
BenchmarkA/x=1 100 300 ns/op
BenchmarkC/x=1 100 7 ns/op
BenchmarkB/x=1 100 600 ns/op 8 p99-ns
BenchmarkA/x=1 100 500 ns/op 6 p99-ns
BenchmarkB/x=1 100 1500 ns/op 9 p99-ns
`
	s := NewSamples()
	if err := s.Read(strings.NewReader(in), "in.txt"); err != nil {
		t.Fatal(err)
	}
	r := Compute(s, Spec{Num: Quantity{Bench: "A/x=1", Unit: "ns/op"}, Den: Quantity{Bench: "B/x=1", Unit: "ns/op"}})
	if want := []float64{0.5, 0.5, 1.0 / 3}; !slices.Equal(r.Values, want) {
		t.Fatalf("ns/op ratios %v, want %v (count i of A over count i of B)", r.Values, want)
	}
	// p99: count 0 has no B value, count 1 no A value: only count 2 pairs.
	r = Compute(s, Spec{Num: Quantity{Bench: "A/x=1", Unit: "p99-ns"}, Den: Quantity{Bench: "B/x=1", Unit: "p99-ns"}})
	if want := []float64{6.0 / 9}; !slices.Equal(r.Values, want) {
		t.Fatalf("p99 ratios %v, want %v", r.Values, want)
	}
	// A row with one count pairs with the other's first count only.
	r = Compute(s, Spec{Num: Quantity{Bench: "C/x=1", Unit: "ns/op"}, Den: Quantity{Bench: "A/x=1", Unit: "ns/op"}})
	if want := []float64{0.07}; !slices.Equal(r.Values, want) {
		t.Fatalf("C/A ratios %v, want %v", r.Values, want)
	}
}

// TestRefusesUnequalWork checks that a ratio of two rows whose paired
// lines ran different N is refused with both names and counts, unless its
// Spec says why the work differs; and that a row over itself (limit-ops/s)
// is never refused.
func TestRefusesUnequalWork(t *testing.T) {
	in := `BenchmarkAppend/path=pwrite/flush=async/size=1024/conc=1-2 	 1000	 4000 ns/op
BenchmarkRawPath/path=pwrite/flush=async/size=1024/conc=1-2 	 1000	 3000 ns/op
BenchmarkAppend/path=pwrite/flush=async/size=1024/conc=1-2 	 1000	 4000 ns/op
BenchmarkRawPath/path=pwrite/flush=async/size=1024/conc=1-2 	 2000	 3000 ns/op
`
	s := NewSamples()
	if err := s.Read(strings.NewReader(in), "bench.txt"); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Target: "P1", Label: "x",
		Num: Quantity{Bench: "Append/path=pwrite/flush=async/size=1024/conc=1", Unit: "ns/op", Rate: true},
		Den: Quantity{Bench: "RawPath/path=pwrite/flush=async/size=1024/conc=1", Unit: "ns/op", Rate: true}}
	r := Compute(s, spec)
	if r.Verdict() != "missing" || !strings.Contains(r.Missing, "unequal work at count 2") ||
		!strings.Contains(r.Missing, "N=1000") || !strings.Contains(r.Missing, "N=2000") {
		t.Fatalf("unequal N not refused: %q", r.Missing)
	}
	spec.WorkVaries = "declared"
	if r := Compute(s, spec); r.Missing != "" || len(r.Values) != 2 {
		t.Fatalf("declared unequal work refused: %q %v", r.Missing, r.Values)
	}
	if got := s.Iters(spec.Den.Bench); !slices.Equal(got, []int{1000, 2000}) {
		t.Fatalf("Iters = %v", got)
	}
	// The cross-policy and fio ratios declare why their work differs.
	for _, sp := range Specs(readTestdata(t)) {
		cross := strings.Contains(sp.Label, "group÷async") || strings.Contains(sp.Label, "fio")
		if cross != (sp.WorkVaries != "") {
			t.Errorf("%s: WorkVaries %q", sp.Label, sp.WorkVaries)
		}
	}
}

// TestPassConfigIndexes checks that "pass: N" configuration lines place
// each line at count index N-1, so a row that failed in pass 2 pairs its
// pass-3 line with the other row's pass 3, not its pass 2.
func TestPassConfigIndexes(t *testing.T) {
	in := `pass: 1
BenchmarkAppend/path=pwrite/flush=async/size=1024/conc=1-2 	 1000	 4000 ns/op
BenchmarkRawPath/path=pwrite/flush=async/size=1024/conc=1-2 	 1000	 2000 ns/op
pass: 2
BenchmarkRawPath/path=pwrite/flush=async/size=1024/conc=1-2 	 1000	 3000 ns/op
pass: 3
BenchmarkAppend/path=pwrite/flush=async/size=1024/conc=1-2 	 1000	 6000 ns/op
BenchmarkRawPath/path=pwrite/flush=async/size=1024/conc=1-2 	 1000	 6000 ns/op
`
	s := NewSamples()
	if err := s.Read(strings.NewReader(in), "bench.txt"); err != nil {
		t.Fatal(err)
	}
	app := "Append/path=pwrite/flush=async/size=1024/conc=1"
	if got := s.Iters(app); !slices.Equal(got, []int{1000, 0, 1000}) {
		t.Fatalf("Append iters by pass %v", got)
	}
	if got := s.Get(app, "ns/op"); !slices.Equal(got, []float64{4000, 6000}) {
		t.Fatalf("Append ns/op %v", got)
	}
	r := Compute(s, Spec{Label: "x", Num: Quantity{Bench: app, Unit: "ns/op", Rate: true},
		Den: Quantity{Bench: "RawPath/path=pwrite/flush=async/size=1024/conc=1", Unit: "ns/op", Rate: true}})
	if r.Missing != "" || !slices.Equal(r.Values, []float64{0.5, 1}) {
		t.Fatalf("pairs %v (%s), want [0.5 1]: pass 1 with pass 1, pass 3 with pass 3", r.Values, r.Missing)
	}
}

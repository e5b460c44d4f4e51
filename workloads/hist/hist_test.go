package hist

import (
	"bufio"
	"bytes"
	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.UnixMilli(1_700_000_000_123) // deliberately not on a whole second

func within(got, want int64, rel float64) bool {
	return math.Abs(float64(got-want)) <= rel*float64(want)
}

func TestMergeAcrossRecorders(t *testing.T) {
	c := NewCollector(DefaultConfig())
	c.Start(t0, t0)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		r := c.NewRecorder()
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 1; i <= 1000; i++ { // each goroutine records 1..1000 µs
				r.RecordSized("service", time.Duration(i)*time.Microsecond, 100)
			}
			r.Add("errors", int64(g))
		}(g)
	}
	wg.Wait()
	iv := c.Tick(t0.Add(2 * time.Second))
	s := iv.Metrics["service"]
	if s.Count != 4000 || s.Bytes != 400000 {
		t.Fatalf("count %d bytes %d, want 4000 400000", s.Count, s.Bytes)
	}
	if s.Rate != 2000 || s.MBps != 0.2 {
		t.Fatalf("rate %v MB/s %v, want 2000 0.2", s.Rate, s.MBps)
	}
	if !within(s.P50, 500_000, 0.002) || !within(s.P99, 990_000, 0.002) || !within(s.Max, 1_000_000, 0.002) || !within(s.Min, 1000, 0.002) {
		t.Fatalf("percentiles: %+v", s)
	}
	if !(math.Abs(s.Mean-500_500) < 500) {
		t.Fatalf("mean %v", s.Mean)
	}
	if iv.Counters["errors"] != 0+1+2+3 {
		t.Fatalf("counters %v", iv.Counters)
	}
	// The recorders were drained: the next interval is empty, the summary
	// holds the first.
	iv2 := c.Tick(t0.Add(3 * time.Second))
	if iv2.Metrics["service"].Count != 0 {
		t.Fatalf("second interval count %d", iv2.Metrics["service"].Count)
	}
	sum := c.Summary()
	if got := sum.Metrics["service"]; got.Count != 4000 || got.Seconds != 3 || got.P50 != s.P50 {
		t.Fatalf("summary %+v", got)
	}
	if sum.Counters["errors"] != 6 {
		t.Fatalf("summary counters %v", sum.Counters)
	}
}

func TestRecordConcurrentWithTick(t *testing.T) {
	c := NewCollector(DefaultConfig())
	c.Start(t0, t0)
	const perGoroutine = 20000
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		r := c.NewRecorder()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perGoroutine; i++ {
				r.Record("x", time.Millisecond)
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	var total int64
	ticks := 0
	for finished := false; !finished; ticks++ {
		select {
		case <-done:
			finished = true
		default:
		}
		total += c.Tick(t0.Add(time.Duration(ticks+1) * time.Millisecond)).Metrics["x"].Count
	}
	if total != 3*perGoroutine {
		t.Fatalf("%d ticks saw %d samples, recorders took %d", ticks, total, 3*perGoroutine)
	}
}

func TestWarmupExcluded(t *testing.T) {
	c := NewCollector(DefaultConfig())
	var buf bytes.Buffer
	c.SetLog(&buf)
	c.Start(t0, t0.Add(time.Second))
	r := c.NewRecorder()
	for i := 0; i < 100; i++ {
		r.Record("e2e", time.Second) // warm-up: slow
	}
	r.Add("dups", 5)
	if c.Measuring() {
		t.Fatal("measuring during warm-up")
	}
	iv := c.EndWarmup(t0.Add(time.Second))
	if !iv.Warmup || iv.Metrics["e2e"].Count != 100 {
		t.Fatalf("warm-up interval: %+v", iv)
	}
	for i := 0; i < 50; i++ {
		r.Record("e2e", time.Millisecond)
	}
	iv = c.Tick(t0.Add(2 * time.Second))
	if iv.Warmup || iv.Metrics["e2e"].Count != 50 {
		t.Fatalf("measured interval: %+v", iv)
	}
	s := c.Summary()
	if e := s.Metrics["e2e"]; e.Count != 50 || e.Max > int64(2*time.Millisecond) || e.Seconds != 1 {
		t.Fatalf("summary includes warm-up: %+v", e)
	}
	if s.Counters["dups"] != 0 || !s.Start.Equal(t0.Add(time.Second)) {
		t.Fatalf("summary %+v", s)
	}
	ivs, err := ReadLog(&buf)
	if err != nil || len(ivs) != 1 || ivs[0].Hist.TotalCount() != 50 {
		t.Fatalf("log holds warm-up: %d intervals, err %v", len(ivs), err)
	}
}

func TestHlogRoundTrip(t *testing.T) {
	c := NewCollector(DefaultConfig())
	var buf bytes.Buffer
	c.SetLog(&buf)
	c.Start(t0, t0)
	r := c.NewRecorder()
	want := map[string][]int64{} // tag -> counts per interval
	for i := 1; i <= 3; i++ {
		for v := 0; v < 100*i; v++ {
			r.Record("service", time.Duration(v+1)*time.Microsecond)
		}
		for v := 0; v < 10*i; v++ {
			r.Record("send_delay", time.Duration(v+1)*time.Millisecond)
		}
		want["service"] = append(want["service"], int64(100*i))
		want["send_delay"] = append(want["send_delay"], int64(10*i))
		c.Tick(t0.Add(time.Duration(i) * time.Second))
	}
	if err := c.LogErr(); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, s := range []string{"#[Histogram log format version 1.3]", "#[StartTime: 1700000000 ", "#[BaseTime: 1700000000 (seconds since epoch)]", "\"StartTimestamp\"", "Tag=service,0.123000,1.000000,"} {
		if !strings.Contains(text, s) {
			t.Fatalf(".hlog lacks %q:\n%s", s, text)
		}
	}

	ivs, err := ReadLog(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 6 {
		t.Fatalf("read %d intervals, want 6", len(ivs))
	}
	seen := map[string]int{}
	for _, iv := range ivs {
		k := seen[iv.Tag]
		seen[iv.Tag]++
		if got := iv.Hist.TotalCount(); got != want[iv.Tag][k] {
			t.Fatalf("%s interval %d: count %d want %d", iv.Tag, k, got, want[iv.Tag][k])
		}
		wantStart := t0.Add(time.Duration(k) * time.Second)
		if d := iv.Start.Sub(wantStart); d < -time.Millisecond || d > time.Millisecond {
			t.Fatalf("%s interval %d: start %v want %v", iv.Tag, k, iv.Start, wantStart)
		}
		if d := iv.End.Sub(iv.Start); d < 999*time.Millisecond || d > 1001*time.Millisecond {
			t.Fatalf("%s interval %d: length %v", iv.Tag, k, d)
		}
	}
	for _, tag := range []string{"service", "send_delay"} {
		merged, dropped := MergeLogged(ivs, tag, time.Time{}, time.Time{}, DefaultConfig())
		if dropped != 0 || !merged.Equals(c.Histogram(tag)) {
			t.Fatalf("%s: merged log (%d values) differs from cumulative (%d)", tag, merged.TotalCount(), c.Histogram(tag).TotalCount())
		}
	}
	// A time range selects intervals by start.
	part, _ := MergeLogged(ivs, "service", t0.Add(500*time.Millisecond), t0.Add(2500*time.Millisecond), DefaultConfig())
	if part.TotalCount() != 200+300 {
		t.Fatalf("range merge: %d", part.TotalCount())
	}
}

func TestHgrmPercentiles(t *testing.T) {
	c := NewCollector(DefaultConfig())
	c.Start(t0, t0)
	r := c.NewRecorder()
	for i := 1; i <= 10000; i++ {
		r.Record("response", time.Duration(i)*time.Microsecond) // 1µs..10ms
	}
	c.Tick(t0.Add(time.Second))
	dir := t.TempDir()
	paths, err := c.WriteHgrmFiles(dir, "latency-")
	if err != nil || len(paths) != 1 || paths[0] != filepath.Join(dir, "latency-response.hgrm") {
		t.Fatalf("paths %v err %v", paths, err)
	}
	f, err := os.Open(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]float64{} // percentile column -> value (ms)
	var lastInv string
	var footer []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			footer = append(footer, line)
			continue
		}
		fs := strings.Fields(line)
		if len(fs) != 4 || fs[0] == "Value" {
			continue
		}
		v, err := strconv.ParseFloat(fs[0], 64)
		if err != nil {
			t.Fatalf("row %q", line)
		}
		rows[fs[1]] = v
		lastInv = fs[3]
	}
	for pct, wantMs := range map[string]float64{"0.500000": 5, "0.900000": 9, "0.750000": 7.5, "1.000000": 10} {
		got, ok := rows[pct]
		if !ok {
			t.Fatalf("no %s row in .hgrm", pct)
		}
		if math.Abs(got-wantMs)/wantMs > 0.002 {
			t.Fatalf("p%s = %.3f ms, want %v ±0.2%%", pct, got, wantMs)
		}
	}
	if lastInv != "inf" {
		t.Fatalf("last row's 1/(1-p) = %q, want inf", lastInv)
	}
	if len(footer) != 3 || !strings.Contains(footer[1], "Total count    =        10000") {
		t.Fatalf("footer %q", footer)
	}
}

func TestClampAndNames(t *testing.T) {
	c := NewCollector(DefaultConfig())
	c.Start(t0, t0)
	r := c.NewRecorder()
	r.Record("flush", 2*time.Minute)
	r.Record("flush", -time.Second)
	r.Record("my metric", time.Millisecond)
	r.Record("my_metric", time.Millisecond)
	iv := c.Tick(t0.Add(time.Second))
	f := iv.Metrics["flush"]
	if f.Count != 2 || f.Clamped != 1 || !within(f.Max, int64(60*time.Second), 0.001) || f.Min != 0 {
		t.Fatalf("flush %+v", f)
	}
	if m := iv.Metrics["my_metric"]; m.Count != 2 || len(iv.Metrics) != 2 {
		t.Fatalf("metrics %v", iv.Metrics)
	}
	if got := MetricName("a,b c\n"); got != "a_b_c_" {
		t.Fatalf("MetricName %q", got)
	}
}

func TestRecordCorrected(t *testing.T) {
	c := NewCollector(DefaultConfig())
	c.Start(t0, t0)
	r := c.NewRecorder()
	for i := 0; i < 999; i++ {
		r.RecordCorrected("svc", 500*time.Microsecond, time.Millisecond)
	}
	r.RecordCorrected("svc", 100*time.Millisecond, time.Millisecond)
	s := c.Tick(t0.Add(time.Second)).Metrics["svc"]
	// measurement.md §6.1 worked example: 1099 values, p99 jumps to ~89 ms.
	if s.Count != 1099 || !within(s.P99, int64(89*time.Millisecond), 0.02) {
		t.Fatalf("%+v", s)
	}
}

func TestFormat(t *testing.T) {
	for ns, want := range map[int64]string{850: "850ns", 412_000: "412µs", 2_100_000: "2.10ms", 31_000_000: "31.0ms", 1_270_000_000: "1.27s"} {
		if got := FormatNs(ns); got != want {
			t.Fatalf("FormatNs(%d) = %q want %q", ns, got, want)
		}
	}
	s := Snapshot{Metric: "service", Count: 1, Rate: 2000, Bytes: 1, MBps: 2.048, P50: 412_000, P99: 2_100_000, P999: 7_900_000, Max: 31_000_000}
	if got := s.String(); got != "service 2000/s 2.05MB/s p50 412µs p99 2.10ms p99.9 7.90ms max 31.0ms" {
		t.Fatalf("%q", got)
	}
}

func TestExplicitPhases(t *testing.T) {
	c := NewCollector(DefaultConfig())
	var buf bytes.Buffer
	c.SetLog(&buf)
	measureFrom := t0.Add(time.Second)
	c.Start(t0, measureFrom)
	r := c.NewRecorder()
	if PhaseOf(t0, measureFrom) != Warmup || PhaseOf(measureFrom, measureFrom) != Measured {
		t.Fatal("PhaseOf")
	}
	for i := 0; i < 10; i++ {
		r.In(Measured).Record("response", time.Millisecond) // due after warm-up, acked early
	}
	for i := 0; i < 5; i++ {
		r.In(Warmup).Record("response", time.Second) // due in warm-up, acked late
	}
	r.Record("flush", time.Millisecond) // Auto during warm-up
	r.In(Measured).Add("send_errors", 1)
	r.In(Warmup).Add("send_errors", 100)
	iv := c.Tick(t0.Add(500 * time.Millisecond))
	if !iv.Warmup || iv.Metrics["response"].Count != 15 || iv.Counters["send_errors"] != 101 {
		t.Fatalf("first interval shows everything: %+v", iv)
	}
	iv = c.EndWarmup(measureFrom.Add(10 * time.Millisecond))
	if !iv.Warmup || !c.Measuring() {
		t.Fatalf("boundary interval %+v", iv)
	}
	r.Record("flush", time.Millisecond) // Auto, measured now
	r.In(Warmup).Record("response", time.Second)
	iv = c.Tick(measureFrom.Add(time.Second))
	if iv.Warmup {
		t.Fatal("interval after the boundary flagged warm-up")
	}
	s := c.Summary()
	if s.Metrics["response"].Count != 10 || s.Metrics["response"].Max > int64(2*time.Millisecond) {
		t.Fatalf("response summary %+v", s.Metrics["response"])
	}
	if s.Metrics["flush"].Count != 1 || s.Counters["send_errors"] != 1 {
		t.Fatalf("summary %+v", s)
	}
	ivs, err := ReadLog(&buf)
	if err != nil {
		t.Fatal(err)
	}
	merged, _ := MergeLogged(ivs, "response", time.Time{}, time.Time{}, DefaultConfig())
	if !merged.Equals(c.Histogram("response")) {
		t.Fatalf(".hlog holds %d response samples, cumulative %d", merged.TotalCount(), c.Histogram("response").TotalCount())
	}
	for _, iv := range ivs {
		if iv.Start.Before(measureFrom.Add(-time.Millisecond)) {
			t.Fatalf(".hlog line starts %v, before measuring %v", iv.Start, measureFrom)
		}
	}
}

// A tick whose time precedes the previous one (a ticker's value queued
// behind the end of warm-up) closes an empty interval instead of one that
// runs backwards, so every interval reaches the .hlog and the log sums to
// the measured totals.
func TestTickNeverRunsBackwards(t *testing.T) {
	c := NewCollector(DefaultConfig())
	var log bytes.Buffer
	c.SetLog(&log)
	t0 := time.Unix(1_800_000_000, 0)
	c.Start(t0, t0.Add(100*time.Millisecond))
	r := c.NewRecorder()
	r.Record("service", time.Microsecond) // warm-up: not measured
	c.EndWarmup(t0.Add(105 * time.Millisecond))
	r.Record("service", 2*time.Microsecond)
	iv := c.Tick(t0.Add(100 * time.Millisecond)) // queued before the warm-up ended
	if iv.End.Before(iv.Start) {
		t.Fatalf("interval runs backwards: %v → %v", iv.Start, iv.End)
	}
	r.Record("service", 3*time.Microsecond)
	c.Tick(t0.Add(200 * time.Millisecond))
	if strings.Contains(log.String(), ",-") {
		t.Fatalf("negative interval length in the .hlog:\n%s", log.String())
	}
	sum := c.Summary().Metrics["service"].Count
	lr := hdr.NewHistogramLogReader(&log)
	var logged int64
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		logged += h.TotalCount()
	}
	if logged != sum || sum != 2 {
		t.Fatalf(".hlog holds %d samples, summary %d, want 2 measured", logged, sum)
	}
}

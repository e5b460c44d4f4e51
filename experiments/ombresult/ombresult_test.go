package ombresult

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brokerlab/brokerlab/workloads/hist"
)

// samplePath is a result in OMB's TestResult shape, written by hand from
// TestResult.java's fields (Jackson's order and number forms, quantile keys
// as Java doubles); no number in it was measured.
const samplePath = "testdata/omb-sample-result.json"

func sampleKeys(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSampleDecodesStrictly reads OMB's shape with unknown fields refused
// and checks that TestResult has exactly OMB's field set.
func TestSampleDecodesStrictly(t *testing.T) {
	b, err := os.ReadFile(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r TestResult
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("OMB sample does not decode into TestResult: %v", err)
	}
	if r.Driver != "RocketMQ" || r.Partitions != 16 || r.PublishDelayLatency99pct[1] != 13 || len(r.AggregatedPublishLatencyQuantiles) != 8 {
		t.Fatalf("decoded %+v", r)
	}
	if q := r.AggregatedPublishLatencyQuantiles; q[len(q)-1].Percentile != 100 || q[len(q)-1].Value != 31.212 {
		t.Fatalf("quantile map decoded as %v", q)
	}
	out, err := json.Marshal(Build(Meta{Workload: "w", Driver: "d"}, Input{}))
	if err != nil {
		t.Fatal(err)
	}
	var ours map[string]json.RawMessage
	if err := json.Unmarshal(out, &ours); err != nil {
		t.Fatal(err)
	}
	want, got := keys(sampleKeys(t)), keys(ours)
	if !slices.Equal(want, got) {
		t.Fatalf("field sets differ:\nOMB  %v\nours %v", want, got)
	}
}

func keys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestRoundTrip writes the sample through Write and reads it back equal,
// with the quantile keys in Java's form.
func TestRoundTrip(t *testing.T) {
	r, err := Read(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "r.json")
	if err := Write(p, r); err != nil {
		t.Fatal(err)
	}
	back, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, back) {
		t.Fatalf("round trip changed the result:\n%+v\n%+v", r, back)
	}
	b, _ := os.ReadFile(p)
	for _, k := range []string{`"50.0":`, `"99.99":`, `"100.0":`} {
		if !bytes.Contains(b, []byte(k)) {
			t.Errorf("written file lacks the Java-form key %s", k)
		}
	}
	if _, err := Read(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing file read without error")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"x":1}`), 0o644)
	if _, err := Read(bad); err == nil {
		t.Error("a non-OMB file read without error")
	}
}

func TestJavaDouble(t *testing.T) {
	for v, want := range map[float64]string{0: "0.0", 50: "50.0", 99.99: "99.99", 100: "100.0", 87.5: "87.5", 99.99990463256836: "99.99990463256836"} {
		if got := JavaDouble(v); got != want {
			t.Errorf("JavaDouble(%v) = %q, want %q", v, got, want)
		}
	}
}

// synthetic records 25 one-second intervals: 100 publishes at 2 ms, 100
// publish delays of 3 µs and 90 receipts at 5 ms each second.
func synthetic(t *testing.T) []hist.LoggedInterval {
	t.Helper()
	t0 := time.UnixMilli(1_700_000_000_000)
	var ivs []hist.LoggedInterval
	for i := range 25 {
		s, e := t0.Add(time.Duration(i)*time.Second), t0.Add(time.Duration(i+1)*time.Second)
		for _, m := range []struct {
			tag string
			v   time.Duration
			n   int
		}{{TagPublish, 2 * time.Millisecond, 100}, {TagDelay, 3 * time.Microsecond, 100}, {TagE2E, 5 * time.Millisecond, 90}} {
			h := hdr.New(1, int64(60*time.Second), 3)
			for range m.n {
				if err := h.RecordValue(int64(m.v)); err != nil {
					t.Fatal(err)
				}
			}
			ivs = append(ivs, hist.LoggedInterval{Tag: m.tag, Start: s, End: e, Hist: h})
		}
	}
	return ivs
}

func near(a, b float64) bool { return math.Abs(a-b) <= 0.001*math.Max(math.Abs(b), 1e-9) }

// TestBuildUnitsAndPeriods checks OMB's units (ms, µs, msg/s, messages)
// and its 10 s periods on a recording with known values.
func TestBuildUnitsAndPeriods(t *testing.T) {
	r := Build(Meta{Workload: "w", Driver: "brokerlab", Subscriptions: 1},
		Input{Intervals: synthetic(t), Errors: []ErrorsAt{{At: 3, Count: 5}, {At: 10, Count: 10}, {At: 21, Count: 4}}})
	if len(r.PublishRate) != 3 {
		t.Fatalf("periods = %d, want 3 (10 s, 10 s, 5 s)", len(r.PublishRate))
	}
	for i, rate := range r.PublishRate {
		if !near(rate, 100) || !near(r.ConsumeRate[i], 90) {
			t.Errorf("period %d: publish %v consume %v msg/s, want 100 and 90", i, rate, r.ConsumeRate[i])
		}
		if !near(r.PublishLatency50pct[i], 2) || !near(r.PublishLatencyMax[i], 2) || !near(r.PublishLatencyAvg[i], 2) {
			t.Errorf("period %d: publish latency %v ms, want 2", i, r.PublishLatency50pct[i])
		}
		if r.PublishDelayLatency99pct[i] != 3 {
			t.Errorf("period %d: publish delay %v µs, want 3", i, r.PublishDelayLatency99pct[i])
		}
		if !near(r.EndToEndLatency95pct[i], 5) {
			t.Errorf("period %d: e2e %v ms, want 5", i, r.EndToEndLatency95pct[i])
		}
	}
	if want := []int64{100, 200, 250}; !slices.Equal(r.Backlog, want) {
		t.Errorf("backlog = %v, want %v (10 unreceived per second)", r.Backlog, want)
	}
	if want := []float64{1.5, 0, 0.8}; !slices.EqualFunc(r.PublishErrorRate, want, near) {
		t.Errorf("error rate = %v, want %v", r.PublishErrorRate, want)
	}
	if !near(r.AggregatedPublishLatency99pct, 2) || r.AggregatedPublishDelayLatency50pct != 3 || !near(r.AggregatedEndToEndLatencyMax, 5) {
		t.Errorf("aggregates: pub p99 %v ms, delay p50 %v µs, e2e max %v ms", r.AggregatedPublishLatency99pct,
			r.AggregatedPublishDelayLatency50pct, r.AggregatedEndToEndLatencyMax)
	}
	q := r.AggregatedPublishLatencyQuantiles
	if len(q) < 2 || q[0].Percentile != 0 || q[len(q)-1].Percentile != 100 || !near(q[len(q)-1].Value, 2) {
		t.Errorf("publish quantiles = %v", q)
	}
}

// TestChartFields checks every field OMB's bin/create_charts.py reads, in
// a result Build wrote and in the OMB sample: strings for the grouping,
// non-empty numeric series (the script takes their max), and quantile maps
// whose keys parse as percentiles in [0,100] with numeric values.
func TestChartFields(t *testing.T) {
	var b bytes.Buffer
	built := Build(Meta{Workload: "1 topic / 16 partitions / 1Kb", Driver: "brokerlab", Subscriptions: 1}, Input{Intervals: synthetic(t)})
	if err := json.NewEncoder(&b).Encode(built); err != nil {
		t.Fatal(err)
	}
	sample, err := os.ReadFile(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string][]byte{"built": b.Bytes(), "sample": sample} {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"workload", "driver"} {
			if s, ok := m[k].(string); !ok || s == "" {
				t.Errorf("%s: %s = %v, want a non-empty string", name, k, m[k])
			}
		}
		for _, k := range []string{"publishLatency99pct", "publishDelayLatency99pct", "publishRate", "publishErrorRate",
			"endToEndLatency95pct", "consumeRate", "endToEndLatencyAvg"} {
			arr, ok := m[k].([]any)
			if !ok || len(arr) == 0 {
				t.Errorf("%s: %s = %v, want a non-empty array", name, k, m[k])
				continue
			}
			for _, v := range arr {
				if _, ok := v.(float64); !ok {
					t.Errorf("%s: %s holds %T", name, k, v)
				}
			}
		}
		for _, k := range []string{"aggregatedPublishLatencyQuantiles", "aggregatedPublishDelayLatencyQuantiles", "aggregatedEndToEndLatencyQuantiles"} {
			qm, ok := m[k].(map[string]any)
			if !ok || len(qm) == 0 {
				t.Errorf("%s: %s = %v, want a non-empty object", name, k, m[k])
				continue
			}
			for pk, v := range qm {
				p, err := strconv.ParseFloat(pk, 64)
				if err != nil || p < 0 || p > 100 {
					t.Errorf("%s: %s key %q is not a percentile", name, k, pk)
				}
				if _, ok := v.(float64); !ok {
					t.Errorf("%s: %s[%s] holds %T", name, k, pk, v)
				}
			}
		}
		// OMB's delay series and delay quantiles are integer µs (Java longs).
		for _, v := range m["publishDelayLatency99pct"].([]any) {
			if f := v.(float64); f != math.Trunc(f) {
				t.Errorf("%s: publishDelayLatency99pct holds %v, want whole µs", name, f)
			}
		}
	}
}

// TestEmptyRecording is OMB's empty-histogram convention: no periods, zero
// aggregates, empty maps, and JSON arrays rather than null.
func TestEmptyRecording(t *testing.T) {
	r := Build(Meta{Workload: "w", Driver: "d"}, Input{})
	b, _ := json.Marshal(r)
	if bytes.Contains(b, []byte("null")) {
		t.Fatalf("empty result has null fields: %s", b)
	}
	if r.AggregatedPublishLatency99pct != 0 || len(r.PublishRate) != 0 {
		t.Fatalf("empty result = %+v", r)
	}
}

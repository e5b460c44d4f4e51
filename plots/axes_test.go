package plots

import (
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/result"
)

func TestPercentileTicks(t *testing.T) {
	var got []string
	for _, tk := range percentileTicks(1, 1e5) {
		got = append(got, tk.Label)
	}
	want := []string{"0%", "50%", "90%", "99%", "99.9%", "99.99%", "99.999%"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("labels %v, want %v", got, want)
	}
	if n := len(percentileTicks(5, 500)); n != 2 { // 10 → 90%, 100 → 99%
		t.Fatalf("ticks in [5,500]: %d", n)
	}
}

func TestLog125Ticks(t *testing.T) {
	var labelled []string
	for _, tk := range log125Ticks(0.8, 60) {
		if tk.Label != "" {
			labelled = append(labelled, tk.Label)
		}
	}
	if want := []string{"1", "2", "5", "10", "20", "50"}; !reflect.DeepEqual(labelled, want) {
		t.Fatalf("labels %v, want %v", labelled, want)
	}
	if ts := log125Ticks(3.1, 3.9); len(ts) != 2 || ts[0].Label == "" {
		t.Fatalf("narrow range: %v", ts)
	}
	for _, bad := range [][2]float64{{0, 10}, {-1, 10}, {10, 1}} {
		if ts := log125Ticks(bad[0], bad[1]); ts != nil {
			t.Errorf("log125Ticks(%v) = %v, want none", bad, ts)
		}
	}
}

func TestPow2Ticks(t *testing.T) {
	var got []string
	for _, tk := range pow2Ticks(formatBytesIEC)(8<<20/1.2, (1<<30)*1.2) {
		got = append(got, tk.Label)
	}
	want := []string{"8MiB", "16MiB", "32MiB", "64MiB", "128MiB", "256MiB", "512MiB", "1GiB"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("labels %v, want %v", got, want)
	}
	if ts := pow2Ticks(formatNumber)(0, 8); ts != nil {
		t.Fatalf("non-positive range gave %v", ts)
	}
}

func TestParsers(t *testing.T) {
	for s, want := range map[string]float64{"8MiB": 8 << 20, "1GiB": 1 << 30, "64M": 64 << 20, "4KB": 4000, "4096": 4096, "1.5KiB": 1536, "2gib": 2 << 30} {
		if got, ok := parseBytes(s); !ok || got != want {
			t.Errorf("parseBytes(%q) = %v %v, want %v", s, got, ok, want)
		}
	}
	for _, bad := range []string{"", "MiB", "-1MiB", "x", "NaN"} {
		if _, ok := parseBytes(bad); ok {
			t.Errorf("parseBytes(%q) accepted", bad)
		}
	}
	for s, want := range map[string]float64{"50k": 50000, "64": 64, "1.5M": 1.5e6, "0": 0} {
		if got, ok := parseCount(s); !ok || got != want {
			t.Errorf("parseCount(%q) = %v %v", s, got, ok)
		}
	}
	if _, ok := parseCount("max"); ok {
		t.Error("parseCount(max) accepted")
	}
	for _, ns := range []float64{500, 2500, 3e6, 2e9} { // one unit everywhere: ms
		if div, got := latencyUnit(ns); got != "ms" || div != 1e6 {
			t.Errorf("latencyUnit(%v) = %v %s", ns, div, got)
		}
	}
	// Log-axis labels keep their significant digits: no "0.001" twice.
	for v, want := range map[float64]string{0.0012: "0.0012", 0.001: "0.001", 0.002: "0.002", 0.005: "0.005", 12.5: "12.5", 0.25: "0.25"} {
		if got := formatNumber(v); got != want {
			t.Errorf("formatNumber(%v) = %s, want %s", v, got, want)
		}
	}
	for v, want := range map[float64]string{1500: "1.5k", 2e6: "2M", 0.25: "0.25", 40000: "40k"} {
		if got := formatNumber(v); got != want {
			t.Errorf("formatNumber(%v) = %s", v, got)
		}
	}
}

func TestRepresentativesPickMedianRep(t *testing.T) {
	cs := []result.Cell{
		cell(result.SystemBrokerlab, "a=1", 0, 100, 1000, 5), // p99 highest
		cell(result.SystemBrokerlab, "a=1", 1, 100, 1000, 1), // lowest
		cell(result.SystemBrokerlab, "a=1", 2, 100, 1000, 3), // median
		cell(result.SystemFio, "a=1", 0, 100, 1000, 1),       // a different system
		cell(result.SystemBrokerlab, "a=2", 0, 100, 1000, 1),
	}
	cs[4].Error = "aborted"
	got := representatives(cs)
	if len(got) != 2 || got[0].Rep != 2 || got[1].System != result.SystemFio {
		t.Fatalf("representatives: %+v", got)
	}
}

func TestSelectorsAndNames(t *testing.T) {
	c := cell(result.SystemBrokerlab, "path=mmap/rate=100", 0, 500, 1000, 1)
	c.Quantiles["append"] = result.Quantiles{P99: 42}
	c.Extra = map[string]float64{"majflt": 3}
	for metric, want := range map[string]float64{"msg/s": 500, "MB/s": c.MBPerSec * 1e6 / (1 << 20), "p50": c.Quantiles["e2e"].P50, "append.p99": 42, "majflt": 3} {
		if got, ok := parseSelector(metric).cell(&c); !ok || got != want {
			t.Errorf("selector %q = %v %v, want %v", metric, got, ok, want)
		}
	}
	if _, ok := parseSelector("flush.p99").cell(&c); ok {
		t.Error("missing metric selected")
	}
	if got := nameWithout("path=mmap/flush=group/rate=100/size=1024", "rate"); got != "path=mmap/flush=group/size=1024" {
		t.Errorf("nameWithout = %q", got)
	}
	if got := groupLabel(result.SystemNATS, "rate=5", "rate"); got != "nats" {
		t.Errorf("groupLabel = %q", got)
	}
	if got := safeName("msg/s"); got != "msg_s" {
		t.Errorf("safeName = %q", got)
	}
}

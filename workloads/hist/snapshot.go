package hist

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Snapshot summarises one metric over a span of time. Latencies are in ns.
// MBps is decimal (1e6 bytes per second), as in Go benchmark output.
type Snapshot struct {
	Metric  string  `json:"metric"`
	Count   int64   `json:"count"`
	Seconds float64 `json:"seconds"`
	Rate    float64 `json:"rate_per_sec"`
	Bytes   int64   `json:"bytes"`
	MBps    float64 `json:"mb_per_sec"`
	Min     int64   `json:"min_ns"`
	Mean    float64 `json:"mean_ns"`
	P50     int64   `json:"p50_ns"`
	P90     int64   `json:"p90_ns"`
	P99     int64   `json:"p99_ns"`
	P999    int64   `json:"p99_9_ns"`
	P9999   int64   `json:"p99_99_ns"`
	Max     int64   `json:"max_ns"`
	Clamped int64   `json:"clamped,omitempty"` // samples above Config.Highest, recorded as Highest
}

// snapshotPercentiles are the percentiles (in percent, as the library wants).
var snapshotPercentiles = []float64{50, 90, 99, 99.9, 99.99}

// SnapshotOf summarises h; bytes and seconds give the rates (0 seconds: no
// rates).
func SnapshotOf(metric string, h *hdr.Histogram, bytes int64, seconds float64) Snapshot {
	s := Snapshot{Metric: metric, Count: h.TotalCount(), Seconds: seconds, Bytes: bytes}
	if seconds > 0 {
		s.Rate = float64(s.Count) / seconds
		s.MBps = float64(bytes) / 1e6 / seconds
	}
	if s.Count == 0 {
		return s
	}
	p := h.ValueAtPercentilesSlice(snapshotPercentiles)
	s.P50, s.P90, s.P99, s.P999, s.P9999 = p[0], p[1], p[2], p[3], p[4]
	s.Min, s.Mean, s.Max = h.Min(), h.Mean(), h.Max()
	return s
}

// String is a compact progress-line fragment, e.g.
// "service 2000/s 2.05MB/s p50 412µs p99 2.1ms p99.9 7.9ms max 31ms".
func (s Snapshot) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s/s", s.Metric, strconv.FormatFloat(s.Rate, 'f', 0, 64))
	if s.Bytes > 0 {
		fmt.Fprintf(&b, " %.2fMB/s", s.MBps)
	}
	if s.Count > 0 {
		fmt.Fprintf(&b, " p50 %s p99 %s p99.9 %s max %s",
			FormatNs(s.P50), FormatNs(s.P99), FormatNs(s.P999), FormatNs(s.Max))
	}
	return b.String()
}

// FormatNs prints a latency with 2-3 significant digits: 850ns, 412µs,
// 2.1ms, 1.27s.
func FormatNs(ns int64) string {
	d := time.Duration(ns)
	var v float64
	var unit string
	switch {
	case d < time.Microsecond:
		return strconv.FormatInt(ns, 10) + "ns"
	case d < time.Millisecond:
		v, unit = float64(ns)/1e3, "µs"
	case d < time.Second:
		v, unit = float64(ns)/1e6, "ms"
	default:
		v, unit = float64(ns)/1e9, "s"
	}
	prec := 0
	switch {
	case v < 10:
		prec = 2
	case v < 100:
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + unit
}

// Interval is what one tick closed.
type Interval struct {
	Start    time.Time           `json:"start"`
	End      time.Time           `json:"end"`
	Warmup   bool                `json:"warmup,omitempty"`
	Metrics  map[string]Snapshot `json:"metrics"`
	Counters map[string]int64    `json:"counters,omitempty"`
}

// Summary is the measured whole-run result.
type Summary struct {
	Start    time.Time           `json:"start"`
	End      time.Time           `json:"end"`
	Metrics  map[string]Snapshot `json:"metrics"`
	Counters map[string]int64    `json:"counters,omitempty"`
}

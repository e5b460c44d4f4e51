package result

import (
	"math"
	"time"
)

// Systems: the value of Cell.System. Peer cells (a fio device ceiling, the
// embedded NATS JetStream) share the result format with brokerlab's own.
const (
	SystemBrokerlab = "brokerlab"
	SystemFio       = "fio"
	SystemNATS      = "nats"
)

// Conventional parameter keys of cell names. The runner may use others; the
// figures look for these.
const (
	ParamPath     = "path"     // write path: mmap | pwrite | pool | direct
	ParamFlush    = "flush"    // flush policy: sync | async | group
	ParamSize     = "size"     // message size in bytes (plain integer or 1KiB style)
	ParamConc     = "conc"     // producer concurrency
	ParamRate     = "rate"     // open-loop target rate, msg/s (0 or absent = closed loop)
	ParamSeg      = "seg"      // segment size (8MiB style or bytes)
	ParamPrealloc = "prealloc" // segment pre-allocation: on | off
	ParamWarm     = "warm"     // segment warm-up: on | off
)

// Well-known marker kinds.
const (
	MarkerRoll  = "roll"  // a segment roll
	MarkerStall = "stall" // an injected or observed stall
)

// Cell is one measured configuration in one repetition.
type Cell struct {
	// Name is benchstat style: key=value parts joined by "/", e.g.
	// "path=mmap/flush=group/size=1024/conc=64". No spaces.
	Name string `json:"name"`
	// Params is Name parsed; filled by Normalize when nil.
	Params map[string]string `json:"params,omitempty"`
	// System is SystemBrokerlab (the default when empty), SystemFio or SystemNATS.
	System string `json:"system"`
	// Op names the operation in bench.txt: Benchmark<Op>/<Name>. Default "Produce".
	Op string `json:"op,omitempty"`
	// Rep is the repetition index (0-based); cells with equal System and
	// Name are repetitions of one configuration.
	Rep int `json:"rep"`
	// Order is the cell's position in its repetition (the order is shuffled
	// per repetition from the seed).
	Order int `json:"order"`
	// Error is non-empty for a failed or interrupted cell; its numbers are
	// partial and Aggregate ignores it.
	Error string `json:"error,omitempty"`

	Duration  time.Duration `json:"duration_ns"` // measured phase, warm-up excluded
	Ops       int64         `json:"ops"`         // messages (or I/Os for fio)
	Bytes     int64         `json:"bytes"`       // payload bytes
	MsgPerSec float64       `json:"msg_per_sec"`
	MBPerSec  float64       `json:"mb_per_sec"` // decimal MB (1e6 bytes), like Go's MB/s

	// Sends of the measured phase: Attempted = Acked + Failed, and Failed
	// by code (FLUSH_DISK_TIMEOUT, SYSTEM_BUSY, TIMEOUT, OTHER, …). Ops and
	// the throughput count the acknowledged sends only; the latency
	// quantiles include the failed ones (Quantiles.Failed).
	Attempted    int64            `json:"sends_attempted"`
	Acked        int64            `json:"sends_acked"`
	Failed       int64            `json:"sends_failed"`
	FailedByCode map[string]int64 `json:"sends_failed_by_code,omitempty"`
	// OfferedRate is an open-loop cell's offered rate (msg/s; 0 in closed
	// loop). Saturated marks an open-loop cell whose acknowledged rate was
	// below SaturationShare of it: its latency grows with the run's length
	// and no latency ratio is taken over it.
	OfferedRate float64 `json:"offered_rate,omitempty"`
	Saturated   bool    `json:"saturated,omitempty"`

	// ServerCPUSeconds is the CPU time (user + system) the server process
	// spent in the measured window (warm-up excluded), from utime + stime
	// of /proc/<pid>/stat at the window's start and end; measured only when
	// the server runs in a child process (transport: process), 0 otherwise.
	ServerCPUSeconds float64 `json:"server_cpu_s,omitempty"`
	// ServerCPUMicrosPerMsg is ServerCPUSeconds in µs divided by the
	// messages acknowledged in the window (Ops); 0 when not measured.
	ServerCPUMicrosPerMsg float64 `json:"server_cpu_us_per_msg,omitempty"`

	// Primary names the Quantiles entry used for bench.txt's p50-ns/p99-ns/
	// p999-ns and for headline figures. When empty, the alphabetically first
	// metric is used.
	Primary string `json:"primary_metric,omitempty"`
	// Quantiles maps a latency metric ("e2e", "append", "flush", "delay", …)
	// to its whole-run quantiles in nanoseconds.
	Quantiles map[string]Quantiles `json:"quantiles,omitempty"`
	// Spectrum maps a latency metric to its percentile spectrum, so figures
	// need not parse .hgrm text. Points are sorted by Percentile.
	Spectrum map[string][]SpectrumPoint `json:"spectrum,omitempty"`

	Series       []Point            `json:"series,omitempty"`  // interval time series
	Markers      []Marker           `json:"markers,omitempty"` // events on the time axis
	Residency    *Residency         `json:"residency,omitempty"`
	FlushBatches []BatchBucket      `json:"flush_batches,omitempty"` // group-commit batch sizes
	Extra        map[string]float64 `json:"extra,omitempty"`         // any other scalar metric

	Files CellFiles `json:"files"`
}

// Quantiles of one latency metric over the whole measured phase, in ns.
type Quantiles struct {
	P50   float64 `json:"p50_ns"`
	P90   float64 `json:"p90_ns"`
	P99   float64 `json:"p99_ns"`
	P999  float64 `json:"p999_ns"`
	P9999 float64 `json:"p9999_ns"`
	Max   float64 `json:"max_ns"`
	Mean  float64 `json:"mean_ns"`
	Count int64   `json:"count"`
	// Failed is how many of Count are failed sends, entered at their
	// elapsed time or the send timeout, whichever is longer (never dropped).
	Failed int64 `json:"failed,omitempty"`
}

// SaturationShare is the least share of its offered rate an open-loop cell
// must acknowledge not to be saturated.
const SaturationShare = 0.95

// MarkSaturation sets OfferedRate and Saturated for an open-loop cell
// offered rate msg/s.
func (c *Cell) MarkSaturation(rate float64) {
	c.OfferedRate = rate
	c.Saturated = rate > 0 && c.MsgPerSec < SaturationShare*rate
}

// SpectrumPoint is one row of a percentile distribution: ValueNs is the
// latency at Percentile (in [0,100], as hdrhistogram-go's Bracket.Quantile).
type SpectrumPoint struct {
	Percentile float64 `json:"percentile"`
	ValueNs    float64 `json:"value_ns"`
}

// Point is one reporting interval of the time series. T is the interval's
// end in seconds since the start of the measured phase; latencies in ns.
type Point struct {
	T           float64            `json:"t"`
	Rate        float64            `json:"rate"` // msg/s
	MBps        float64            `json:"mb_per_sec"`
	P50         float64            `json:"p50_ns"`
	P99         float64            `json:"p99_ns"`
	P999        float64            `json:"p999_ns"`
	ResidentMiB float64            `json:"resident_mib"`
	DirtyMiB    float64            `json:"dirty_mib"`
	Extra       map[string]float64 `json:"extra,omitempty"`
}

// Marker is an event on the time axis (seconds since start), e.g. a segment
// roll (Kind MarkerRoll) or a stall (MarkerStall).
type Marker struct {
	T     float64 `json:"t"`
	Kind  string  `json:"kind,omitempty"`
	Label string  `json:"label"`
}

// Residency is the page-cache residency of each segment over time:
// Fraction[s][i] is the resident fraction in [0,1] of Segments[s] at T[i],
// or negative when the segment did not exist then.
type Residency struct {
	Segments []string    `json:"segments"`
	T        []float64   `json:"t"`
	Fraction [][]float64 `json:"fraction"`
	// From cachestat samples only (absent with mincore): the dirty and
	// under-writeback fraction of each segment's pages (same shape as
	// Fraction), and per-T totals over the segments in MiB.
	Dirty        [][]float64 `json:"dirty,omitempty"`
	Writeback    [][]float64 `json:"writeback,omitempty"`
	ResidentMiB  []float64   `json:"resident_mib,omitempty"`
	DirtyMiB     []float64   `json:"dirty_mib,omitempty"`
	WritebackMiB []float64   `json:"writeback_mib,omitempty"`
	// Model is the page-cache model's prediction for the cell
	// (workloads/pagemodel), drawn beside the measurement.
	Model *ResidencyModel `json:"model,omitempty"`
}

// BatchBucket counts flush batches (messages made durable by one flush)
// whose size is in (previous bucket's UpTo, UpTo]. Buckets are ascending.
type BatchBucket struct {
	UpTo  int64 `json:"up_to"`
	Count int64 `json:"count"`
}

// CellFiles names a cell's raw files, relative to the run directory.
type CellFiles struct {
	Hlog string            `json:"hlog,omitempty"`
	Hgrm map[string]string `json:"hgrm,omitempty"` // metric → .hgrm file
	// HgrmUnitNs is how many ns one value unit of the .hgrm files is (the
	// valueScale given to PercentilesPrint: 1 for ns, 1000 for µs). 0 means 1.
	HgrmUnitNs float64 `json:"hgrm_unit_ns,omitempty"`
}

// PrimaryMetric returns c.Primary, or when it is empty the alphabetically
// first metric of c.Quantiles, or "" when there is none.
func (c *Cell) PrimaryMetric() string {
	if c.Primary != "" {
		return c.Primary
	}
	best := ""
	for m := range c.Quantiles {
		if best == "" || m < best {
			best = m
		}
	}
	return best
}

// SystemOrDefault returns c.System, or SystemBrokerlab when it is empty.
func (c *Cell) SystemOrDefault() string {
	if c.System == "" {
		return SystemBrokerlab
	}
	return c.System
}

// durationNs converts float nanoseconds to a Duration, saturating.
func durationNs(ns float64) time.Duration {
	switch {
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= 0 || math.IsNaN(ns):
		return 0
	}
	return time.Duration(math.Round(ns))
}

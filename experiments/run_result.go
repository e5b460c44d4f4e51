package experiments

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/pagecache"
	"github.com/brokerlab/brokerlab/experiments/result"
	"github.com/brokerlab/brokerlab/workloads/gen"
	"github.com/brokerlab/brokerlab/workloads/hist"
	"github.com/brokerlab/brokerlab/workloads/probe"
)

// spectrumPercentiles are the points kept of each histogram: dense towards
// the tail (1 - 10^-k for k in steps of 0.1 up to 99.999 %).
var spectrumPercentiles = func() []float64 {
	ps := []float64{0}
	for k := 0.1; k <= 5.0001; k += 0.1 {
		ps = append(ps, 100*(1-math.Pow(10, -k)))
	}
	return append(ps, 100)
}()

func spectrum(h *hdrhistogram.Histogram) []result.SpectrumPoint {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	pts := make([]result.SpectrumPoint, 0, len(spectrumPercentiles))
	for _, p := range spectrumPercentiles {
		pts = append(pts, result.SpectrumPoint{Percentile: p, ValueNs: float64(h.ValueAtQuantile(p))})
	}
	return pts
}

// mergeExtra copies add into dst (allocating it when nil).
func mergeExtra(dst, add map[string]float64) map[string]float64 {
	if dst == nil {
		dst = map[string]float64{}
	}
	for k, v := range add {
		dst[k] = v
	}
	return dst
}

// dirResidency sums the page-cache residency (mincore) of a directory's
// files: resident and total bytes.
func dirResidency(dir string) (resident, size int64) {
	frs, err := pagecache.ResidencyDir(dir)
	if err != nil {
		return 0, 0
	}
	for _, f := range frs {
		resident += f.ResidentBytes()
		size += f.Size
	}
	return resident, size
}

// fillCell turns what a cell measured into its result.
func fillCell(rc *result.Cell, col *hist.Collector, res gen.Result, run *cellRun, st sysStats) {
	sum := res.Summary
	// Throughput comes from the acknowledged sends (service metric, which
	// carries sizes); latency headlines from the primary metric.
	tput := sum.Metrics[gen.MetricService]
	rc.Duration = sum.End.Sub(sum.Start)
	if rc.Duration <= 0 {
		rc.Duration = time.Duration(tput.Seconds * float64(time.Second))
	}
	rc.Ops = tput.Count
	rc.Bytes = tput.Bytes
	rc.MsgPerSec = tput.Rate
	rc.MBPerSec = tput.MBps
	rc.Quantiles = map[string]result.Quantiles{}
	rc.Spectrum = map[string][]result.SpectrumPoint{}
	for name, s := range sum.Metrics {
		if s.Count == 0 {
			continue
		}
		rc.Quantiles[name] = result.Quantiles{P50: float64(s.P50), P90: float64(s.P90), P99: float64(s.P99),
			P999: float64(s.P999), P9999: float64(s.P9999), Max: float64(s.Max), Mean: s.Mean, Count: s.Count}
		rc.Spectrum[name] = spectrum(col.Histogram(name))
	}
	withFailures(rc, col, sum)
	countSends(rc, sum)
	t0 := res.MeasureFrom
	run.mu.Lock()
	points := append([]probe.Point(nil), run.points...)
	markers := append([]markerAt(nil), run.markers...)
	run.mu.Unlock()
	pointAt := func(t time.Time) *probe.Point {
		var best *probe.Point
		for i := range points {
			if !points[i].Time.After(t.Add(time.Second / 2)) {
				best = &points[i]
			}
		}
		return best
	}
	for _, iv := range res.Intervals {
		if iv.Warmup {
			continue
		}
		s, sv := iv.Metrics[rc.Primary], iv.Metrics[gen.MetricService]
		p := result.Point{T: iv.End.Sub(t0).Seconds(), Rate: sv.Rate, MBps: sv.MBps, P50: float64(s.P50), P99: float64(s.P99), P999: float64(s.P999)}
		if pt := pointAt(iv.End); pt != nil {
			p.ResidentMiB = float64(pt.Resident) / (1 << 20)
			p.DirtyMiB = pt.DirtyMiB
			p.Extra = map[string]float64{"majflt": float64(pt.MajFlt), "writeback_mib": pt.WbMiB}
			addCacheExtra(p.Extra, pt, sv.MBps, pointSpan(points, pt))
		}
		if f, ok := iv.Metrics["flush"]; ok && f.Count > 0 {
			if p.Extra == nil {
				p.Extra = map[string]float64{}
			}
			p.Extra["flush_p99_ns"] = float64(f.P99)
			p.Extra["flushes"] = float64(f.Count)
		}
		if f, ok := iv.Metrics[gen.MetricServiceFailed]; ok && f.Count > 0 {
			if p.Extra == nil {
				p.Extra = map[string]float64{}
			}
			p.Extra["sends_failed"] = float64(f.Count)
		}
		if d, ok := iv.Metrics[gen.MetricSendDelay]; ok && d.Count > 0 {
			if p.Extra == nil {
				p.Extra = map[string]float64{}
			}
			p.Extra["send_delay_p99_ns"] = float64(d.P99)
		}
		if n := iv.Counters[gen.CounterSendErrors]; n > 0 {
			p.Extra = mergeExtra(p.Extra, map[string]float64{counterSendErrors: float64(n)})
		}
		if st.ReplicationLagAt != nil {
			if lag, ok := st.ReplicationLagAt(iv.End); ok {
				if p.Extra == nil {
					p.Extra = map[string]float64{}
				}
				p.Extra["replication_lag_bytes"] = float64(lag)
			}
		}
		rc.Series = append(rc.Series, p)
	}
	for _, m := range markers {
		if t := m.t.Sub(t0).Seconds(); t >= 0 {
			rc.Markers = append(rc.Markers, result.Marker{T: t, Kind: m.kind, Label: m.label})
		}
	}
	rc.Residency = residency(points, t0)
	for i, n := range st.Flush.BatchSizes {
		if n > 0 {
			rc.FlushBatches = append(rc.FlushBatches, result.BatchBucket{UpTo: int64(flush.BucketUpper(i)), Count: int64(n)})
		}
	}
	if rc.Extra == nil {
		rc.Extra = map[string]float64{}
	}
	rc.Extra["flushes"] = float64(st.Flush.Flushes)
	if st.Flush.Flushes > 0 {
		rc.Extra["flush_mean_ns"] = float64(st.Flush.FlushNanos) / float64(st.Flush.Flushes)
		rc.Extra["appends_per_flush"] = float64(st.Flush.Commits) / float64(st.Flush.Flushes)
	}
	rc.Extra["flush_timeouts"] = float64(st.Flush.Timeouts)
	rc.Extra["rolls"] = float64(st.Rolls)
	rc.Extra["inline_creates"] = float64(st.SyncCreates)
	rc.Extra["max_lock_held_ns"] = float64(st.MaxLockHeld)
	if st.CacheHitRate >= 0 {
		rc.Extra["cache_hit_ratio"] = st.CacheHitRate
	}
	for k, v := range sum.Counters {
		rc.Extra[strings.ReplaceAll(k, " ", "_")] = float64(v)
	}
	var majflt int64
	for _, p := range points {
		majflt += p.MajFlt
	}
	rc.Extra["majflt"] = float64(majflt)
}

// residency turns per-interval probe points into a segment × time matrix.
func residency(points []probe.Point, t0 time.Time) *result.Residency {
	set := map[string]bool{}
	for _, p := range points {
		for _, f := range p.Files {
			set[f.Name] = true
		}
	}
	if len(set) == 0 {
		return nil
	}
	r := &result.Residency{}
	for n := range set {
		r.Segments = append(r.Segments, n)
	}
	sort.Strings(r.Segments)
	idx := map[string]int{}
	for i, n := range r.Segments {
		idx[n] = i
	}
	r.Fraction = make([][]float64, len(r.Segments))
	for _, p := range points {
		r.T = append(r.T, p.Time.Sub(t0).Seconds())
		for s := range r.Fraction {
			r.Fraction[s] = append(r.Fraction[s], -1)
		}
		col := len(r.T) - 1
		for _, f := range p.Files {
			r.Fraction[idx[f.Name]][col] = f.Fraction()
		}
	}
	cacheLayers(r, points, idx)
	return r
}

// withFailures merges each latency metric with its failed sends (recorded
// at their timeout, gen.FailedMetric), so a failure shows in the quantiles
// instead of vanishing from them.
func withFailures(rc *result.Cell, col *hist.Collector, sum hist.Summary) {
	for _, name := range []string{gen.MetricService, gen.MetricResponse} {
		fname := gen.FailedMetric(name)
		if f := sum.Metrics[fname]; f.Count == 0 {
			continue
		}
		h := col.Histogram(fname)
		if ok := col.Histogram(name); ok != nil {
			h.Merge(ok)
		}
		rc.Quantiles[name] = quantilesOf(h, sum.Metrics[fname].Count)
		rc.Spectrum[name] = spectrum(h)
	}
}

func quantilesOf(h *hdrhistogram.Histogram, failed int64) result.Quantiles {
	at := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) }
	return result.Quantiles{P50: at(50), P90: at(90), P99: at(99), P999: at(99.9), P9999: at(99.99),
		Max: float64(h.Max()), Mean: h.Mean(), Count: h.TotalCount(), Failed: failed}
}

// countSends fills the measured phase's attempted, acknowledged and
// failed (by code) sends.
func countSends(rc *result.Cell, sum hist.Summary) {
	rc.Acked = sum.Metrics[gen.MetricService].Count
	rc.Failed = 0
	rc.FailedByCode = nil
	for k, v := range sum.Counters {
		if code, ok := strings.CutPrefix(k, gen.CounterSendFailedPrefix); ok && v > 0 {
			if rc.FailedByCode == nil {
				rc.FailedByCode = map[string]int64{}
			}
			rc.FailedByCode[code] += v
			rc.Failed += v
		}
	}
	rc.Attempted = rc.Acked + rc.Failed
}

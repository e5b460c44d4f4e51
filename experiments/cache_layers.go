package experiments

import (
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
	"github.com/brokerlab/brokerlab/workloads/probe"
)

// cacheLayers adds the cachestat layers to a residency matrix: each
// segment's dirty and writeback fractions and the per-sample totals. It
// leaves r as it is unless every sample read its files with cachestat.
func cacheLayers(r *result.Residency, points []probe.Point, idx map[string]int) {
	for _, p := range points {
		for _, c := range p.Cache {
			if !c.HasDirty() {
				return
			}
		}
	}
	const mib = 1 << 20
	r.Dirty = make([][]float64, len(r.Segments))
	r.Writeback = make([][]float64, len(r.Segments))
	for col, p := range points {
		for s := range r.Dirty {
			r.Dirty[s] = append(r.Dirty[s], -1)
			r.Writeback[s] = append(r.Writeback[s], -1)
		}
		for _, c := range p.Cache {
			if c.Pages > 0 {
				r.Dirty[idx[c.Name]][col] = float64(c.Dirty) / float64(c.Pages)
				r.Writeback[idx[c.Name]][col] = float64(c.Writeback) / float64(c.Pages)
			}
		}
		r.ResidentMiB = append(r.ResidentMiB, float64(p.Resident)/mib)
		r.DirtyMiB = append(r.DirtyMiB, float64(p.Dirty)/mib)
		r.WritebackMiB = append(r.WritebackMiB, float64(p.Wb)/mib)
	}
}

// pointSpan is the time pt covers: since the sample before it (0 for the
// first sample).
func pointSpan(points []probe.Point, pt *probe.Point) time.Duration {
	for i := range points {
		if &points[i] == pt && i > 0 {
			return pt.Time.Sub(points[i-1].Time)
		}
	}
	return 0
}

// addCacheExtra adds a series point's page-cache and CPU figures from the
// probe sample pt: the store's dirty and writeback MiB (cachestat), the
// process's CPU utilisation over the sample's span and its CPU seconds
// per MB appended (cpu_s_per_mb; the whole process: store and load
// generator in process).
func addCacheExtra(extra map[string]float64, pt *probe.Point, mbps float64, span time.Duration) {
	const mib = 1 << 20
	if len(pt.Cache) > 0 && pt.Cache[0].HasDirty() {
		extra["store_dirty_mib"] = float64(pt.Dirty) / mib
		extra["store_writeback_mib"] = float64(pt.Wb) / mib
	}
	if span > 0 && pt.CPUNs > 0 {
		util := float64(pt.CPUNs) / float64(span.Nanoseconds())
		extra["cpu_util"] = util
		if mbps > 0 {
			extra["cpu_s_per_mb"] = util / mbps
		}
	}
}

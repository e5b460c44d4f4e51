package experiments

import (
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/workloads/probe"
)

func TestResidencyCacheLayers(t *testing.T) {
	t0 := time.Unix(100, 0)
	ps := int64(4096)
	seg := func(name string, cached, dirty, wb int64, src probe.Kind) probe.SegmentCache {
		return probe.SegmentCache{Name: name, Size: 256 * ps, Pages: 256, Cached: cached, Dirty: dirty, Writeback: wb, Source: src}
	}
	point := func(sec int, segs ...probe.SegmentCache) probe.Point {
		p := probe.Point{Time: t0.Add(time.Duration(sec) * time.Second), Cache: segs}
		for _, s := range segs {
			p.Files = append(p.Files, s.Residency())
			p.Resident += s.Cached * ps
			p.Dirty += s.Dirty * ps
			p.Wb += s.Writeback * ps
		}
		return p
	}
	pts := []probe.Point{
		point(1, seg("a", 128, 64, 0, probe.KindCachestat)),
		point(2, seg("a", 256, 0, 32, probe.KindCachestat), seg("b", 64, 64, 0, probe.KindCachestat)),
	}
	r := residency(pts, t0)
	if len(r.Dirty) != 2 || r.Dirty[0][0] != 0.25 || r.Dirty[1][0] != -1 || r.Writeback[0][1] != 0.125 || r.Dirty[1][1] != 0.25 {
		t.Fatalf("dirty %v writeback %v", r.Dirty, r.Writeback)
	}
	if r.ResidentMiB[1] != float64(320*ps)/(1<<20) || r.DirtyMiB[0] != float64(64*ps)/(1<<20) || r.WritebackMiB[1] != float64(32*ps)/(1<<20) {
		t.Fatalf("totals %v %v %v", r.ResidentMiB, r.DirtyMiB, r.WritebackMiB)
	}
	// A mincore sample anywhere: no dirty layers (never zeros that look measured).
	pts[1].Cache[1].Source = probe.KindMincore
	if r := residency(pts, t0); r.Dirty != nil || r.DirtyMiB != nil {
		t.Fatalf("mincore sample: layers %v", r.Dirty)
	}
	extra := map[string]float64{}
	pts[0].CPUNs = int64(500 * time.Millisecond)
	addCacheExtra(extra, &pts[0], 100, time.Second)
	if extra["cpu_util"] != 0.5 || extra["cpu_s_per_mb"] != 0.005 || extra["store_dirty_mib"] != float64(64*ps)/(1<<20) {
		t.Fatalf("extra %v", extra)
	}
}

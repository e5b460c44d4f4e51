package plots

import (
	"fmt"
	"math"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// spectrum makes a synthetic percentile spectrum: the latency grows with
// log(1/(1-p)) from base ns, with a tail factor.
func spectrum(base, tail float64) []result.SpectrumPoint {
	var pts []result.SpectrumPoint
	for _, p := range []float64{0, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100} {
		x := 1.0
		if p < 100 {
			x = 100 / (100 - p)
		} else {
			x = 1e6
		}
		pts = append(pts, result.SpectrumPoint{Percentile: p, ValueNs: base * (1 + math.Pow(math.Log10(x), 2)*tail)})
	}
	return pts
}

func quantiles(base, tail float64) result.Quantiles {
	at := func(p float64) float64 { return base * (1 + math.Pow(math.Log10(100/(100-p)), 2)*tail) }
	return result.Quantiles{P50: at(50), P90: at(90), P99: at(99), P999: at(99.9), P9999: at(99.99), Max: base * (1 + 36*tail), Mean: at(60), Count: 1000}
}

func cell(system, name string, rep int, rate, base, tail float64) result.Cell {
	params, err := result.ParamMap(name)
	if err != nil {
		panic(err)
	}
	return result.Cell{
		Name: name, Params: params, System: system, Rep: rep,
		Duration: 10 * time.Second, Ops: int64(rate * 10), Bytes: int64(rate * 10 * 1024),
		MsgPerSec: rate, MBPerSec: rate * 1024 / 1e6, Primary: "e2e",
		Quantiles: map[string]result.Quantiles{"e2e": quantiles(base, tail)},
	}
}

// frontierCells: 2 paths × 1 policy × 3 rates × 3 reps, plus a fio ceiling.
func frontierCells() []result.Cell {
	var cs []result.Cell
	for pi, path := range []string{"mmap", "pwrite"} {
		for ri, rate := range []float64{10000, 20000, 40000} {
			for rep := range 3 {
				achieved := rate * (1 - 0.1*float64(ri*pi)) * (1 + 0.01*float64(rep))
				c := cell(result.SystemBrokerlab, fmt.Sprintf("path=%s/flush=group/rate=%d", path, int(rate)), rep, achieved,
					20000*(1+float64(ri)*float64(ri))*(1+0.3*float64(pi)), 2+float64(rep)/2)
				cs = append(cs, c)
			}
		}
	}
	cs = append(cs, cell(result.SystemFio, "bs=1k/sync=none", 0, 45000, 5000, 1))
	return cs
}

// groupCommitCells: 2 policies × 4 producer counts, with batch histograms.
func groupCommitCells() []result.Cell {
	var cs []result.Cell
	for fi, flush := range []string{"group", "sync"} {
		for _, conc := range []int{1, 4, 16, 64} {
			rate := float64(conc) * 800 / float64(1+fi*conc/4)
			c := cell(result.SystemBrokerlab, fmt.Sprintf("flush=%s/conc=%d", flush, conc), 0, rate, 200000*float64(1+fi), 1+float64(conc)/16)
			if flush == "group" {
				c.FlushBatches = []result.BatchBucket{{UpTo: 1, Count: int64(100 / conc)}, {UpTo: 2, Count: 20}, {UpTo: 4, Count: int64(conc * 2)}, {UpTo: 8, Count: int64(conc)}}
			}
			cs = append(cs, c)
		}
	}
	return cs
}

// segmentCells: 2 prealloc settings × 4 segment sizes, one with series and rolls.
func segmentCells() []result.Cell {
	var cs []result.Cell
	for wi, pre := range []string{"on", "off"} {
		for si, seg := range []string{"8MiB", "64MiB", "256MiB", "1GiB"} {
			c := cell(result.SystemBrokerlab, fmt.Sprintf("seg=%s/prealloc=%s", seg, pre), 0, 30000-1000*float64(si*wi), 300000, 1+float64(wi*(3-si)))
			cs = append(cs, c)
		}
	}
	cs[0].Series = timeSeries(20, 0)
	cs[0].Markers = []result.Marker{{T: 5, Kind: result.MarkerRoll, Label: "segment 1"}, {T: 12, Kind: result.MarkerRoll, Label: "segment 2"}, {T: 15.5, Kind: result.MarkerStall, Label: "stall"}}
	cs[4].Series = timeSeries(20, 1)
	return cs
}

func timeSeries(n int, phase float64) []result.Point {
	pts := make([]result.Point, n)
	for i := range pts {
		t := float64(i + 1)
		pts[i] = result.Point{T: t, Rate: 30000 + 2000*math.Sin(t/3+phase), MBps: 30, P50: 300000, P99: 900000 * (1 + 0.5*math.Sin(t/2+phase)),
			P999: 2e6, ResidentMiB: 8 * t, DirtyMiB: 4 + 3*math.Cos(t/4+phase)}
	}
	return pts
}

// residencyCell: 6 segments × 8 intervals.
func residencyCell() result.Cell {
	c := cell(result.SystemBrokerlab, "path=mmap/flush=async", 0, 1000, 1000, 1)
	rs := &result.Residency{T: []float64{10, 20, 30, 40, 50, 60, 70, 80}}
	for s := range 6 {
		rs.Segments = append(rs.Segments, fmt.Sprintf("%020d", s*67108864))
		row := make([]float64, len(rs.T))
		for i := range row {
			switch {
			case i < s:
				row[i] = -1 // not yet created
			default:
				row[i] = math.Max(0, 1-0.3*float64(i-s))
			}
		}
		rs.Fraction = append(rs.Fraction, row)
	}
	c.Residency = rs
	return c
}

// percentileCells: 3 configurations with spectra plus a NATS peer.
func percentileCells() []result.Cell {
	var cs []result.Cell
	for i, name := range []string{"path=mmap/flush=group", "path=pwrite/flush=group", "path=direct/flush=group"} {
		c := cell(result.SystemBrokerlab, name, 0, 40000, 100000*float64(i+1), 1+float64(i))
		c.Spectrum = map[string][]result.SpectrumPoint{"e2e": spectrum(100000*float64(i+1), 1+float64(i))}
		cs = append(cs, c)
	}
	n := cell(result.SystemNATS, "sync=always", 0, 30000, 150000, 2)
	n.Spectrum = map[string][]result.SpectrumPoint{"e2e": spectrum(150000, 2)}
	return append(cs, n)
}

// barCells: 3 paths × 2 policies, with fio and NATS peers.
func barCells() []result.Cell {
	var cs []result.Cell
	for pi, path := range []string{"mmap", "pwrite", "direct"} {
		for fi, flush := range []string{"async", "group"} {
			cs = append(cs, cell(result.SystemBrokerlab, fmt.Sprintf("path=%s/flush=%s", path, flush), 0,
				50000-8000*float64(pi)-15000*float64(fi), 100000*float64(1+fi*3), 1+float64(pi)))
		}
	}
	cs = append(cs, cell(result.SystemFio, "bs=4k/sync=none", 0, 60000, 20000, 1))
	cs = append(cs, cell(result.SystemNATS, "sync=interval", 0, 42000, 150000, 1))
	return cs
}

// bigResidencyCell has more grid cells than rasterCells, so the heat map is
// drawn as an image.
func bigResidencyCell() result.Cell {
	c := cell(result.SystemBrokerlab, "path=pwrite/flush=async", 0, 1000, 1000, 1)
	rs := &result.Residency{}
	for i := range 250 {
		rs.T = append(rs.T, float64(i+1))
	}
	for s := range 100 {
		rs.Segments = append(rs.Segments, fmt.Sprintf("seg%03d", s))
		row := make([]float64, len(rs.T))
		for i := range row {
			row[i] = math.Mod(float64(s*7+i)/50, 1)
		}
		rs.Fraction = append(rs.Fraction, row)
	}
	c.Residency = rs
	return c
}

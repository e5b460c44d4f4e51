package plots

import (
	"math"

	"github.com/brokerlab/brokerlab/experiments/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// SegmentSweep draws the segment-size sweep (measurement.md plot 3, the
// aggregate half): segment size (result.ParamSeg, log2 axis labelled 8MiB …
// 1GiB) against p99 (solid) and p99.9 (dashed) of the primary metric, and
// against throughput, one line per remaining configuration (e.g. each
// prealloc/warm setting), medians over repetitions. The time-series half
// (latency over time with segment-roll markers) is TimeSeries; RenderRun
// draws both. It needs a configuration run at two or more segment sizes.
func SegmentSweep(cells []result.Cell) (*Figure, error) {
	var own []result.Summary
	for _, sm := range result.Aggregate(usable(cells)) {
		if sm.System != result.SystemFio {
			own = append(own, sm)
		}
	}
	lines := sweepLines(own, result.ParamSeg, parseBytes)
	if longestSweep(lines) < 2 {
		return nil, noData("segment sweep", "no configuration was run at two or more segment sizes")
	}
	hi, lo := 0.0, math.Inf(1)
	for _, l := range lines {
		for _, pt := range l.points {
			for _, q := range []string{"p99", "p999"} {
				if st, ok := parseSelector(q).summary(pt.sm); ok {
					hi, lo = math.Max(hi, st.Median), math.Min(lo, st.Median)
				}
			}
		}
	}
	div, unit := latencyUnit(hi)
	lat := newPanel("Tail latency vs segment size", "segment size", "latency ("+unit+"); solid p99, dashed p99.9")
	thr := newPanel("Throughput vs segment size", "segment size", "throughput (msg/s)")
	thrLo := math.Inf(1)
	xlo, xhi, thrHi, hiW := math.Inf(1), 0.0, 0.0, 0.0
	for i, l := range lines {
		var p99, p999, txy plotter.XYs
		var lo99, hi99, lo999, hi999, tlo, thi []float64
		for _, pt := range l.points {
			if pt.x <= 0 {
				continue
			}
			xlo, xhi = math.Min(xlo, pt.x), math.Max(xhi, pt.x)
			if st, ok := parseSelector("p99").summary(pt.sm); ok {
				p99 = append(p99, plotter.XY{X: pt.x, Y: st.Median / div})
				lo99, hi99 = append(lo99, st.Min/div), append(hi99, st.Max/div)
				hiW = math.Max(hiW, st.Max/div)
			}
			if st, ok := parseSelector("p999").summary(pt.sm); ok {
				p999 = append(p999, plotter.XY{X: pt.x, Y: st.Median / div})
				lo999, hi999 = append(lo999, st.Min/div), append(hi999, st.Max/div)
				hiW = math.Max(hiW, st.Max/div)
			}
			if v := pt.sm.MsgPerSec.Median; v > 0 {
				txy = append(txy, plotter.XY{X: pt.x, Y: v})
				tlo, thi = append(tlo, pt.sm.MsgPerSec.Min), append(thi, pt.sm.MsgPerSec.Max)
				thrHi = math.Max(thrHi, pt.sm.MsgPerSec.Max)
				thrLo = math.Min(thrLo, math.Max(pt.sm.MsgPerSec.Min, v/2))
			}
		}
		if len(p99) > 0 {
			if err := addLine(lat, p99, i, l.label+" p99", nil); err != nil {
				return nil, err
			}
			if err := addWhiskers(lat, p99, lo99, hi99, i); err != nil {
				return nil, err
			}
		}
		if len(p999) > 0 {
			if err := addLine(lat, p999, i, l.label+" p99.9", dashLong); err != nil {
				return nil, err
			}
			if err := addWhiskers(lat, p999, lo999, hi999, i); err != nil {
				return nil, err
			}
		}
		if len(txy) > 0 {
			if err := addLine(thr, txy, i, l.label, nil); err != nil {
				return nil, err
			}
			if err := addWhiskers(thr, txy, tlo, thi, i); err != nil {
				return nil, err
			}
		}
	}
	if !(xhi > 0) {
		return nil, noData("segment sweep", "no positive segment sizes")
	}
	for _, p := range []*plot.Plot{lat, thr} {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = pow2Ticks(formatBytesIEC)
		p.X.Min, p.X.Max = xlo/1.2, xhi*1.2
	}
	if hi > 0 {
		setLogY(lat, lo/div, math.Max(hi/div, hiW))
	}
	setThroughputY(thr, thrLo, thrHi)
	return &Figure{Name: "segment-sweep", Panels: [][]*plot.Plot{{lat, thr}}, Width: 2 * panelWidth, Height: panelHeight}, nil
}

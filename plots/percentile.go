package plots

import (
	"math"

	"github.com/brokerlab/brokerlab/experiments/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// maxInvTail caps 1/(1-p) at 99.9999%.
const maxInvTail = 1e6

// LatencyByPercentile draws the percentile spectrum of a latency metric, one
// line per cell (the HdrHistogram plotter / wrk2 / OMB picture): x is
// 1/(1-p) on a log axis labelled 90% … 99.999%, y the latency on a log
// axis. It reads Cell.Spectrum[metric] (metric "" = each cell's primary
// metric); RenderRun fills it from .hgrm files where needed. The 100th
// percentile (x = +Inf) and non-positive latencies are dropped; the maximum
// goes into the legend instead.
func LatencyByPercentile(cells []result.Cell, metric string) (*Figure, error) {
	var lines []labelledLine
	lo, hi, maxX := math.Inf(1), 0.0, 1.0
	for _, c := range usable(cells) {
		m := metric
		if m == "" {
			m = c.PrimaryMetric()
		}
		var xys plotter.XYs
		top := 0.0
		for _, pt := range c.Spectrum[m] {
			top = math.Max(top, pt.ValueNs)
			if pt.Percentile >= 100 || pt.Percentile < 0 || !(pt.ValueNs > 0) || math.IsInf(pt.ValueNs, 0) {
				continue
			}
			x := 100 / (100 - pt.Percentile)
			if x > maxInvTail {
				continue
			}
			xys = append(xys, plotter.XY{X: x, Y: pt.ValueNs})
		}
		if len(xys) < 2 {
			continue
		}
		if q, ok := c.Quantiles[m]; ok && q.Max > top {
			top = q.Max
		}
		for _, xy := range xys {
			lo, hi, maxX = math.Min(lo, xy.Y), math.Max(hi, xy.Y), math.Max(maxX, xy.X)
		}
		label := cellLabel(c.SystemOrDefault(), c.Name)
		if top > 0 {
			label += " (max " + formatLatency(top) + ")"
		}
		lines = append(lines, labelledLine{label: label, xys: xys})
	}
	if len(lines) == 0 {
		return nil, noData("latency by percentile", "no cell has a spectrum for metric %q", metric)
	}
	div, unit := latencyUnit(hi)
	title := "Latency by percentile"
	switch metric {
	case "":
	case "e2e":
		title += " (end to end: send → receipt by a tailing consumer)"
	case "e2e_intended":
		title += " (end to end from the intended send, tailing consumer)"
	default:
		title += " (" + metric + ")"
	}
	p := newPanel(title, "percentile", "latency ("+unit+")")
	if err := addLines(p, lines, div); err != nil {
		return nil, err
	}
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(percentileTicks)
	p.X.Min = 1
	p.X.Max = math.Max(10, math.Pow(10, math.Ceil(math.Log10(maxX)-1e-9)))
	setLogY(p, lo/div, hi/div)
	return &Figure{Name: "latency-by-percentile", Panels: [][]*plot.Plot{{p}}, Width: 16 * cmLength, Height: 10 * cmLength}, nil
}

// setLogY puts a log scale with 1-2-5 ticks on the y axis over [lo, hi].
func setLogY(p *plot.Plot, lo, hi float64) {
	lo, hi, ok := logRange(lo, hi)
	if !ok {
		return
	}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.TickerFunc(log125Ticks)
	p.Y.Min, p.Y.Max = lo, hi
}

func formatLatency(ns float64) string {
	div, unit := latencyUnit(ns)
	return trimFloat(ns/div) + unit
}

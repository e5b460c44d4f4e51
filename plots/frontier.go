package plots

import (
	"math"

	"github.com/brokerlab/brokerlab/experiments/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Frontier draws the latency–throughput frontier (measurement.md plot 1):
// three panels (p50, p99, p99.9 of each cell's primary metric) with the
// achieved msg/s on x and latency on a log y axis. Cells are aggregated over
// repetitions (median point, min–max error bars) and joined into one line
// per configuration: all parameters except result.ParamRate, points in
// order of the target rate. fio cells are drawn as vertical ceilings at
// their msg/s. It needs at least one configuration with two rates.
func Frontier(cells []result.Cell) (*Figure, error) {
	sums := result.Aggregate(usable(cells))
	var own []result.Summary
	var ceilings []result.Summary
	for _, sm := range sums {
		if sm.System == result.SystemFio {
			if sm.MsgPerSec.Median > 0 {
				ceilings = append(ceilings, sm)
			}
			continue
		}
		own = append(own, sm)
	}
	lines := sweepLines(own, result.ParamRate, parseCount)
	if longestSweep(lines) < 2 {
		return nil, noData("frontier", "no configuration was run at two or more rates")
	}
	qs := []string{"p50", "p99", "p999"}
	// One latency unit for all panels, from the largest value shown.
	hi := 0.0
	for _, l := range lines {
		for _, pt := range l.points {
			for _, q := range qs {
				if st, ok := parseSelector(q).summary(pt.sm); ok {
					hi = math.Max(hi, st.Max)
				}
			}
		}
	}
	if hi <= 0 {
		return nil, noData("frontier", "no latency quantiles")
	}
	div, unit := latencyUnit(hi)
	row := make([]*plot.Plot, 0, len(qs))
	for qi, q := range qs {
		sel := parseSelector(q)
		p := newPanel(quantileDisplay(q)+" vs throughput", "achieved throughput (msg/s)", quantileDisplay(q)+" latency ("+unit+")")
		p.X.Tick.Marker = plot.TickerFunc(siTicks)
		lo, top, xMax := math.Inf(1), 0.0, 0.0
		for i, l := range lines {
			var xys plotter.XYs
			var errs plotter.YErrors
			for _, pt := range l.points {
				st, ok := sel.summary(pt.sm)
				if !ok || pt.sm.MsgPerSec.Median <= 0 {
					continue
				}
				y := st.Median / div
				xys = append(xys, plotter.XY{X: pt.sm.MsgPerSec.Median, Y: y})
				low, high := 0.0, 0.0
				if st.N > 1 && st.Min > 0 {
					low, high = y-st.Min/div, st.Max/div-y
				}
				errs = append(errs, struct{ Low, High float64 }{low, high})
				lo, top, xMax = math.Min(lo, st.Min/div), math.Max(top, st.Max/div), math.Max(xMax, pt.sm.MsgPerSec.Median)
				if st.Min <= 0 {
					lo = math.Min(lo, y)
				}
			}
			if len(xys) == 0 {
				continue
			}
			label := ""
			if qi == 0 {
				label = l.label
			}
			if err := addLine(p, xys, i, label, seriesDashes(i)); err != nil {
				return nil, err
			}
			if hasErrors(errs) {
				eb, err := plotter.NewYErrorBars(yErrPoints{xys, errs})
				if err != nil {
					return nil, err
				}
				eb.Color = seriesColor(i)
				eb.CapWidth = vg.Points(4)
				p.Add(eb)
			}
		}
		if !(top > 0) {
			continue
		}
		ylo, yhi, _ := logRange(lo, top)
		for ci, c := range ceilings {
			x := c.MsgPerSec.Median
			l := refLine(x, ylo, x, yhi, ceilingColor2(ci), ceilingDashes(ci))
			l.Width = vg.Points(1.3)
			p.Add(l)
			xMax = math.Max(xMax, x)
			if qi == 0 {
				p.Legend.Add("fio "+ceilingKind(c.Params)+" ceiling "+nameWithout(c.Name, "ceiling"), l)
			}
		}
		p.X.Min, p.X.Max = 0, xMax*1.05
		setLogY(p, lo, top)
		row = append(row, p)
	}
	if len(row) == 0 {
		return nil, noData("frontier", "no latency quantiles")
	}
	return &Figure{Name: "frontier", Panels: [][]*plot.Plot{row}, Width: vg.Length(len(row)) * panelWidth, Height: panelHeight}, nil
}

type yErrPoints struct {
	plotter.XYs
	plotter.YErrors
}

func hasErrors(errs plotter.YErrors) bool {
	for _, e := range errs {
		if e.Low > 0 || e.High > 0 {
			return true
		}
	}
	return false
}

package plots

import (
	"math"
	"slices"

	"github.com/brokerlab/brokerlab/experiments/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Bars draws grouped bars of one metric (see the selector grammar: "msg/s",
// "MB/s", "p99", "append.p999", an Extra key …) for brokerlab's
// configurations, medians over repetitions. The first name parameter that
// varies across the cells (e.g. path) forms the x groups; the other varying
// parameters (e.g. flush) form the bar series, placed side by side with
// BarChart.Offset. Peer cells are drawn as horizontal lines: fio as a
// dashed "ceiling", others (NATS) as dotted references. Missing
// combinations are drawn as zero-height bars.
func Bars(cells []result.Cell, metric string) (*Figure, error) {
	sel := parseSelector(metric)
	type entry struct {
		sm     result.Summary
		params []result.Param
		value  float64
	}
	var own, peers []entry
	var keys []string
	for _, sm := range result.Aggregate(usable(cells)) {
		st, ok := sel.summary(&sm)
		if !ok {
			continue
		}
		ps, err := result.ParseName(sm.Name)
		if err != nil {
			continue
		}
		e := entry{sm: sm, params: ps, value: st.Median}
		if sm.System != result.SystemBrokerlab {
			peers = append(peers, e)
			continue
		}
		own = append(own, e)
		for _, p := range ps {
			if !slices.Contains(keys, p.Key) {
				keys = append(keys, p.Key)
			}
		}
	}
	if len(own) == 0 {
		return nil, noData("bars", "no brokerlab cell has %q", metric)
	}
	var varying []string
	for _, k := range keys {
		var vals []string
		for _, e := range own {
			if v := e.sm.Params[k]; !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
		if len(vals) > 1 {
			varying = append(varying, k)
		}
	}
	groupOf := func(e entry) string { return e.sm.Name }
	seriesOf := func(e entry) string { return "" }
	xLabel := "configuration"
	if len(varying) > 0 {
		gk := varying[0]
		xLabel = gk
		groupOf = func(e entry) string { return e.sm.Params[gk] }
		seriesOf = func(e entry) string {
			var ps []result.Param
			for _, p := range e.params {
				if slices.Contains(varying[1:], p.Key) {
					ps = append(ps, p)
				}
			}
			return result.FormatName(ps...)
		}
	}
	var groups, series []string
	for _, e := range own {
		if g := groupOf(e); !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
		if s := seriesOf(e); !slices.Contains(series, s) {
			series = append(series, s)
		}
	}
	top := 0.0
	for _, e := range append(slices.Clone(own), peers...) {
		top = math.Max(top, e.value)
	}
	div, unitLabel := 1.0, sel.display
	if sel.isLatency() {
		var unit string
		div, unit = latencyUnit(top)
		unitLabel += " (" + unit + ")"
	}
	p := newPanel(sel.display, xLabel, unitLabel)
	p.NominalX(groups...)
	width := barWidth(len(groups), len(series))
	legendN := len(peers)
	for si, s := range series {
		vals := make(plotter.Values, len(groups))
		for _, e := range own {
			if seriesOf(e) == s {
				vals[slices.Index(groups, groupOf(e))] = e.value / div
			}
		}
		bc, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, err
		}
		bc.Color = seriesColor(si)
		bc.LineStyle.Width = 0
		bc.Offset = vg.Length(float64(si)-float64(len(series)-1)/2) * width
		p.Add(bc)
		if s != "" {
			p.Legend.Add(s, bc)
			legendN++
		}
	}
	x0, x1 := -0.5, float64(len(groups))-0.5
	for i, e := range peers {
		y := e.value / div
		if e.sm.System == result.SystemFio {
			l := refLine(x0, y, x1, y, ceilingColor, dashLong)
			p.Add(l)
			what := " ceiling"
			if sel.isLatency() {
				what = " floor"
			}
			p.Legend.Add("fio"+what+" "+e.sm.Name, l)
			continue
		}
		l := refLine(x0, y, x1, y, seriesColor(len(series)+i), dashShort)
		p.Add(l)
		p.Legend.Add(cellLabel(e.sm.System, e.sm.Name), l)
	}
	p.X.Min, p.X.Max = x0, x1
	p.Y.Min, p.Y.Max = 0, top/div*headroom(legendN)
	if !(p.Y.Max > 0) {
		p.Y.Max = 1
	}
	p.Y.Tick.Marker = plot.TickerFunc(siTicks)
	return &Figure{Name: "bars-" + safeName(metric), Panels: [][]*plot.Plot{{p}}, Width: 16 * cmLength, Height: 10 * cmLength}, nil
}

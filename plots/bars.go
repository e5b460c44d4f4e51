package plots

import (
	"image/color"
	"math"
	"slices"

	"github.com/brokerlab/brokerlab/experiments/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// decadesForLog is the max/min ratio above which bars use a log axis, so
// that small bars (e.g. per-message fsync beside async) stay visible.
const decadesForLog = 20

// Bars draws grouped bars of one metric (see the selector grammar: "msg/s",
// "MiB/s", "p99", "append.p999", an Extra key …) for brokerlab's
// configurations: the median over repetitions with a min–max whisker on
// every bar. The first name parameter that varies across the cells (e.g.
// path) forms the x groups; the other varying parameters (e.g. flush) form
// the bar series. Where values span more than decadesForLog the y axis is
// logarithmic. Peer cells are drawn as horizontal lines, each with its own
// dash pattern and legend label: fio as a "device ceiling", "page-cache
// ceiling" etc. (grey), others (NATS) coloured. Missing combinations are
// left empty.
func Bars(cells []result.Cell, metric string) (*Figure, error) {
	return barsBy(cells, metric, "")
}

// BarsBy is Bars with the x groups formed by the name parameter groupKey
// (e.g. fs) when it varies across the cells. A peer cell carrying that
// parameter (fio on one file system) is drawn across its own group only,
// with one legend entry per ceiling kind. The figure is named
// "<groupKey>-<metric>".
func BarsBy(cells []result.Cell, metric, groupKey string) (*Figure, error) {
	f, err := barsBy(cells, metric, groupKey)
	if err == nil {
		f.Name = safeName(groupKey) + "-" + safeName(metric)
	}
	return f, err
}

func barsBy(cells []result.Cell, metric, byKey string) (*Figure, error) {
	sel := parseSelector(metric)
	type entry struct {
		sm     result.Summary
		params []result.Param
		st     result.Stat
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
		e := entry{sm: sm, params: ps, st: st}
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
	if i := slices.Index(varying, byKey); i > 0 {
		varying = append([]string{byKey}, slices.Delete(slices.Clone(varying), i, i+1)...)
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
	div, unitLabel := 1.0, sel.display
	if sel.isLatency() {
		var unit string
		div, unit = latencyUnit(0)
		unitLabel += " (" + unit + ")"
	}
	lo, hi := math.Inf(1), 0.0
	for _, e := range append(slices.Clone(own), peers...) {
		if e.st.Median > 0 {
			lo, hi = math.Min(lo, math.Max(e.st.Min, e.st.Median*1e-3)/div), math.Max(hi, e.st.Max/div)
		}
	}
	logY := hi > 0 && lo > 0 && hi/lo > decadesForLog
	p := newPanel(sel.display, xLabel, unitLabel)
	p.NominalX(groups...)
	slot := 0.8 / float64(max(len(series), 1))
	base := 0.0
	if logY {
		base = lo / 1.5
	}
	for si, s := range series {
		bars := &dataBars{Color: seriesColor(si), Base: base}
		var xys plotter.XYs
		var errs plotter.YErrors
		for _, e := range own {
			if seriesOf(e) != s {
				continue
			}
			x := float64(slices.Index(groups, groupOf(e))) + (float64(si)-float64(len(series)-1)/2)*slot
			y := e.st.Median / div
			bars.Bars = append(bars.Bars, dataBar{X: x, Y: y, Width: slot * 0.9})
			xys = append(xys, plotter.XY{X: x, Y: y})
			errs = append(errs, struct{ Low, High float64 }{y - e.st.Min/div, e.st.Max/div - y})
		}
		p.Add(bars)
		if len(xys) > 0 {
			eb, err := plotter.NewYErrorBars(yErrPoints{xys, errs})
			if err != nil {
				return nil, err
			}
			eb.Color = color.Black
			eb.CapWidth = vg.Points(3)
			p.Add(eb)
		}
		label := s
		if label == "" {
			label = "median, min–max whisker"
		}
		p.Legend.Add(label, bars)
	}
	x0, x1 := -0.5, float64(len(groups))-0.5
	fioN, peerN := 0, 0
	// A fio ceiling of one x group (byKey set on it) spans that group only;
	// ceilings of the same name in other groups share its style and legend.
	fioStyle := map[string]int{}
	for _, e := range peers {
		y := e.st.Median / div
		if e.sm.System == result.SystemFio {
			lx0, lx1 := x0, x1
			label := nameWithout(e.sm.Name, "ceiling")
			if g := slices.Index(groups, e.sm.Params[byKey]); byKey != "" && len(varying) > 0 && varying[0] == byKey && g >= 0 {
				lx0, lx1 = float64(g)-0.45, float64(g)+0.45
				label = nameWithout(e.sm.Name, "ceiling", byKey)
			}
			n, seen := fioStyle[label]
			if !seen {
				n = fioN
				fioStyle[label] = n
				fioN++
			}
			l := refLine(lx0, y, lx1, y, ceilingColor2(n), ceilingDashes(n))
			l.Width = vg.Points(1.3)
			p.Add(l)
			if !seen {
				what := "fio " + ceilingKind(e.sm.Params) + " ceiling "
				if sel.isLatency() {
					what = "fio " + ceilingKind(e.sm.Params) + " floor "
				}
				p.Legend.Add(what+label, l)
			}
			continue
		}
		l := refLine(x0, y, x1, y, seriesColor(len(series)+peerN), ceilingDashes(peerN+1))
		l.Width = vg.Points(1.3)
		peerN++
		p.Add(l)
		p.Legend.Add(cellLabel(e.sm.System, e.sm.Name), l)
	}
	p.X.Min, p.X.Max = x0, x1
	if logY {
		setLogY(p, base, hi)
	} else {
		p.Y.Min, p.Y.Max = 0, hi*headroom(0)
		if !(p.Y.Max > 0) {
			p.Y.Max = 1
		}
		p.Y.Tick.Marker = plot.TickerFunc(siTicks)
	}
	return &Figure{Name: "bars-" + safeName(metric), Panels: [][]*plot.Plot{{p}}, Width: 16 * cmLength, Height: 10 * cmLength}, nil
}

// ceilingKind names a fio cell's ceiling: device, page-cache, ….
func ceilingKind(params map[string]string) string {
	if k := params["ceiling"]; k != "" {
		return k
	}
	if params["path"] == "direct" {
		return "device"
	}
	return "buffered"
}

// dataBar is one bar in data coordinates.
type dataBar struct{ X, Y, Width float64 }

// dataBars draws bars whose x position and width are in data units (so a
// whisker can sit on each bar) from Base up to Y, on linear or log axes.
type dataBars struct {
	Bars  []dataBar
	Color color.Color
	Base  float64
}

// Plot implements plot.Plotter.
func (b *dataBars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, bar := range b.Bars {
		if !(bar.Y > b.Base) {
			continue
		}
		x0, x1 := trX(bar.X-bar.Width/2), trX(bar.X+bar.Width/2)
		y0, y1 := trY(b.Base), trY(bar.Y)
		pts := []vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}}
		c.FillPolygon(b.Color, c.ClipPolygonXY(pts))
	}
}

// DataRange implements plot.DataRanger.
func (b *dataBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), b.Base, b.Base
	for _, bar := range b.Bars {
		xmin, xmax = math.Min(xmin, bar.X-bar.Width/2), math.Max(xmax, bar.X+bar.Width/2)
		ymax = math.Max(ymax, bar.Y)
	}
	if len(b.Bars) == 0 {
		xmin, xmax = 0, 0
	}
	return
}

// Thumbnail implements plot.Thumbnailer.
func (b *dataBars) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(b.Color, c.ClipPolygonY(pts))
}

package plots

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure sizes.
const cmLength = vg.Centimeter

var (
	panelWidth  = 14 * vg.Centimeter
	panelHeight = 9 * vg.Centimeter
)

// newPanel is basePanel with a light grid behind the data.
func newPanel(title, xLabel, yLabel string) *plot.Plot {
	p := basePanel(title, xLabel, yLabel)
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	p.Add(grid)
	return p
}

// basePanel is a plot with brokerlab's font sizes and legend placement.
func basePanel(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Label.TextStyle.Font.Size = vg.Points(9)
	p.Y.Label.TextStyle.Font.Size = vg.Points(9)
	p.X.Tick.Label.Font.Size = vg.Points(8)
	p.Y.Tick.Label.Font.Size = vg.Points(8)
	p.Legend.TextStyle.Font.Size = vg.Points(7)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.ThumbnailWidth = vg.Points(18)
	return p
}

// seriesColor and seriesDashes give series i a stable style.
func seriesColor(i int) color.Color { return plotutil.Color(i) }

func seriesDashes(i int) []vg.Length { return plotutil.Dashes(i / 7) }

// maxGlyphPoints is the longest line drawn with point glyphs.
const maxGlyphPoints = 60

// labelledLine is one series of a line chart: its legend label and points.
type labelledLine struct {
	label string
	xys   plotter.XYs
}

// addLines adds lines[i] in series i's style (see addLine) with its y
// divided by div (1, or a unit's scale).
func addLines(p *plot.Plot, lines []labelledLine, div float64) error {
	for i, l := range lines {
		xys := l.xys
		if div != 1 {
			xys = make(plotter.XYs, len(l.xys))
			for j, xy := range l.xys {
				xys[j] = plotter.XY{X: xy.X, Y: xy.Y / div}
			}
		}
		if err := addLine(p, xys, i, l.label, seriesDashes(i)); err != nil {
			return err
		}
	}
	return nil
}

// addLine adds a line in series i's style (with point glyphs when it is
// short) and a legend entry.
func addLine(p *plot.Plot, xys plotter.XYs, i int, label string, dashes []vg.Length) error {
	if len(xys) > maxGlyphPoints {
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = seriesColor(i)
		l.Width = vg.Points(1.2)
		l.Dashes = dashes
		p.Add(l)
		if label != "" {
			p.Legend.Add(label, l)
		}
		return nil
	}
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	l.Color = seriesColor(i)
	l.Width = vg.Points(1.3)
	l.Dashes = dashes
	s.Color = seriesColor(i)
	s.Shape = plotutil.Shape(i)
	s.Radius = vg.Points(2)
	p.Add(l, s)
	if label != "" {
		p.Legend.Add(label, l, s)
	}
	return nil
}

// refLine is a straight reference line (a peer ceiling or a marker).
func refLine(x0, y0, x1, y1 float64, c color.Color, dashes []vg.Length) *plotter.Line {
	return &plotter.Line{
		XYs:       plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y1}},
		LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1), Dashes: dashes},
	}
}

var (
	ceilingColor = color.RGBA{R: 90, G: 90, B: 90, A: 255}
	dashLong     = []vg.Length{vg.Points(6), vg.Points(3)}
	dashShort    = []vg.Length{vg.Points(2), vg.Points(2)}
)

// markerColor colours marker kinds: rolls grey, stalls red, others by index.
func markerColor(kind string, i int) color.Color {
	switch kind {
	case "roll":
		return color.RGBA{R: 150, G: 150, B: 150, A: 255}
	case "stall":
		return color.RGBA{R: 200, G: 30, B: 30, A: 255}
	}
	return plotutil.Color(i + 3)
}

// headroom is the factor above the data's top: legends are drawn outside
// the data (legendOutside), so a small margin suffices.
func headroom(int) float64 { return 1.1 }

// ceilingDashes gives the i-th ceiling line its own dash pattern, so that
// several ceilings stay distinguishable in grey.
func ceilingDashes(i int) []vg.Length {
	pats := [][]vg.Length{
		{vg.Points(6), vg.Points(3)},
		{vg.Points(2), vg.Points(2)},
		{vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)},
		{vg.Points(1), vg.Points(3)},
		{vg.Points(12), vg.Points(4)},
		{vg.Points(4), vg.Points(2), vg.Points(1), vg.Points(2), vg.Points(1), vg.Points(2)},
	}
	return pats[i%len(pats)]
}

// ceilingColor2 is the i-th ceiling's grey, dark to light, so that lines
// with the same dash pattern still differ.
func ceilingColor2(i int) color.Color {
	g := uint8(20 + (i*47)%160)
	return color.RGBA{R: g, G: g, B: g, A: 255}
}

// addWhiskers draws min–max whiskers in series i's colour at xys; lows and
// highs are the absolute ends (non-positive lows are left out, for log
// axes).
func addWhiskers(p *plot.Plot, xys plotter.XYs, lows, highs []float64, i int) error {
	errs := make(plotter.YErrors, len(xys))
	some := false
	for j := range xys {
		if lows[j] > 0 {
			errs[j].Low = max(0, xys[j].Y-lows[j])
		}
		errs[j].High = max(0, highs[j]-xys[j].Y)
		some = some || errs[j].Low > 0 || errs[j].High > 0
	}
	if !some {
		return nil
	}
	eb, err := plotter.NewYErrorBars(yErrPoints{xys, errs})
	if err != nil {
		return err
	}
	eb.Color = seriesColor(i)
	eb.CapWidth = vg.Points(3)
	p.Add(eb)
	return nil
}

// setThroughputY scales a throughput axis: linear from 0, or logarithmic
// when the values span more than decadesForLog (per-message fsync beside
// async), so that the small values stay readable.
func setThroughputY(p *plot.Plot, lo, hi float64) {
	if lo > 0 && hi/lo > decadesForLog {
		setLogY(p, lo, hi)
		p.Y.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
			ts := log125Ticks(min, max)
			for i := range ts {
				if ts[i].Label != "" {
					ts[i].Label = formatNumber(ts[i].Value)
				}
			}
			return ts
		})
		return
	}
	p.Y.Min, p.Y.Max = 0, hi*1.3
	p.Y.Tick.Marker = plot.TickerFunc(siTicks)
}

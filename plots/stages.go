package plots

import (
	"cmp"
	"image/color"
	"math"
	"slices"

	"github.com/brokerlab/brokerlab/experiments/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// stagePercentiles are the breakdown's x positions.
var stagePercentiles = []struct{ label, q string }{{"p50", "p50"}, {"p99", "p99"}, {"p99.9", "p999"}}

// maxStageCols is the number of panels per row of the stages figure.
const maxStageCols = 3

// Stages draws the per-stage latency breakdown (engine.stages) of every
// configuration that recorded one (one representative cell each, e.g. per
// path × policy): a panel per configuration with, at p50, p99 and p99.9, a
// stacked bar of each stage's own latency at that percentile (frame read,
// decode, queue wait, process, lock wait, lock hold, flush wait, reply
// write, in request order from the bottom) and the whole send's latency at
// the same percentile as a black cross. Stage percentiles are taken per
// stage, so a stack is not the total's percentile: the stack shows which
// stage's tail is long, the cross what a send sees. Each panel has its own
// linear y axis (µs, or ms when the tallest bar passes 10 ms).
func Stages(cells []result.Cell) (*Figure, error) {
	var with []result.Cell
	for _, c := range usable(cells) {
		if c.HasStages() {
			with = append(with, c)
		}
	}
	if len(with) == 0 {
		return nil, noData("stages", "no cell recorded a stage breakdown (engine.stages)")
	}
	slices.SortFunc(with, func(a, b result.Cell) int {
		return cmp.Or(cmp.Compare(a.System, b.System), cmp.Compare(a.Name, b.Name))
	})
	present := map[string]bool{}
	for _, c := range with {
		for _, st := range result.Stages {
			if _, ok := c.Quantiles[result.StageMetric(st)]; ok {
				present[st] = true
			}
		}
	}
	var panels []*plot.Plot
	for i, c := range with {
		p, err := stagePanel(&c, i == 0, present)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	cols := min(len(panels), maxStageCols)
	rows := (len(panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
		for c := range grid[r] {
			if i := r*cols + c; i < len(panels) {
				grid[r][c] = panels[i]
			}
		}
	}
	return &Figure{Name: "stages", Panels: grid, Width: vg.Length(cols) * panelWidth * 0.8, Height: vg.Length(rows) * panelHeight}, nil
}

// stagePalette holds one distinct colour per stage (result.Stages order):
// the network stages in cool tones, the store's in warm ones.
var stagePalette = []color.Color{
	color.RGBA{R: 0x9e, G: 0xca, B: 0xe1, A: 0xff}, // frame_read
	color.RGBA{R: 0x42, G: 0x92, B: 0xc6, A: 0xff}, // decode
	color.RGBA{R: 0x08, G: 0x45, B: 0x94, A: 0xff}, // queue_wait
	color.RGBA{R: 0xa1, G: 0xd9, B: 0x9b, A: 0xff}, // process
	color.RGBA{R: 0xfd, G: 0xae, B: 0x6b, A: 0xff}, // lock_wait
	color.RGBA{R: 0xe6, G: 0x55, B: 0x0d, A: 0xff}, // lock_hold
	color.RGBA{R: 0xa6, G: 0x36, B: 0x03, A: 0xff}, // flush_wait
	color.RGBA{R: 0x75, G: 0x6b, B: 0xb1, A: 0xff}, // reply_write
}

// stageColor gives each stage a fixed colour across panels and figures.
func stageColor(stage string) color.Color {
	if i := slices.Index(result.Stages, stage); i >= 0 && i < len(stagePalette) {
		return stagePalette[i]
	}
	return color.Gray{Y: 128}
}

// stagePanel draws one configuration's breakdown; legend only when asked
// (the first panel), listing every stage some panel has.
func stagePanel(c *result.Cell, legend bool, present map[string]bool) (*plot.Plot, error) {
	p := newPanel(cellLabel(c.System, c.Name), "percentile (of each stage)", "")
	div, unit := stageUnit(c)
	p.Y.Label.Text = "latency (" + unit + ")"
	width := vg.Points(26)
	var below *plotter.BarChart
	hi := 0.0
	stacked := make([]float64, len(stagePercentiles))
	for _, st := range result.Stages {
		q, ok := c.Quantiles[result.StageMetric(st)]
		if !ok {
			if legend && present[st] {
				// A stage only other panels have still gets its legend entry.
				p.Legend.Add(st, swatch(stageColor(st)))
			}
			continue
		}
		vals := make(plotter.Values, len(stagePercentiles))
		for i, sp := range stagePercentiles {
			vals[i] = pickQuantile(q, sp.q) / div
			stacked[i] += vals[i]
		}
		bc, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, err
		}
		bc.Color = stageColor(st)
		bc.LineStyle.Width = 0
		if below != nil {
			bc.StackOn(below)
		}
		below = bc
		p.Add(bc)
		if legend {
			p.Legend.Add(st, bc)
		}
	}
	var totals plotter.XYs
	if q, ok := c.Quantiles[result.StageMetric(result.StageTotal)]; ok {
		for i, sp := range stagePercentiles {
			totals = append(totals, plotter.XY{X: float64(i), Y: pickQuantile(q, sp.q) / div})
		}
		sc, err := plotter.NewScatter(totals)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(5), Shape: draw.CrossGlyph{}}
		p.Add(sc)
		if legend {
			p.Legend.Add("whole send", sc)
		}
	}
	for i := range stagePercentiles {
		hi = math.Max(hi, stacked[i])
	}
	for _, t := range totals {
		hi = math.Max(hi, t.Y)
	}
	names := make([]string, len(stagePercentiles))
	for i, sp := range stagePercentiles {
		names[i] = sp.label
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(stagePercentiles))-0.4
	p.Y.Min, p.Y.Max = 0, math.Max(hi*1.1, 1e-3)
	return p, nil
}

// swatchThumb is a legend thumbnail of a plain colour.
type swatchThumb struct{ c color.Color }

func swatch(c color.Color) swatchThumb { return swatchThumb{c} }

func (s swatchThumb) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(s.c, c.ClipPolygonY(pts))
}

// stageUnit picks µs, or ms when the panel's tallest value passes 10 ms.
func stageUnit(c *result.Cell) (float64, string) {
	hi := 0.0
	for m, q := range c.Quantiles {
		if result.IsStageMetric(m) {
			hi = math.Max(hi, q.P999)
		}
	}
	var sum float64
	for _, st := range result.Stages {
		sum += c.Quantiles[result.StageMetric(st)].P999
	}
	if math.Max(hi, sum) > 10e6 {
		return 1e6, "ms"
	}
	return 1e3, "µs"
}

package plots

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/experiments/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// rasterCells is the grid size above which the heat map is drawn as an
// image instead of one rectangle per cell (keeps SVGs small).
const rasterCells = 20000

// maxSegmentLabels bounds the labelled rows of the heat map.
const maxSegmentLabels = 24

// residencyGrid adapts result.Residency to plotter.GridXYZ: columns are
// times, rows are segments; absent entries (negative) are NaN, drawn blank.
type residencyGrid struct{ r *result.Residency }

func (g residencyGrid) Dims() (c, r int) { return len(g.r.T), len(g.r.Segments) }
func (g residencyGrid) X(c int) float64  { return g.r.T[c] }
func (g residencyGrid) Y(r int) float64  { return float64(r) }
func (g residencyGrid) Z(c, r int) float64 {
	row := g.r.Fraction[r]
	if c >= len(row) || row[c] < 0 || math.IsNaN(row[c]) {
		return math.NaN()
	}
	return math.Min(row[c], 1)
}
func (g residencyGrid) Min() float64 { return 0 }
func (g residencyGrid) Max() float64 { return 1 }

// ResidencyHeatmap draws a cell's page-cache residency map (measurement.md
// plot 5): one row per segment, time on x, colour = resident fraction
// (0 … 1, blank where the segment did not exist), with a colour bar. Segment
// names that are all digits are shown without leading zeros.
func ResidencyHeatmap(cell *result.Cell) (*Figure, error) {
	rs := cell.Residency
	if rs == nil || len(rs.Segments) == 0 || len(rs.T) == 0 {
		return nil, noData("residency", "cell %q has no residency matrix", cell.Name)
	}
	if len(rs.Fraction) != len(rs.Segments) {
		return nil, noData("residency", "cell %q: %d rows for %d segments", cell.Name, len(rs.Fraction), len(rs.Segments))
	}
	for i := 1; i < len(rs.T); i++ {
		if !(rs.T[i] > rs.T[i-1]) {
			return nil, noData("residency", "cell %q: times are not increasing", cell.Name)
		}
	}
	cm, err := residencyColorMap()
	if err != nil {
		return nil, err
	}
	hm := plotter.NewHeatMap(residencyGrid{rs}, cm.Palette(64))
	hm.Min, hm.Max = 0, 1
	hm.Rasterized = len(rs.T)*len(rs.Segments) > rasterCells

	p := basePanel("Page-cache residency: "+cellLabel(cell.SystemOrDefault(), cell.Name), "time (s)", "segment (start offset in the log)")
	p.Add(hm)
	p.Y.Tick.Marker = segmentTicks(rs.Segments)
	if len(rs.T) == 1 {
		p.X.Min, p.X.Max = rs.T[0]-0.5, rs.T[0]+0.5
	}

	bar := plot.New()
	bar.Y.Label.Text = "resident fraction"
	bar.Y.Label.TextStyle.Font.Size = vg.Points(9)
	bar.Y.Tick.Label.Font.Size = vg.Points(8)
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true, Colors: 64})
	bar.HideX()
	bar.Y.Min, bar.Y.Max = 0, 1
	fig := &Figure{
		Name:      "residency-" + result.FileStem(cell.Name, cell.Rep),
		Panels:    [][]*plot.Plot{{p, bar}},
		Width:     18 * vg.Centimeter,
		Height:    vg.Length(math.Min(20, 7+0.25*float64(len(rs.Segments)))) * vg.Centimeter,
		ColWidths: []float64{0.86, 0.14},
	}
	layers, err := residencyLayers(rs)
	if err != nil {
		return nil, err
	}
	if layers != nil {
		lo, hi := math.Min(p.X.Min, layers.X.Min), math.Max(p.X.Max, layers.X.Max)
		p.X.Min, p.X.Max, layers.X.Min, layers.X.Max = lo, hi, lo, hi
		fig.Panels = append(fig.Panels, []*plot.Plot{layers, nil})
		fig.Height *= 2
	}
	return fig, nil
}

// residencyColorMap runs from dark purple (not resident) to yellow (fully
// resident) with luminance rising linearly (viridis' control colours), so
// that "absent" (blank, white) is not confused with either end.
func residencyColorMap() (palette.ColorMap, error) {
	cm, err := moreland.NewLuminance([]color.Color{
		color.NRGBA{R: 0x44, G: 0x01, B: 0x54, A: 0xff},
		color.NRGBA{R: 0x3b, G: 0x52, B: 0x8b, A: 0xff},
		color.NRGBA{R: 0x21, G: 0x91, B: 0x8c, A: 0xff},
		color.NRGBA{R: 0x5e, G: 0xc9, B: 0x62, A: 0xff},
		color.NRGBA{R: 0xfd, G: 0xe7, B: 0x25, A: 0xff},
	})
	if err != nil {
		return nil, fmt.Errorf("plots: residency colour map: %w", err)
	}
	cm.SetMin(0)
	cm.SetMax(1)
	return cm, nil
}

func segmentTicks(names []string) plot.ConstantTicks {
	step := 1
	for len(names)/step > maxSegmentLabels {
		step++
	}
	ts := make(plot.ConstantTicks, 0, len(names))
	for i, n := range names {
		t := plot.Tick{Value: float64(i)}
		if i%step == 0 {
			t.Label = shortSegmentName(n)
		}
		ts = append(ts, t)
	}
	return ts
}

// shortSegmentName shows a segment named by its start offset (RocketMQ's
// 20-digit file names) as that offset in binary units: 1GiB, 1.5GiB.
func shortSegmentName(n string) string {
	if n == "" || strings.Trim(n, "0123456789") != "" {
		return n
	}
	v, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return n
	}
	return formatBytesIEC(v)
}

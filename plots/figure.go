package plots

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/brokerlab/brokerlab/experiments/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

var (
	// ErrNoData is returned by a figure function when the cells hold
	// nothing it can show; RenderRun skips such figures.
	ErrNoData = errors.New("plots: no data for this figure")
	// ErrRender is returned when drawing fails (gonum panicked).
	ErrRender = errors.New("plots: render failed")
)

// PNGDPI is the fixed resolution of PNG output.
const PNGDPI = 150

// Figure is a grid of panels rendered together. Panels[row][col] may be
// nil for an empty tile.
type Figure struct {
	Name          string // file stem under figures/
	Panels        [][]*plot.Plot
	Width, Height vg.Length
	// ColWidths optionally gives the columns' relative widths; nil means
	// equal columns whose data areas are aligned.
	ColWidths []float64
	// DPI is the PNG resolution; 0 means PNGDPI.
	DPI int
}

func (f *Figure) shape() (rows, cols int, err error) {
	rows = len(f.Panels)
	if rows == 0 || len(f.Panels[0]) == 0 {
		return 0, 0, fmt.Errorf("%w: figure %q has no panels", ErrRender, f.Name)
	}
	cols = len(f.Panels[0])
	for _, r := range f.Panels {
		if len(r) != cols {
			return 0, 0, fmt.Errorf("%w: figure %q has ragged rows", ErrRender, f.Name)
		}
	}
	if f.ColWidths != nil && len(f.ColWidths) != cols {
		return 0, 0, fmt.Errorf("%w: figure %q has %d column widths for %d columns", ErrRender, f.Name, len(f.ColWidths), cols)
	}
	if f.Width <= 0 || f.Height <= 0 {
		return 0, 0, fmt.Errorf("%w: figure %q has no size", ErrRender, f.Name)
	}
	return rows, cols, nil
}

// draw lays the panels out on c, turning a gonum panic into an error.
func (f *Figure) draw(c vg.CanvasSizer) (err error) {
	rows, cols, err := f.shape()
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: figure %q: %v", ErrRender, f.Name, r)
		}
	}()
	dc := draw.New(c)
	if rows == 1 && cols == 1 {
		if p := f.Panels[0][0]; p != nil {
			p.Draw(dc)
		}
		return nil
	}
	pad := vg.Points(6)
	if f.ColWidths == nil {
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: pad, PadY: pad, PadTop: pad, PadBottom: pad, PadLeft: pad, PadRight: pad}
		canvases := plot.Align(f.Panels, tiles, dc)
		for i, row := range f.Panels {
			for j, p := range row {
				if p != nil {
					p.Draw(canvases[i][j])
				}
			}
		}
		return nil
	}
	total := 0.0
	for _, w := range f.ColWidths {
		total += w
	}
	width := dc.Max.X - dc.Min.X
	height := dc.Max.Y - dc.Min.Y
	x := dc.Min.X
	for j := range cols {
		w := vg.Length(f.ColWidths[j]/total) * width
		for i := range rows {
			p := f.Panels[i][j]
			if p == nil {
				continue
			}
			top := dc.Max.Y - vg.Length(i)*height/vg.Length(rows)
			sub := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x + pad, Y: top - height/vg.Length(rows) + pad},
				Max: vg.Point{X: x + w - pad, Y: top - pad},
			}}
			p.Draw(sub)
		}
		x += w
	}
	return nil
}

// WriteSVG renders the figure as SVG.
func (f *Figure) WriteSVG(w io.Writer) error {
	c := vgsvg.New(f.Width, f.Height)
	if err := f.draw(c); err != nil {
		return err
	}
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("plots: write svg %q: %w", f.Name, err)
	}
	return nil
}

// WritePNG renders the figure as PNG at f.DPI (default PNGDPI).
func (f *Figure) WritePNG(w io.Writer) error {
	if _, _, err := f.shape(); err != nil {
		return err
	}
	dpi := f.DPI
	if dpi <= 0 {
		dpi = PNGDPI
	}
	c := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(dpi))
	if err := f.draw(c); err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w); err != nil {
		return fmt.Errorf("plots: write png %q: %w", f.Name, err)
	}
	return nil
}

// Save renders the figure into dir as <Name>.png and <Name>.svg, each
// written atomically (nothing is written when rendering fails), and
// returns the two paths.
func (f *Figure) Save(dir string) ([]string, error) {
	var png, svg bytes.Buffer
	if err := f.WritePNG(&png); err != nil {
		return nil, err
	}
	if err := f.WriteSVG(&svg); err != nil {
		return nil, err
	}
	paths := []string{filepath.Join(dir, f.Name+".png"), filepath.Join(dir, f.Name+".svg")}
	if err := result.WriteFileAtomic(paths[0], png.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if err := result.WriteFileAtomic(paths[1], svg.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return paths, nil
}

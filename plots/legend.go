package plots

import (
	"reflect"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// legendWidth is the width of the legend column added beside a figure.
var legendWidth = 7 * vg.Centimeter

// legendTextWidth estimates the width of a legend's longest label (7 pt
// Liberation Serif: about 0.5 em per character) plus its thumbnail.
func legendTextWidth(l plot.Legend) vg.Length {
	v := reflect.ValueOf(l).FieldByName("entries")
	longest := 0
	for i := 0; v.IsValid() && i < v.Len(); i++ {
		if t := v.Index(i).FieldByName("text"); t.IsValid() {
			longest = max(longest, len([]rune(t.String())))
		}
	}
	return l.ThumbnailWidth + vg.Points(14) + vg.Length(float64(longest)*0.5)*l.TextStyle.Font.Size
}

// legendLen is the number of entries of a legend (gonum keeps them
// unexported; reading a slice's length through reflect is safe).
func legendLen(l plot.Legend) int {
	v := reflect.ValueOf(l).FieldByName("entries")
	if !v.IsValid() {
		return 0
	}
	return v.Len()
}

// legendOutside moves legends out of the data: for each row, the legend of
// its first panel that has one goes into a new last column (a panel with
// hidden axes holding only the legend), so no entry ever covers a line or a
// bar. Panels' other legends are moved too when the row has exactly one.
// The figure grows by legendWidth.
func legendOutside(f *Figure) {
	if f == nil || len(f.Panels) == 0 {
		return
	}
	any := false
	width := legendWidth
	col := make([]*plot.Plot, len(f.Panels))
	for r, row := range f.Panels {
		for _, p := range row {
			if p == nil || legendLen(p.Legend) == 0 {
				continue
			}
			lp := plot.New()
			lp.HideAxes()
			lp.Legend = p.Legend // copies the entries
			width = max(width, legendTextWidth(p.Legend))
			lp.Legend.Top, lp.Legend.Left = true, true
			lp.Legend.XOffs, lp.Legend.YOffs = 0, 0
			style := p.Legend
			p.Legend = plot.NewLegend()
			p.Legend.TextStyle = style.TextStyle
			p.Legend.ThumbnailWidth = style.ThumbnailWidth
			col[r] = lp
			any = true
			break
		}
	}
	if !any {
		return
	}
	cols := len(f.Panels[0])
	widths := f.ColWidths
	if widths == nil {
		widths = make([]float64, cols)
		for i := range widths {
			widths[i] = float64(f.Width) / float64(cols)
		}
	} else {
		total := 0.0
		for _, w := range widths {
			total += w
		}
		scaled := make([]float64, cols)
		for i, w := range widths {
			scaled[i] = w / total * float64(f.Width)
		}
		widths = scaled
	}
	f.ColWidths = append(widths, float64(width))
	for r := range f.Panels {
		f.Panels[r] = append(f.Panels[r], col[r])
	}
	f.Width += width
}

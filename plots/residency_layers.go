package plots

import (
	"math"

	"github.com/brokerlab/brokerlab/experiments/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// residencyLayers is the panel under the residency map when the samples
// carry cachestat layers or a model: the store's resident, dirty and
// writeback MiB over time (solid), the model's resident and dirty MiB
// (dashed, same colours) and its predicted onsets of background writeback
// and throttling (vertical lines). It is nil when there is nothing to draw.
func residencyLayers(rs *result.Residency) (*plot.Plot, error) {
	m := rs.Model
	measured := len(rs.ResidentMiB) == len(rs.T) && len(rs.T) > 0
	modelled := m != nil && len(m.T) > 0 && len(m.ResidentMiB) == len(m.T) && len(m.DirtyMiB) == len(m.T)
	if !measured && !modelled {
		return nil, nil
	}
	p := basePanel("Store page cache: measured (solid) and model (dashed)", "time (s)", "MiB")
	xlo, xhi, yhi := math.Inf(1), math.Inf(-1), 1.0
	line := func(ts, vs []float64, i int, label string, dashes []vg.Length) error {
		if len(vs) != len(ts) || len(ts) == 0 {
			return nil
		}
		xys := make(plotter.XYs, 0, len(ts))
		for k := range ts {
			if math.IsNaN(vs[k]) || vs[k] < 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: ts[k], Y: vs[k]})
			xlo, xhi, yhi = math.Min(xlo, ts[k]), math.Max(xhi, ts[k]), math.Max(yhi, vs[k])
		}
		if len(xys) == 0 {
			return nil
		}
		return addLine(p, xys, i, label, dashes)
	}
	dash := []vg.Length{vg.Points(4), vg.Points(3)}
	if measured {
		for _, l := range []struct {
			vs    []float64
			i     int
			label string
		}{{rs.ResidentMiB, 0, "resident"}, {rs.DirtyMiB, 1, "dirty"}, {rs.WritebackMiB, 2, "writeback"}} {
			if err := line(rs.T, l.vs, l.i, l.label, nil); err != nil {
				return nil, err
			}
		}
	}
	if modelled {
		if err := line(m.T, m.ResidentMiB, 0, "model resident", dash); err != nil {
			return nil, err
		}
		if err := line(m.T, m.DirtyMiB, 1, "model dirty", dash); err != nil {
			return nil, err
		}
	}
	if math.IsInf(xlo, 0) {
		return nil, nil
	}
	if modelled {
		for i, at := range []float64{m.BackgroundAt, m.ThrottleAt} {
			if happens := []bool{m.Background, m.Throttle}[i]; happens && at >= xlo && at <= xhi {
				p.Add(refLine(at, 0, at, yhi*headroom(0), markerColor([]string{"writeback", "throttle"}[i], i), dash))
			}
		}
	}
	if xhi <= xlo {
		xlo, xhi = xlo-0.5, xhi+0.5
	}
	p.X.Min, p.X.Max = xlo, xhi
	p.Y.Min, p.Y.Max = 0, yhi*headroom(0)
	p.Legend.Top = true
	return p, nil
}

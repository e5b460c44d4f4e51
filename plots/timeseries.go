package plots

import (
	"math"
	"slices"

	"github.com/brokerlab/brokerlab/experiments/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Time-series fields: the Point fields by their JSON names; any other name
// is looked up in Point.Extra.
const (
	FieldRate        = "rate"
	FieldMBps        = "mb_per_sec"
	FieldP50         = "p50"
	FieldP99         = "p99"
	FieldP999        = "p999"
	FieldResidentMiB = "resident_mib"
	FieldDirtyMiB    = "dirty_mib"
	// FieldReplicationLag is a replicated cell's master-to-slave lag at
	// the end of each interval (Point.Extra).
	FieldReplicationLag = "replication_lag_bytes"
)

func seriesField(pt *result.Point, field string) (float64, bool) {
	switch field {
	case FieldRate:
		return pt.Rate, true
	case FieldMBps:
		return pt.MBps, true
	case FieldP50:
		return pt.P50, true
	case FieldP99:
		return pt.P99, true
	case FieldP999:
		return pt.P999, true
	case FieldResidentMiB:
		return pt.ResidentMiB, true
	case FieldDirtyMiB:
		return pt.DirtyMiB, true
	}
	v, ok := pt.Extra[field]
	return v, ok
}

func isLatencyField(field string) bool {
	return field == FieldP50 || field == FieldP99 || field == FieldP999
}

func fieldTitle(field string) string {
	switch field {
	case FieldRate:
		return "throughput (msg/s)"
	case FieldMBps:
		return "throughput (MB/s)"
	case FieldP50, FieldP99, FieldP999:
		return quantileDisplay(field) + " latency"
	case FieldResidentMiB:
		return "resident (MiB)"
	case FieldDirtyMiB:
		return "dirty (MiB)"
	case FieldReplicationLag:
		return "replication lag (bytes behind the master)"
	}
	return field
}

// TimeSeries draws one interval field (FieldRate, FieldP99, …, or an Extra
// key) over time, one line per cell that has it, with each cell's markers
// as vertical lines coloured by kind (rolls grey, stalls red) and one legend
// entry per kind. Latencies are scaled to a readable unit; the y axis
// starts at 0.
func TimeSeries(cells []result.Cell, field string) (*Figure, error) {
	var lines []labelledLine
	var markers []result.Marker
	yMax, tMin, tMax := 0.0, math.Inf(1), math.Inf(-1)
	for _, c := range usable(cells) {
		var xys plotter.XYs
		for i := range c.Series {
			pt := &c.Series[i]
			v, ok := seriesField(pt, field)
			if !ok || math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(pt.T) || math.IsInf(pt.T, 0) {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.T, Y: v})
			yMax, tMin, tMax = math.Max(yMax, v), math.Min(tMin, pt.T), math.Max(tMax, pt.T)
		}
		if len(xys) == 0 {
			continue
		}
		lines = append(lines, labelledLine{cellLabel(c.SystemOrDefault(), c.Name), xys})
		for _, m := range c.Markers {
			if !math.IsNaN(m.T) && !math.IsInf(m.T, 0) {
				markers = append(markers, m)
			}
		}
	}
	if len(lines) == 0 {
		return nil, noData("time series", "no cell has a %q series", field)
	}
	div, ylabel := 1.0, fieldTitle(field)
	if isLatencyField(field) {
		var unit string
		div, unit = latencyUnit(yMax)
		ylabel += " (" + unit + ")"
	}
	p := newPanel(fieldTitle(field)+" over time", "time (s)", ylabel)
	kindCount := 0
	seenKind := map[string]bool{}
	for _, m := range markers {
		if !seenKind[m.Kind] {
			seenKind[m.Kind] = true
			kindCount++
		}
	}
	yTop := yMax / div * headroom(len(lines)+kindCount)
	if !(yTop > 0) {
		yTop = 1
	}
	var kinds []string
	for _, m := range markers {
		if !slices.Contains(kinds, m.Kind) {
			kinds = append(kinds, m.Kind)
		}
	}
	slices.Sort(kinds)
	for ki, kind := range kinds {
		col := markerColor(kind, ki)
		for _, m := range markers {
			if m.Kind == kind {
				p.Add(refLine(m.T, 0, m.T, yTop, col, dashShort))
				tMin, tMax = math.Min(tMin, m.T), math.Max(tMax, m.T)
			}
		}
	}
	if err := addLines(p, lines, div); err != nil {
		return nil, err
	}
	for ki, kind := range kinds { // legend entries after the lines'
		name := kind
		if name == "" {
			name = "marker"
		}
		p.Legend.Add(name, refLine(0, 0, 1, 1, markerColor(kind, ki), dashShort))
	}
	p.Y.Min, p.Y.Max = 0, yTop
	p.Y.Tick.Marker = plot.TickerFunc(siTicks)
	if tMax > tMin {
		p.X.Min, p.X.Max = tMin, tMax
	}
	return &Figure{Name: "timeseries-" + safeName(field), Panels: [][]*plot.Plot{{p}}, Width: 18 * cmLength, Height: 10 * cmLength}, nil
}

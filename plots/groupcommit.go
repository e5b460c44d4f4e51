package plots

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/brokerlab/brokerlab/experiments/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// maxBatchSeries bounds the batch-size histogram's bar series.
const maxBatchSeries = 6

// GroupCommit draws group-commit efficiency (measurement.md plot 2):
// throughput and p99 (primary metric) against the producer count
// (result.ParamConc, log2 axis), one line per configuration (all other
// parameters: the flush policy and the rest), medians over repetitions;
// and, when cells carry FlushBatches, a third panel with the realised
// flush batch-size distribution (fraction of flushes per bucket) of up to
// six cells. It needs a configuration run at two or more producer counts.
func GroupCommit(cells []result.Cell) (*Figure, error) {
	ok := usable(cells)
	var own []result.Summary
	for _, sm := range result.Aggregate(ok) {
		if sm.System != result.SystemFio {
			own = append(own, sm)
		}
	}
	lines := sweepLines(own, result.ParamConc, parseCount)
	if longestSweep(lines) < 2 {
		return nil, noData("group commit", "no configuration was run at two or more producer counts")
	}
	thr := newPanel("Throughput vs producers", "producers", "throughput (msg/s)")
	lat := newPanel("p99 vs producers", "producers", "")
	hiLat, loLat := 0.0, math.Inf(1)
	for _, l := range lines {
		for _, pt := range l.points {
			if st, ok := parseSelector("p99").summary(pt.sm); ok {
				hiLat, loLat = math.Max(hiLat, st.Median), math.Min(loLat, st.Median)
			}
		}
	}
	div, unit := latencyUnit(hiLat)
	lat.Y.Label.Text = "p99 latency (" + unit + ")"
	thrLo := math.Inf(1)
	xlo, xhi, thrHi, hiLatW := math.Inf(1), 0.0, 0.0, 0.0
	for i, l := range lines {
		var txy, lxy plotter.XYs
		var tlo, thi, llo, lhi []float64
		for _, pt := range l.points {
			if pt.x <= 0 {
				continue
			}
			xlo, xhi = math.Min(xlo, pt.x), math.Max(xhi, pt.x)
			if v := pt.sm.MsgPerSec.Median; v > 0 {
				txy = append(txy, plotter.XY{X: pt.x, Y: v})
				tlo, thi = append(tlo, pt.sm.MsgPerSec.Min), append(thi, pt.sm.MsgPerSec.Max)
				thrHi = math.Max(thrHi, pt.sm.MsgPerSec.Max)
				thrLo = math.Min(thrLo, math.Max(pt.sm.MsgPerSec.Min, v/2))
			}
			if st, ok := parseSelector("p99").summary(pt.sm); ok {
				lxy = append(lxy, plotter.XY{X: pt.x, Y: st.Median / div})
				llo, lhi = append(llo, st.Min/div), append(lhi, st.Max/div)
				hiLatW = math.Max(hiLatW, st.Max/div)
			}
		}
		if len(txy) > 0 {
			if err := addLine(thr, txy, i, l.label, seriesDashes(i)); err != nil {
				return nil, err
			}
			if err := addWhiskers(thr, txy, tlo, thi, i); err != nil {
				return nil, err
			}
		}
		if len(lxy) > 0 {
			if err := addLine(lat, lxy, i, "", seriesDashes(i)); err != nil {
				return nil, err
			}
			if err := addWhiskers(lat, lxy, llo, lhi, i); err != nil {
				return nil, err
			}
		}
	}
	if !(xhi > 0) {
		return nil, noData("group commit", "no positive producer counts")
	}
	for _, p := range []*plot.Plot{thr, lat} {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = pow2Ticks(formatNumber)
		p.X.Min, p.X.Max = xlo/1.15, xhi*1.15
	}
	setThroughputY(thr, thrLo, thrHi)
	if hiLat > 0 {
		setLogY(lat, loLat/div, math.Max(hiLat/div, hiLatW))
	}
	row := []*plot.Plot{thr, lat}
	if hist, err := batchPanel(representatives(ok)); err == nil {
		row = append(row, hist)
	}
	return &Figure{Name: "group-commit", Panels: [][]*plot.Plot{row}, Width: vg.Length(len(row)) * panelWidth, Height: panelHeight}, nil
}

// batchPanel draws the flush batch-size distributions of up to
// maxBatchSeries cells as grouped bars: x = bucket, y = fraction of flushes.
func batchPanel(cells []result.Cell) (*plot.Plot, error) {
	var with []result.Cell
	for _, c := range cells {
		var total int64
		for _, b := range c.FlushBatches {
			total += max(b.Count, 0)
		}
		if total > 0 {
			with = append(with, c)
		}
	}
	if len(with) == 0 {
		return nil, noData("flush batches", "no cell has flush batch sizes")
	}
	if len(with) > maxBatchSeries { // keep an even spread over the sweep
		picked := make([]result.Cell, 0, maxBatchSeries)
		for i := range maxBatchSeries {
			picked = append(picked, with[i*(len(with)-1)/(maxBatchSeries-1)])
		}
		with = picked
	}
	var bounds []int64
	for _, c := range with {
		for _, b := range c.FlushBatches {
			if !slices.Contains(bounds, b.UpTo) {
				bounds = append(bounds, b.UpTo)
			}
		}
	}
	slices.SortFunc(bounds, cmp.Compare)
	p := newPanel("Flush batch sizes", "messages per flush (≤)", "fraction of flushes")
	labels := make([]string, len(bounds))
	for i, b := range bounds {
		labels[i] = formatNumber(float64(b))
	}
	p.NominalX(labels...)
	width := barWidth(len(bounds), len(with))
	for i, c := range with {
		var total int64
		counts := map[int64]int64{}
		for _, b := range c.FlushBatches {
			if b.Count > 0 {
				counts[b.UpTo] += b.Count
				total += b.Count
			}
		}
		vals := make(plotter.Values, len(bounds))
		for j, b := range bounds {
			vals[j] = float64(counts[b]) / float64(total)
		}
		bc, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, err
		}
		bc.Color = seriesColor(i)
		bc.LineStyle.Width = 0
		bc.Offset = vg.Length(float64(i)-float64(len(with)-1)/2) * width
		p.Add(bc)
		p.Legend.Add(cellLabel(c.SystemOrDefault(), c.Name)+" ("+strconv.FormatInt(total, 10)+" flushes)", bc)
	}
	p.Y.Min, p.Y.Max = 0, 1.25
	p.Legend.Left = false
	return p, nil
}

// barWidth fits nSeries bars into 80% of a group's share of a panel.
func barWidth(nGroups, nSeries int) vg.Length {
	avail := (panelWidth - 2.5*vg.Centimeter) * 0.8 / vg.Length(max(nGroups, 1)) / vg.Length(max(nSeries, 1))
	return max(min(avail, vg.Points(18)), vg.Points(1))
}

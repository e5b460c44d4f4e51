package plots

import (
	"github.com/brokerlab/brokerlab/experiments/result"
)

// ServiceVsResponse draws, for each open-loop cell, the percentile spectrum
// of its service time (from the actual send) beside its response time (from
// the intended send): the gap between the two lines is what coordinated
// omission hides. Cells without both spectra are skipped.
func ServiceVsResponse(cells []result.Cell) (*Figure, error) {
	const metric = "latency"
	var lines []result.Cell
	for _, c := range usable(cells) {
		svc, resp := c.Spectrum["service"], c.Spectrum["response"]
		if len(svc) < 2 || len(resp) < 2 {
			continue
		}
		for _, m := range []struct {
			name string
			pts  []result.SpectrumPoint
		}{{"service", svc}, {"response", resp}} {
			l := result.Cell{Name: c.Name + " " + m.name + " time", System: c.SystemOrDefault(),
				Spectrum: map[string][]result.SpectrumPoint{metric: m.pts}}
			if q, ok := c.Quantiles[m.name]; ok {
				l.Quantiles = map[string]result.Quantiles{metric: q}
			}
			lines = append(lines, l)
		}
		if len(lines) >= 6 {
			break
		}
	}
	if len(lines) == 0 {
		return nil, noData("service vs response", "no cell has both service and response spectra (open loop)")
	}
	f, err := LatencyByPercentile(lines, metric)
	if err != nil {
		return nil, err
	}
	f.Panels[0][0].Title.Text = "Service time vs response time from the intended send"
	f.Name = "service-vs-response"
	return f, nil
}

// EndToEnd draws, for each cell with a tailing consumer, the percentile
// spectrum of its end-to-end latency (send → receipt by the tailing
// consumer; e2e_intended from the intended send in open loop) beside the
// producer's own service and response times: what a subscriber waits
// against what the producer sees. Cells without an e2e spectrum are
// skipped.
func EndToEnd(cells []result.Cell) (*Figure, error) {
	const metric = "latency"
	var lines []result.Cell
	for _, c := range usable(cells) {
		if len(c.Spectrum["e2e"]) < 2 || (len(c.Spectrum["service"]) < 2 && len(c.Spectrum["response"]) < 2) {
			continue // nothing to set the end-to-end latency beside
		}
		for _, m := range []struct{ key, label string }{
			{"service", "producer service time"}, {"response", "producer response time (intended send)"},
			{"e2e", "end to end (tailing consumer)"}, {"e2e_intended", "end to end from the intended send"},
		} {
			pts := c.Spectrum[m.key]
			if len(pts) < 2 {
				continue
			}
			l := result.Cell{Name: c.Name + " " + m.label, System: c.SystemOrDefault(),
				Spectrum: map[string][]result.SpectrumPoint{metric: pts}}
			if q, ok := c.Quantiles[m.key]; ok {
				l.Quantiles = map[string]result.Quantiles{metric: q}
			}
			lines = append(lines, l)
		}
		if len(lines) >= 8 {
			break
		}
	}
	if len(lines) == 0 {
		return nil, noData("end to end", "no cell has a tailing consumer's e2e spectrum")
	}
	f, err := LatencyByPercentile(lines, metric)
	if err != nil {
		return nil, err
	}
	f.Panels[0][0].Title.Text = "End-to-end latency (tailing consumer) beside the producer's"
	f.Name = "end-to-end"
	return f, nil
}

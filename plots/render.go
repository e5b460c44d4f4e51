package plots

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// RenderRunTo draws every figure that applies to a run directory (see
// RunFigures) into figDir/<name>.png and .svg and returns the written
// paths, in a fixed order. Figures are derived data: figDir must not be the
// run directory itself (a committed run holds only its result files). A
// figure that fails to build or draw is reported in the joined error while
// the others are still written. A run for which no figure applies is an
// error wrapping ErrNoData.
func RenderRunTo(runDir, figDir string) ([]string, error) {
	if a, b := absClean(runDir), absClean(figDir); a == b || strings.HasPrefix(b, a+string(filepath.Separator)) {
		return nil, fmt.Errorf("plots: figures go outside the run directory %s (got %s)", runDir, figDir)
	}
	figs, buildErr := RunFigures(runDir)
	if len(figs) == 0 {
		return nil, buildErr
	}
	if err := os.MkdirAll(figDir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	var paths []string
	errs := []error{buildErr}
	for _, fig := range figs {
		written, err := fig.Save(figDir)
		if err != nil {
			errs = append(errs, fmt.Errorf("plots: %s: %w", fig.Name, err))
			continue
		}
		paths = append(paths, written...)
	}
	return paths, errors.Join(errs...)
}

func absClean(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return a
}

// RunFigures builds, without drawing, every figure that applies to a run
// directory. It reads only the run directory: result.json or result.json.gz
// (or bench.txt when neither exists) and the cells' .hgrm files. Which figures
// apply is decided from the data; the experiment name prefixes the titles:
//
//	latency-by-percentile[-<metric>]  a metric with spectra (stored or .hgrm) in some cell
//	frontier                          a configuration run at ≥2 rates
//	group-commit                      a configuration run at ≥2 producer counts
//	segment-sweep                     a configuration run at ≥2 segment sizes
//	timeseries-p99, -rate, -dirty_mib cells with interval series (markers drawn on each)
//	residency-<cell stem>             each cell with a residency matrix
//	bars-msg_s, bars-p99              ≥2 configurations and none of the three sweeps
//	fs-msg_s, fs-p99, fs-flush_mean_ns cells on ≥2 file systems (engine fs), fio per file system
//	stages                            cells with a per-stage latency breakdown (engine stages)
//	model-check-resident, -dirty      cells with the page-cache model's check (model / measured)
//
// Repetitions are reduced to one representative cell (median p99) for the
// per-cell figures and to medians for the sweeps; failed cells are left
// out. Figures without data are skipped; a figure that fails to build is
// reported in the joined error. When nothing applies the error wraps
// ErrNoData (or the load error, e.g. result.ErrNoResult).
func RunFigures(runDir string) ([]*Figure, error) {
	run, err := result.LoadRun(runDir)
	if err != nil {
		return nil, err
	}
	cells := usable(run.Result.Cells)
	if len(cells) == 0 {
		return nil, fmt.Errorf("%w: %s: no successful cells", ErrNoData, runDir)
	}
	reps := representatives(cells)

	type build struct {
		name string
		fn   func() (*Figure, error)
	}
	var builds []build
	add := func(name string, fn func() (*Figure, error)) { builds = append(builds, build{name, fn}) }

	spectra, metrics := loadSpectra(runDir, reps)
	for _, m := range metrics {
		name := "latency-by-percentile"
		if len(metrics) > 1 {
			name += "-" + safeName(m)
		}
		add(name, func() (*Figure, error) {
			f, err := LatencyByPercentile(spectra, m)
			if err == nil {
				f.Name = name
			}
			return f, err
		})
	}
	add("service-vs-response", func() (*Figure, error) { return ServiceVsResponse(spectra) })
	add("end-to-end", func() (*Figure, error) { return EndToEnd(spectra) })
	sweeps := 0
	for _, s := range []struct {
		name string
		fn   func([]result.Cell) (*Figure, error)
	}{{"frontier", Frontier}, {"group-commit", GroupCommit}, {"segment-sweep", SegmentSweep}} {
		f, err := s.fn(cells)
		if !errors.Is(err, ErrNoData) {
			sweeps++
		}
		add(s.name, func() (*Figure, error) { return f, err })
	}
	add("hiccups", func() (*Figure, error) { return Hiccups(runDir, reps) })
	add("stages", func() (*Figure, error) { return Stages(reps) })
	if anySeriesHas(reps, FieldReplicationLag) {
		add("timeseries-"+FieldReplicationLag, func() (*Figure, error) { return TimeSeries(reps, FieldReplicationLag) })
	}
	for _, field := range []string{FieldP99, FieldRate, FieldDirtyMiB} {
		add("timeseries-"+field, func() (*Figure, error) {
			if field == FieldDirtyMiB && !anySeriesNonZero(reps, field) {
				return nil, noData("time series", "dirty_mib is zero throughout")
			}
			return TimeSeries(reps, field)
		})
	}
	for i := range reps {
		if reps[i].Residency != nil {
			add("residency", func() (*Figure, error) { return ResidencyHeatmap(&reps[i]) })
		}
	}
	// Bars of one extra per configuration, under a figure name of their own.
	extraBars := func(name, extra string) {
		add(name, func() (*Figure, error) {
			f, err := Bars(cells, extra)
			if err == nil {
				f.Name = name
			}
			return f, err
		})
	}
	// Lagging consumers' catch-up rate (cold reads), per configuration.
	if anyExtra(cells, "catchup_mb_per_sec") {
		extraBars("bars-catchup", "catchup_mb_per_sec")
	}
	// Bytes the store's device wrote per byte the log appended (diskstats),
	// per configuration.
	if anyExtra(cells, "write_amplification") && countConfigs(cells) >= 2 {
		extraBars("bars-write-amp", "write_amplification")
	}
	// The page-cache model against the measurement (model / measured
	// steady-state resident and dirty MiB; 1 is exact, issue 33's target
	// 0.8–1.2), per configuration; the time courses are in the residency
	// figures' lower panels.
	if anyExtra(cells, result.ExtraModelResident) {
		extraBars("model-check-resident", result.ExtraModelResident)
	}
	if anyExtra(cells, result.ExtraModelDirty) {
		extraBars("model-check-dirty", result.ExtraModelDirty)
	}
	if sweeps == 0 && countConfigs(cells) >= 2 {
		for _, metric := range []string{"msg/s", "p99"} {
			add("bars", func() (*Figure, error) { return Bars(cells, metric) })
		}
	}
	// The file system as the x groups, each with its own fio ceilings.
	if varies(cells, "fs") {
		for _, metric := range []string{"msg/s", "p99", "flush_mean_ns"} {
			add("filesystems", func() (*Figure, error) { return BarsBy(cells, metric, "fs") })
		}
	}

	var figs []*Figure
	var errs []error
	for _, b := range builds {
		fig, err := b.fn()
		if errors.Is(err, ErrNoData) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("plots: %s: %w", b.name, err))
			continue
		}
		if p := fig.Panels[0][0]; p != nil {
			if t := run.Result.Experiment; t != "" {
				p.Title.Text = t + ": " + p.Title.Text
			}
			if sub := describeRun(run, cells); sub != "" {
				p.Title.Text += "\n" + sub
				// The other panels of the row get as many title lines, so
				// that their data areas stay level with the first's.
				pad := strings.Repeat("\n\u00a0", strings.Count(sub, "\n")+1)
				for _, q := range fig.Panels[0][1:] {
					if q != nil && q.Title.Text != "" {
						q.Title.Text += pad
					}
				}
			}
		}
		legendOutside(fig)
		figs = append(figs, fig)
	}
	if len(figs) == 0 && len(errs) == 0 {
		return nil, fmt.Errorf("%w: %s: no figure applies", ErrNoData, runDir)
	}
	return figs, errors.Join(errs...)
}

// loadSpectra returns copies of the cells with Spectrum filled from .hgrm
// files where missing, and the sorted metrics for which some cell has one.
func loadSpectra(runDir string, cells []result.Cell) ([]result.Cell, []string) {
	out := make([]result.Cell, len(cells))
	have := map[string]bool{}
	for i, c := range cells {
		candidates := map[string]bool{}
		for m := range c.Quantiles {
			candidates[m] = true
		}
		for m := range c.Spectrum {
			candidates[m] = true
		}
		for m := range c.Files.Hgrm {
			candidates[m] = true
		}
		spec := map[string][]result.SpectrumPoint{}
		for _, m := range slices.Sorted(maps.Keys(candidates)) {
			if pts, err := result.CellSpectrum(runDir, &c, m); err == nil && len(pts) > 1 {
				spec[m] = pts
				have[m] = true
			}
		}
		c.Spectrum = spec
		out[i] = c
	}
	return out, slices.Sorted(maps.Keys(have))
}

// anySeriesHas reports whether some cell's series carries field.
func anySeriesHas(cells []result.Cell, field string) bool {
	for _, c := range cells {
		for i := range c.Series {
			if _, ok := seriesField(&c.Series[i], field); ok {
				return true
			}
		}
	}
	return false
}

func anySeriesNonZero(cells []result.Cell, field string) bool {
	for _, c := range cells {
		for i := range c.Series {
			if v, ok := seriesField(&c.Series[i], field); ok && v != 0 {
				return true
			}
		}
	}
	return false
}

func anyExtra(cells []result.Cell, key string) bool {
	for _, c := range cells {
		if _, ok := c.Extra[key]; ok {
			return true
		}
	}
	return false
}

func countConfigs(cells []result.Cell) int {
	seen := map[string]bool{}
	for _, c := range cells {
		if c.SystemOrDefault() == result.SystemBrokerlab {
			seen[c.Name] = true
		}
	}
	return len(seen)
}

// varies reports whether brokerlab's cells take ≥2 values of a name
// parameter.
func varies(cells []result.Cell, key string) bool {
	var first string
	seen := false
	for _, c := range cells {
		if c.SystemOrDefault() != result.SystemBrokerlab {
			continue
		}
		v, ok := c.Params[key]
		if !ok {
			continue
		}
		if seen && v != first {
			return true
		}
		first, seen = v, true
	}
	return false
}

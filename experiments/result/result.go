package result

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// SchemaVersion is written into result.json and manifest.json.
const SchemaVersion = 1

// Result is the content of result.json.
type Result struct {
	Schema     int    `json:"schema"`
	Experiment string `json:"experiment"`
	Cells      []Cell `json:"cells"`
}

// Normalize fills derived fields in place: Schema when zero, System when
// empty, and Params from Name when nil (left nil for a malformed name, which
// Validate reports).
func (r *Result) Normalize() {
	if r.Schema == 0 {
		r.Schema = SchemaVersion
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.System == "" {
			c.System = SystemBrokerlab
		}
		if c.Params == nil {
			if m, err := ParamMap(c.Name); err == nil {
				c.Params = m
			}
		}
	}
}

// Validate reports the first reason the result cannot be stored faithfully:
// a malformed cell name, Params that disagree with the name, duplicate
// (system, name, rep), a residency matrix whose shape does not match its
// axes, or a NaN/±Inf number (JSON cannot hold them). Errors wrap
// ErrInvalid or ErrBadName and name the cell and field.
func (r *Result) Validate() error {
	type key struct {
		system, name string
		rep          int
	}
	seen := make(map[key]bool, len(r.Cells))
	for i := range r.Cells {
		c := &r.Cells[i]
		where := fmt.Sprintf("cells[%d] %q", i, c.Name)
		ps, err := ParamMap(c.Name)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if c.Params != nil && !maps.Equal(ps, c.Params) {
			return fmt.Errorf("%w: %s: params %v disagree with the name", ErrInvalid, where, c.Params)
		}
		k := key{c.SystemOrDefault(), c.Name, c.Rep}
		if seen[k] {
			return fmt.Errorf("%w: %s: duplicate system %q rep %d", ErrInvalid, where, k.system, c.Rep)
		}
		seen[k] = true
		if err := c.checkShape(); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalid, where, err)
		}
		if field, ok := c.firstNonFinite(); !ok {
			return fmt.Errorf("%w: %s: %s is NaN or infinite", ErrInvalid, where, field)
		}
	}
	return nil
}

func (c *Cell) checkShape() error {
	if rs := c.Residency; rs != nil {
		if len(rs.Fraction) != len(rs.Segments) {
			return fmt.Errorf("residency has %d rows for %d segments", len(rs.Fraction), len(rs.Segments))
		}
		for s, row := range rs.Fraction {
			if len(row) != len(rs.T) {
				return fmt.Errorf("residency row %d has %d values for %d times", s, len(row), len(rs.T))
			}
		}
	}
	return nil
}

// firstNonFinite returns the path of the first NaN/±Inf field, or ok.
func (c *Cell) firstNonFinite() (field string, ok bool) {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	if bad(c.MsgPerSec) {
		return "msg_per_sec", false
	}
	if bad(c.MBPerSec) {
		return "mb_per_sec", false
	}
	if bad(c.ServerCPUSeconds) {
		return "server_cpu_s", false
	}
	if bad(c.ServerCPUMicrosPerMsg) {
		return "server_cpu_us_per_msg", false
	}
	for _, m := range slices.Sorted(maps.Keys(c.Quantiles)) {
		q := c.Quantiles[m]
		for _, v := range []float64{q.P50, q.P90, q.P99, q.P999, q.P9999, q.Max, q.Mean} {
			if bad(v) {
				return "quantiles." + m, false
			}
		}
	}
	for _, m := range slices.Sorted(maps.Keys(c.Spectrum)) {
		for i, p := range c.Spectrum[m] {
			if bad(p.Percentile) || bad(p.ValueNs) {
				return fmt.Sprintf("spectrum.%s[%d]", m, i), false
			}
		}
	}
	for i, p := range c.Series {
		for _, v := range []float64{p.T, p.Rate, p.MBps, p.P50, p.P99, p.P999, p.ResidentMiB, p.DirtyMiB} {
			if bad(v) {
				return fmt.Sprintf("series[%d]", i), false
			}
		}
		for _, k := range slices.Sorted(maps.Keys(p.Extra)) {
			if bad(p.Extra[k]) {
				return fmt.Sprintf("series[%d].extra.%s", i, k), false
			}
		}
	}
	for i, m := range c.Markers {
		if bad(m.T) {
			return fmt.Sprintf("markers[%d]", i), false
		}
	}
	if rs := c.Residency; rs != nil {
		for i, t := range rs.T {
			if bad(t) {
				return fmt.Sprintf("residency.t[%d]", i), false
			}
		}
		for s, row := range rs.Fraction {
			for i, v := range row {
				if bad(v) {
					return fmt.Sprintf("residency.fraction[%d][%d]", s, i), false
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Extra)) {
		if bad(c.Extra[k]) {
			return "extra." + k, false
		}
	}
	if bad(c.Files.HgrmUnitNs) {
		return "files.hgrm_unit_ns", false
	}
	return "", true
}

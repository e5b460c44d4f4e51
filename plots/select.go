package plots

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// usable returns the cells that did not fail, in order.
func usable(cells []result.Cell) []result.Cell {
	out := make([]result.Cell, 0, len(cells))
	for _, c := range cells {
		if c.Error == "" {
			out = append(out, c)
		}
	}
	return out
}

// cellLabel is a cell's legend text: its name, prefixed with the system for
// peers.
func cellLabel(system, name string) string {
	if system == "" || system == result.SystemBrokerlab {
		return name
	}
	return system + " " + name
}

// nameWithout is the cell name with the given keys removed (order kept);
// "" when nothing is left or the name is malformed.
func nameWithout(name string, drop ...string) string {
	ps, err := result.ParseName(name)
	if err != nil {
		return name
	}
	kept := ps[:0]
	for _, p := range ps {
		if !slices.Contains(drop, p.Key) {
			kept = append(kept, p)
		}
	}
	return result.FormatName(kept...)
}

// groupKey identifies a line: system plus the name without the swept keys.
func groupKey(system, name string, drop ...string) string {
	return system + "\x00" + nameWithout(name, drop...)
}

func groupLabel(system, name string, drop ...string) string {
	rest := nameWithout(name, drop...)
	if rest == "" {
		rest = system
		if system == result.SystemBrokerlab {
			rest = "all"
		}
		return rest
	}
	return cellLabel(system, rest)
}

// representatives keeps one cell per (system, name): the repetition whose
// primary-metric p99 (or, without quantiles, msg/s) is the median, lower
// Rep first on ties. Order of first appearance is kept.
func representatives(cells []result.Cell) []result.Cell {
	type group struct{ cells []result.Cell }
	var order []string
	groups := map[string]*group{}
	for _, c := range usable(cells) {
		k := c.SystemOrDefault() + "\x00" + c.Name
		g, ok := groups[k]
		if !ok {
			g = &group{}
			groups[k] = g
			order = append(order, k)
		}
		g.cells = append(g.cells, c)
	}
	out := make([]result.Cell, 0, len(order))
	for _, k := range order {
		cs := groups[k].cells
		slices.SortStableFunc(cs, func(a, b result.Cell) int {
			if c := cmp.Compare(repKey(&a), repKey(&b)); c != 0 {
				return c
			}
			return cmp.Compare(a.Rep, b.Rep)
		})
		out = append(out, cs[(len(cs)-1)/2])
	}
	return out
}

func repKey(c *result.Cell) float64 {
	if q, ok := c.Quantiles[c.PrimaryMetric()]; ok && q.Count > 0 {
		return q.P99
	}
	return c.MsgPerSec
}

// selector reads one number from a cell or a summary. Metric grammar:
//
//	"msg/s" | "throughput"         messages per second
//	"MB/s" | "MiB/s"               throughput in MiB/s (result files hold decimal MB/s)
//	"p50" … "p9999", "max", "mean" that quantile of the primary metric (ns)
//	"<metric>.<q>"                 that quantile of the named metric, e.g. "append.p99"
//	anything else                  Cell.Extra[metric]
type selector struct {
	kind    string // "msgps", "mbps", "quantile", "extra"
	metric  string // latency metric for quantiles ("" = primary)
	q       string // p50 … mean
	extra   string
	display string
}

var quantileNames = []string{"p50", "p90", "p99", "p999", "p9999", "max", "mean"}

func parseSelector(s string) selector {
	switch s {
	case "msg/s", "throughput", "rate":
		return selector{kind: "msgps", display: "throughput (msg/s)"}
	case "MB/s", "mb/s", "MiB/s":
		return selector{kind: "mbps", display: "throughput (MiB/s)"}
	}
	if slices.Contains(quantileNames, s) {
		return selector{kind: "quantile", q: s, display: quantileDisplay(s) + " latency"}
	}
	if m, q, ok := strings.Cut(s, "."); ok && slices.Contains(quantileNames, q) {
		return selector{kind: "quantile", metric: m, q: q, display: m + " " + quantileDisplay(q) + " latency"}
	}
	return selector{kind: "extra", extra: s, display: s}
}

func quantileDisplay(q string) string {
	switch q {
	case "p999":
		return "p99.9"
	case "p9999":
		return "p99.99"
	}
	return q
}

func (s selector) isLatency() bool { return s.kind == "quantile" && s.q != "" }

func pickQuantile(q result.Quantiles, name string) float64 {
	for _, f := range []struct {
		name string
		v    float64
	}{{"p50", q.P50}, {"p90", q.P90}, {"p99", q.P99}, {"p999", q.P999}, {"p9999", q.P9999}, {"max", q.Max}, {"mean", q.Mean}} {
		if f.name == name {
			return f.v
		}
	}
	return 0
}

func pickQuantileStat(q result.QuantileStats, name string) result.Stat {
	for _, f := range []struct {
		name string
		st   result.Stat
	}{{"p50", q.P50}, {"p90", q.P90}, {"p99", q.P99}, {"p999", q.P999}, {"p9999", q.P9999}, {"max", q.Max}, {"mean", q.Mean}} {
		if f.name == name {
			return f.st
		}
	}
	return result.Stat{}
}

// cell returns the selected value of a cell, ok=false when it has none.
func (s selector) cell(c *result.Cell) (float64, bool) {
	switch s.kind {
	case "msgps":
		return c.MsgPerSec, c.MsgPerSec > 0
	case "mbps":
		return c.MBPerSec * mibPerMB, c.MBPerSec > 0
	case "quantile":
		m := s.metric
		if m == "" {
			m = c.PrimaryMetric()
		}
		q, ok := c.Quantiles[m]
		if !ok {
			return 0, false
		}
		v := pickQuantile(q, s.q)
		return v, v > 0
	}
	v, ok := c.Extra[s.extra]
	return v, ok
}

// summary returns the selected Stat of an aggregated configuration.
func (s selector) summary(sm *result.Summary) (result.Stat, bool) {
	switch s.kind {
	case "msgps":
		return sm.MsgPerSec, sm.MsgPerSec.Median > 0
	case "mbps":
		st := sm.MBPerSec
		st.Min, st.Median, st.Max = st.Min*mibPerMB, st.Median*mibPerMB, st.Max*mibPerMB
		return st, sm.MBPerSec.Median > 0
	case "quantile":
		m := s.metric
		if m == "" {
			m = sm.Primary
		}
		q, ok := sm.Quantiles[m]
		if !ok {
			return result.Stat{}, false
		}
		st := pickQuantileStat(q, s.q)
		return st, st.Median > 0
	}
	st, ok := sm.Extra[s.extra]
	return st, ok
}

// mibPerMB converts decimal MB (what results hold, like Go's MB/s) to MiB.
const mibPerMB = 1e6 / (1 << 20)

// paramValue parses a summary's parameter with parse.
func paramValue(params map[string]string, key string, parse func(string) (float64, bool)) (float64, bool) {
	v, ok := params[key]
	if !ok {
		return 0, false
	}
	return parse(v)
}

// sweep groups summaries into lines along a swept numeric parameter: one
// line per groupKey (name without the swept key), points sorted by the
// parameter. Lines keep the order of their first summary.
type sweepLine struct {
	label  string
	system string
	points []sweepPoint
}

type sweepPoint struct {
	x  float64 // parsed parameter value
	sm *result.Summary
}

func sweepLines(sums []result.Summary, key string, parse func(string) (float64, bool)) []*sweepLine {
	var lines []*sweepLine
	index := map[string]*sweepLine{}
	for i := range sums {
		sm := &sums[i]
		x, ok := paramValue(sm.Params, key, parse)
		if !ok {
			continue
		}
		k := groupKey(sm.System, sm.Name, key)
		l, ok := index[k]
		if !ok {
			l = &sweepLine{label: groupLabel(sm.System, sm.Name, key), system: sm.System}
			index[k] = l
			lines = append(lines, l)
		}
		l.points = append(l.points, sweepPoint{x: x, sm: sm})
	}
	for _, l := range lines {
		slices.SortStableFunc(l.points, func(a, b sweepPoint) int { return cmp.Compare(a.x, b.x) })
	}
	return lines
}

// longestSweep is the largest number of distinct parameter values of a line.
func longestSweep(lines []*sweepLine) int {
	best := 0
	for _, l := range lines {
		n := 0
		for i, p := range l.points {
			if i == 0 || p.x != l.points[i-1].x {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

func noData(figure, why string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrNoData, figure, fmt.Sprintf(why, args...))
}

// safeName keeps [A-Za-z0-9._-] and replaces anything else with "_", for
// figure file names.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

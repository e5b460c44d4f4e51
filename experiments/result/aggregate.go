package result

import (
	"maps"
	"slices"
)

// Stat summarises one number across repetitions.
type Stat struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"` // mean of the two middle values for an even count
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// QuantileStats is Stat for each quantile of one latency metric.
type QuantileStats struct {
	P50   Stat `json:"p50_ns"`
	P90   Stat `json:"p90_ns"`
	P99   Stat `json:"p99_ns"`
	P999  Stat `json:"p999_ns"`
	P9999 Stat `json:"p9999_ns"`
	Max   Stat `json:"max_ns"`
	Mean  Stat `json:"mean_ns"`
}

// Summary aggregates the repetitions of one configuration (same System and
// Name).
type Summary struct {
	Name      string                   `json:"name"`
	Params    map[string]string        `json:"params"`
	System    string                   `json:"system"`
	Primary   string                   `json:"primary_metric,omitempty"`
	Reps      int                      `json:"reps"`
	MsgPerSec Stat                     `json:"msg_per_sec"`
	MBPerSec  Stat                     `json:"mb_per_sec"`
	Quantiles map[string]QuantileStats `json:"quantiles,omitempty"`
	Extra     map[string]Stat          `json:"extra,omitempty"`

	// ServerCPUSeconds and ServerCPUMicrosPerMsg summarise the repetitions
	// that measured the server's CPU (transport: process); zero otherwise.
	ServerCPUSeconds      Stat `json:"server_cpu_s,omitzero"`
	ServerCPUMicrosPerMsg Stat `json:"server_cpu_us_per_msg,omitzero"`
}

// StatOf returns min, median and max of vs (zero Stat for none).
func StatOf(vs []float64) Stat {
	if len(vs) == 0 {
		return Stat{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Stat{Min: s[0], Median: med, Max: s[n-1], N: n}
}

// Aggregate groups cells by (System, Name) in order of first appearance and
// returns min/median/max of throughput, of every quantile of every metric
// and of every Extra value across the repetitions. Cells with Error set are
// left out. A metric or extra value missing from some repetitions is
// aggregated over those that have it (its Stat.N says how many).
func Aggregate(cells []Cell) []Summary {
	type group struct {
		key   [2]string
		cells []*Cell
	}
	var groups []*group
	index := map[[2]string]*group{}
	for i := range cells {
		c := &cells[i]
		if c.Error != "" {
			continue
		}
		k := [2]string{c.SystemOrDefault(), c.Name}
		g, ok := index[k]
		if !ok {
			g = &group{key: k}
			index[k] = g
			groups = append(groups, g)
		}
		g.cells = append(g.cells, c)
	}
	out := make([]Summary, 0, len(groups))
	for _, g := range groups {
		out = append(out, summarise(g.key[0], g.cells))
	}
	return out
}

func summarise(system string, cs []*Cell) Summary {
	first := cs[0]
	s := Summary{
		Name:    first.Name,
		Params:  maps.Clone(first.Params),
		System:  system,
		Primary: first.PrimaryMetric(),
		Reps:    len(cs),
	}
	collect := func(get func(*Cell) float64) Stat {
		vs := make([]float64, 0, len(cs))
		for _, c := range cs {
			vs = append(vs, get(c))
		}
		return StatOf(vs)
	}
	s.MsgPerSec = collect(func(c *Cell) float64 { return c.MsgPerSec })
	s.MBPerSec = collect(func(c *Cell) float64 { return c.MBPerSec })
	measured := func(get func(*Cell) float64) Stat {
		var vs []float64
		for _, c := range cs {
			if v := get(c); v > 0 {
				vs = append(vs, v)
			}
		}
		return StatOf(vs)
	}
	s.ServerCPUSeconds = measured(func(c *Cell) float64 { return c.ServerCPUSeconds })
	s.ServerCPUMicrosPerMsg = measured(func(c *Cell) float64 { return c.ServerCPUMicrosPerMsg })

	metrics := map[string][]Quantiles{}
	extras := map[string][]float64{}
	for _, c := range cs {
		for m, q := range c.Quantiles {
			metrics[m] = append(metrics[m], q)
		}
		for k, v := range c.Extra {
			extras[k] = append(extras[k], v)
		}
	}
	if len(metrics) > 0 {
		s.Quantiles = make(map[string]QuantileStats, len(metrics))
		for m, qs := range metrics {
			pick := func(get func(Quantiles) float64) Stat {
				vs := make([]float64, len(qs))
				for i, q := range qs {
					vs[i] = get(q)
				}
				return StatOf(vs)
			}
			s.Quantiles[m] = QuantileStats{
				P50:   pick(func(q Quantiles) float64 { return q.P50 }),
				P90:   pick(func(q Quantiles) float64 { return q.P90 }),
				P99:   pick(func(q Quantiles) float64 { return q.P99 }),
				P999:  pick(func(q Quantiles) float64 { return q.P999 }),
				P9999: pick(func(q Quantiles) float64 { return q.P9999 }),
				Max:   pick(func(q Quantiles) float64 { return q.Max }),
				Mean:  pick(func(q Quantiles) float64 { return q.Mean }),
			}
		}
	}
	if len(extras) > 0 {
		s.Extra = make(map[string]Stat, len(extras))
		for k, vs := range extras {
			s.Extra[k] = StatOf(vs)
		}
	}
	return s
}

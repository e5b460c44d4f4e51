package experiments

import (
	"fmt"
	"sort"
	"strings"
)

// canonical short keys used in cell names (and by the figures).
var canonicalParam = map[string]string{
	"segment_size": "seg", "producers": "conc",
}

func canon(p string) string {
	if c, ok := canonicalParam[p]; ok {
		return c
	}
	return p
}

// Cell is one point of the matrix: the experiment with the cell's values
// applied, and its benchstat-style name.
type Cell struct {
	// System is "" for brokerlab, or a peer (result.SystemNATS).
	System string
	Name   string
	Params []Param
	Exp    Experiment
}

// Param is one name part.
type Param struct{ Key, Value string }

// Cells expands the matrix (first axis outermost). Every name starts with
// path= and flush=, swept or not, so results from different experiments
// line up in benchstat.
func (e *Experiment) Cells() ([]Cell, error) {
	cells := []Cell{{Exp: *e}}
	for _, ax := range e.Matrix {
		var next []Cell
		for _, c := range cells {
			for _, v := range ax.Values {
				n := c
				n.Params = append(append([]Param(nil), c.Params...), Param{canon(ax.Param), v})
				if err := n.Exp.set(ax.Param, v); err != nil {
					return nil, err
				}
				next = append(next, n)
			}
		}
		cells = next
	}
	for _, ex := range e.Extra {
		c := Cell{Exp: *e}
		for _, k := range sortedParamKeys(ex) {
			c.Params = append(c.Params, Param{canon(k), ex[k]})
			if err := c.Exp.set(k, ex[k]); err != nil {
				return nil, err
			}
		}
		cells = append(cells, c)
	}
	for i := range cells {
		c := &cells[i]
		if err := validateDSync(c.Exp.Engine); err != nil {
			return nil, err
		}
		if err := validateRocketMQ5Consumers(c); err != nil {
			return nil, err
		}
		// path and flush lead every name, swept or not.
		lead := []Param{{"path", c.Exp.Engine.Path}, {"flush", c.Exp.Engine.Flush}}
		for _, p := range c.Params {
			if p.Key != "path" && p.Key != "flush" {
				lead = append(lead, p)
			}
		}
		c.Params = lead
		parts := make([]string, len(c.Params))
		for j, p := range c.Params {
			if strings.ContainsAny(p.Value, " /=") {
				return nil, fmt.Errorf("%w: matrix value %q may not contain space, '/' or '='", ErrConfig, p.Value)
			}
			parts[j] = p.Key + "=" + p.Value
		}
		c.Name = strings.Join(parts, "/")
	}
	return cells, nil
}

// paramOrder orders the parts of a name built from a map.
var paramOrder = []string{"path", "flush", "transport", "client", "seg", "segment_size", "size", "conc", "producers", "rate", "batch",
	"warm", "prealloc", "dontneed", "advice", "coalesce", "budget"}

func sortedParamKeys(m map[string]string) []string {
	rank := map[string]int{}
	for i, k := range paramOrder {
		rank[k] = i + 1
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := rank[keys[i]], rank[keys[j]]
		if ri == 0 {
			ri = len(paramOrder) + 1
		}
		if rj == 0 {
			rj = len(paramOrder) + 1
		}
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

package experiments

import (
	"fmt"
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
	for i := range cells {
		c := &cells[i]
		have := map[string]bool{}
		for _, p := range c.Params {
			have[p.Key] = true
		}
		var head []Param
		if !have["path"] {
			head = append(head, Param{"path", c.Exp.Engine.Path})
		}
		if !have["flush"] {
			head = append(head, Param{"flush", c.Exp.Engine.Flush})
		}
		c.Params = append(head, c.Params...)
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

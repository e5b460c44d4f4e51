package mqadmin

import (
	"maps"
	"slices"
	"strings"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/internal/brokerconf"
)

// ParseProperties reads a Java properties text (java.util.Properties.load,
// through brokerconf's reader): the body of GET_BROKER_CONFIG (26). A later
// key overrides an earlier one.
func ParseProperties(s string) (map[string]string, error) {
	p, err := brokerconf.Parse(strings.NewReader(s))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range p.Entries() {
		out[e.Key] = e.Value
	}
	return out, nil
}

// FormatProperties writes props as MixAll.properties2String does: one
// "key=value\n" per entry, here sorted by key, unescaped (the broker reads
// it with Properties.load, as Java's admin sends it).
func FormatProperties(props map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(props[k])
		b.WriteByte('\n')
	}
	return b.String()
}

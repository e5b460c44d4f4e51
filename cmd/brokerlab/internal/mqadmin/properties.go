package mqadmin

import "github.com/brokerlab/brokerlab/engine/javaprops"

// ParseProperties reads a Java properties text (java.util.Properties.load,
// engine/javaprops): the body of GET_BROKER_CONFIG (26). A later key
// overrides an earlier one.
func ParseProperties(s string) (map[string]string, error) { return javaprops.ParseMap([]byte(s)) }

// FormatProperties writes props as MixAll.properties2String does: one
// "key=value\n" per entry, here sorted by key, unescaped (the broker reads
// it with Properties.load, as Java's admin sends it).
func FormatProperties(props map[string]string) string { return javaprops.FormatMap(props) }

package mqadmin

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ParseProperties reads a Java properties text (java.util.Properties.load):
// the body of GET_BROKER_CONFIG (26). Lines are "key=value", "key: value"
// or "key value"; "#" and "!" start comments; a line ending in an odd
// number of backslashes continues on the next (its leading whitespace
// dropped); \t \n \r \f \uXXXX and \<any> escapes are decoded in keys and
// values. A later key overrides an earlier one.
func ParseProperties(s string) (map[string]string, error) {
	out := map[string]string{}
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for continues(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		if continues(line) {
			line = line[:len(line)-1]
		}
		key, rest := splitKey(line)
		k, err := unescapeProperty(key)
		if err != nil {
			return nil, fmt.Errorf("properties line %d: %w", i+1, err)
		}
		v, err := unescapeProperty(rest)
		if err != nil {
			return nil, fmt.Errorf("properties line %d: %w", i+1, err)
		}
		out[k] = v
	}
	return out, nil
}

// continues reports whether line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKey splits at the first unescaped '=', ':' or whitespace; the
// separator and the whitespace around it are dropped.
func splitKey(line string) (key, value string) {
	i := 0
	for ; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
	}
	if i >= len(line) {
		return line, ""
	}
	key = line[:i]
	rest := strings.TrimLeft(line[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 >= len(s) {
				return "", fmt.Errorf("malformed \\uxxxx escape in %q", s)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("malformed \\uxxxx escape in %q", s)
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// FormatProperties writes props as MixAll.properties2String does: one
// "key=value\n" per entry, here sorted by key.
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

package result

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Param is one key=value part of a cell name.
type Param struct {
	Key, Value string
}

// FormatName joins params benchstat style: "k1=v1/k2=v2". It does not
// validate; ParseName of the result reports malformed keys or values.
func FormatName(params ...Param) string {
	var b strings.Builder
	for i, p := range params {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(p.Key)
		b.WriteByte('=')
		b.WriteString(p.Value)
	}
	return b.String()
}

// ParseName splits a cell name into its parts, in order. Every part must be
// key=value with a non-empty key; keys must be unique; the name must not be
// empty or contain white space, and must not end in "-<digits>" (benchfmt
// would read that as a GOMAXPROCS suffix).
func ParseName(name string) ([]Param, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: empty", ErrBadName)
	}
	if strings.IndexFunc(name, unicode.IsSpace) >= 0 {
		return nil, fmt.Errorf("%w: %q contains white space", ErrBadName, name)
	}
	if endsInGomaxprocs(name) {
		return nil, fmt.Errorf("%w: %q ends in -<digits>, which benchfmt reads as GOMAXPROCS", ErrBadName, name)
	}
	parts := strings.Split(name, "/")
	out := make([]Param, 0, len(parts))
	seen := make(map[string]bool, len(parts))
	for _, part := range parts {
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: %q: part %q is not key=value", ErrBadName, name, part)
		}
		if seen[k] {
			return nil, fmt.Errorf("%w: %q: key %q repeated", ErrBadName, name, k)
		}
		seen[k] = true
		out = append(out, Param{Key: k, Value: v})
	}
	return out, nil
}

func endsInGomaxprocs(name string) bool {
	i := len(name) - 1
	for i >= 0 && name[i] >= '0' && name[i] <= '9' {
		i--
	}
	return i >= 0 && i < len(name)-1 && name[i] == '-'
}

// ParamMap is ParseName as a map.
func ParamMap(name string) (map[string]string, error) {
	ps, err := ParseName(name)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(ps))
	for _, p := range ps {
		m[p.Key] = p.Value
	}
	return m, nil
}

// FileStem turns a cell name and repetition into a file-name stem:
// "/" becomes ",", any byte outside [A-Za-z0-9=,._+-] becomes "_", and
// ".r<rep>" is appended: "path=mmap,flush=group.r0".
func FileStem(name string, rep int) string {
	return sanitizeFileName(name) + ".r" + strconv.Itoa(rep)
}

// HlogName is the conventional interval-log file name of a cell.
func HlogName(name string, rep int) string { return FileStem(name, rep) + ".hlog" }

// HgrmName is the conventional percentile-distribution file name of a
// cell's metric: "<stem>.<metric>.hgrm".
func HgrmName(name string, rep int, metric string) string {
	return FileStem(name, rep) + "." + sanitizeFileName(metric) + ".hgrm"
}

func sanitizeFileName(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c == '/':
			b[i] = ','
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '=', c == ',', c == '.', c == '_', c == '+', c == '-':
		default:
			b[i] = '_'
		}
	}
	return string(b)
}

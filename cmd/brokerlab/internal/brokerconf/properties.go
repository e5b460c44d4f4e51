// Package brokerconf reads and writes Java properties files, the format of
// RocketMQ's broker.conf (mqbroker -c) and namesrv.properties (mqnamesrv
// -c), and hands their values to a config mapping key by key, remembering
// which keys the mapping used so that every other key can be reported.
//
// The text format is java.util.Properties.load's, read and written by
// engine/javaprops.
package brokerconf

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/engine/javaprops"
)

// ErrSyntax is a malformed line (a bad \u escape).
var ErrSyntax = javaprops.ErrSyntax

// ErrValue is a value the mapping could not read (not a number, not a
// boolean, out of range).
var ErrValue = errors.New("brokerconf: bad value")

// Entry is one key and value; Line is the first natural line of its logical
// line (1-based; 0 for entries not read from a file).
type Entry = javaprops.Entry

// Props is a parsed properties file. It is not safe for concurrent use: a
// mapping reads it from one goroutine.
type Props struct {
	entries []Entry        // in file order, one per key (the last value)
	index   map[string]int // key → entries index
	used    map[string]bool
	errs    []error
}

// ParseFile reads the properties file at path.
func ParseFile(path string) (*Props, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Parse reads properties from r.
func Parse(r io.Reader) (*Props, error) {
	entries, err := javaprops.Parse(r)
	if err != nil {
		return nil, err
	}
	p := &Props{entries: entries, index: map[string]int{}, used: map[string]bool{}}
	for i, e := range entries {
		p.index[e.Key] = i
	}
	return p, nil
}

// Entries returns every key and value in file order.
func (p *Props) Entries() []Entry { return append([]Entry(nil), p.entries...) }

// Lookup returns key's value and marks the key used.
func (p *Props) Lookup(key string) (string, bool) {
	i, ok := p.index[key]
	if !ok {
		return "", false
	}
	p.used[key] = true
	return p.entries[i].Value, true
}

// Has reports whether key is present (without marking it used).
func (p *Props) Has(key string) bool {
	_, ok := p.index[key]
	return ok
}

// Unused returns the entries no Lookup (or typed getter) asked for, in file
// order: the keys the mapping does not know.
func (p *Props) Unused() []Entry {
	var out []Entry
	for _, e := range p.entries {
		if !p.used[e.Key] {
			out = append(out, e)
		}
	}
	return out
}

// fail records a value error for key.
func (p *Props) fail(key, val, want string) {
	line := p.entries[p.index[key]].Line
	p.errs = append(p.errs, fmt.Errorf("%w: line %d: %s=%q: want %s", ErrValue, line, key, val, want))
}

// Err returns the value errors the typed getters met, joined.
func (p *Props) Err() error { return errors.Join(p.errs...) }

// String sets *dst to key's value (white space trimmed) if key is present.
func (p *Props) String(key string, dst *string) {
	if v, ok := p.Lookup(key); ok {
		*dst = strings.TrimSpace(v)
	}
}

// Bool sets *dst to key's value if key is present; the value must be true
// or false (any case). Java's Boolean.parseBoolean reads anything else as
// false; here it is an error, so a typo does not turn a feature off.
func (p *Props) Bool(key string, dst **bool) {
	v, ok := p.Lookup(key)
	if !ok {
		return
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		b := true
		*dst = &b
	case "false":
		b := false
		*dst = &b
	default:
		p.fail(key, v, "true or false")
	}
}

// Int sets *dst to key's value, a decimal integer in [lo, hi], if key is
// present.
func (p *Props) Int(key string, lo, hi int64, dst **int64) {
	v, ok := p.Lookup(key)
	if !ok {
		return
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < lo || n > hi {
		p.fail(key, v, fmt.Sprintf("an integer from %d to %d", lo, hi))
		return
	}
	*dst = &n
}

// Write writes entries in properties format (javaprops.Write).
func Write(w io.Writer, entries []Entry) error { return javaprops.Write(w, entries) }

// WriteComment writes text as '#' comment lines (javaprops.WriteComment).
func WriteComment(w io.Writer, text string) error { return javaprops.WriteComment(w, text) }

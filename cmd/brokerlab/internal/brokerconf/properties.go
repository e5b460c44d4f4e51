// Package brokerconf reads and writes Java properties files, the format of
// RocketMQ's broker.conf (mqbroker -c) and namesrv.properties (mqnamesrv
// -c), and hands their values to a config mapping key by key, remembering
// which keys the mapping used so that every other key can be reported.
//
// The format is java.util.Properties.load's: logical lines made of natural
// lines joined by a trailing odd number of backslashes (the next line's
// leading white space dropped); blank lines and lines whose first
// non-blank character is '#' or '!' are skipped; the key runs to the first
// unescaped '=', ':' or white space, then white space and at most one '='
// or ':' are skipped and the rest is the value; \t \n \r \f and \uXXXX are
// escapes and a backslash before any other character stands for that
// character. A key given twice keeps its last value, as in Java. Unlike
// Java's load(InputStream), which decodes ISO-8859-1, the file is read as
// UTF-8 (what editors write today; ASCII files read the same either way).
package brokerconf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrSyntax is a malformed line (a bad \u escape).
var ErrSyntax = errors.New("brokerconf: syntax error")

// ErrValue is a value the mapping could not read (not a number, not a
// boolean, out of range).
var ErrValue = errors.New("brokerconf: bad value")

// Entry is one key and value; Line is the first natural line of its logical
// line (1-based; 0 for entries not read from a file).
type Entry struct {
	Key, Value string
	Line       int
}

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
	p := &Props{index: map[string]int{}, used: map[string]bool{}}
	br := bufio.NewReader(r)
	lineNo := 0
	for {
		logical, first, eof, err := readLogicalLine(br, &lineNo)
		if err != nil {
			return nil, err
		}
		if logical != "" {
			key, val, err := splitEntry(logical)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", first, err)
			}
			p.set(Entry{Key: key, Value: val, Line: first})
		}
		if eof {
			return p, nil
		}
	}
}

// set adds e, or replaces the value of its key keeping the key's place.
func (p *Props) set(e Entry) {
	if i, ok := p.index[e.Key]; ok {
		p.entries[i] = e
		return
	}
	p.index[e.Key] = len(p.entries)
	p.entries = append(p.entries, e)
}

// readNatural returns the next natural line without its terminator (\n,
// \r or \r\n) and whether the input ended there.
func readNatural(br *bufio.Reader) (string, bool, error) {
	var b strings.Builder
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return b.String(), true, nil
		}
		if err != nil {
			return "", false, err
		}
		switch c {
		case '\n':
			return b.String(), false, nil
		case '\r':
			if n, err := br.Peek(1); err == nil && n[0] == '\n' {
				_, _ = br.ReadByte()
			}
			return b.String(), false, nil
		}
		b.WriteByte(c)
	}
}

// readLogicalLine joins continued natural lines; comments and blank lines
// come back as "". first is the line number the logical line starts on.
func readLogicalLine(br *bufio.Reader, lineNo *int) (logical string, first int, eof bool, err error) {
	var b strings.Builder
	continuing := false
	for {
		line, end, err := readNatural(br)
		if err != nil {
			return "", 0, false, err
		}
		*lineNo++
		line = strings.TrimLeft(line, " \t\f")
		if !continuing {
			first = *lineNo
			if line == "" || line[0] == '#' || line[0] == '!' {
				if end {
					return "", first, true, nil
				}
				continue
			}
		}
		if trailingBackslashes(line)%2 == 1 && !end {
			b.WriteString(line[:len(line)-1])
			continuing = true
			continue
		}
		if trailingBackslashes(line)%2 == 1 {
			line = line[:len(line)-1] // a continuation at end of input continues to nothing
		}
		b.WriteString(line)
		return b.String(), first, end, nil
	}
}

func trailingBackslashes(s string) int {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n
}

// splitEntry splits a logical line into its unescaped key and value.
func splitEntry(line string) (string, string, error) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			end = i
			break
		}
	}
	rest := line[end:]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	key, err := unescape(line[:end])
	if err != nil {
		return "", "", err
	}
	val, err := unescape(rest)
	if err != nil {
		return "", "", err
	}
	return key, val, nil
}

// unescape resolves the properties escapes in s.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("%w: malformed \\uxxxx escape", ErrSyntax)
			}
			v, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("%w: malformed \\uxxxx escape %q", ErrSyntax, s[i-1:i+5])
			}
			b.WriteRune(rune(v))
			i += 4
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
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

// Write writes entries in properties format, one "key=value" line each,
// escaping what Load would otherwise read differently. Lines is ignored.
func Write(w io.Writer, entries []Entry) error {
	var b bytes.Buffer
	for _, e := range entries {
		b.WriteString(escape(e.Key, true))
		b.WriteByte('=')
		b.WriteString(escape(e.Value, false))
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteComment writes text as '#' comment lines.
func WriteComment(w io.Writer, text string) error {
	var b bytes.Buffer
	for _, l := range strings.Split(text, "\n") {
		b.WriteString("# ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}

// escape is Properties.saveConvert, keeping non-ASCII characters as UTF-8
// (invalid UTF-8 bytes are written as \uFFFD's escape).
func escape(s string, isKey bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == ' ' && (isKey || i == 0):
			b.WriteString(`\ `)
		case r == '=' || r == ':' || r == '#' || r == '!':
			if isKey || i == 0 {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r == utf8.RuneError:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

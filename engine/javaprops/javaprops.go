// Package javaprops reads and writes Java properties text, the format of
// RocketMQ's broker.conf and namesrv.properties and of the bodies of
// UPDATE_BROKER_CONFIG and GET_BROKER_CONFIG (MixAll.string2Properties and
// properties2String).
//
// The format is java.util.Properties.load's: logical lines made of natural
// lines joined by a trailing odd number of backslashes (the next line's
// leading white space dropped); blank lines and lines whose first
// non-blank character is '#' or '!' are skipped; the key runs to the first
// unescaped '=', ':' or white space, then white space and at most one '='
// or ':' are skipped and the rest is the value (a line with a key only has
// the empty value); \t \n \r \f and \uXXXX are escapes and a backslash
// before any other character stands for that character. A key given twice
// keeps its last value, as in Java. Unlike Java's load(InputStream), which
// decodes ISO-8859-1, the text is read as UTF-8 (what editors write today;
// ASCII reads the same either way).
//
// The functions are pure: safe for concurrent use.
package javaprops

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrSyntax is a malformed line (a bad \u escape).
var ErrSyntax = errors.New("javaprops: syntax error")

// Entry is one key and value; Line is the first natural line of its logical
// line (1-based; 0 for entries not read from text).
type Entry struct {
	Key, Value string
	Line       int
}

// Parse reads properties from r: one entry per key, in the order keys first
// appear, each with its last value (and that value's line).
func Parse(r io.Reader) ([]Entry, error) {
	var entries []Entry
	index := map[string]int{}
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
			e := Entry{Key: key, Value: val, Line: first}
			if i, ok := index[key]; ok {
				entries[i] = e
			} else {
				index[key] = len(entries)
				entries = append(entries, e)
			}
		}
		if eof {
			return entries, nil
		}
	}
}

// ParseMap reads properties text into a map (MixAll.string2Properties).
func ParseMap(text []byte) (map[string]string, error) {
	entries, err := Parse(bytes.NewReader(text))
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		out[e.Key] = e.Value
	}
	return out, nil
}

// FormatMap writes props as MixAll.properties2String does: one
// "key=value\n" line per entry, unescaped, here sorted by key.
func FormatMap(props map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(props[k])
		b.WriteByte('\n')
	}
	return b.String()
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

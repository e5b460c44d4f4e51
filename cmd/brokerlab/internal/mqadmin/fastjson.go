package mqadmin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrMalformed reports a response body that does not decode, even
// tolerantly.
var ErrMalformed = errors.New("mqadmin: malformed body")

// maxDepth bounds the nesting Normalize accepts (a hostile or corrupt body
// must not exhaust the stack).
const maxDepth = 256

// Normalize rewrites a fastjson body into standard JSON: object keys that
// are objects, arrays, numbers or literals become strings holding their
// compact JSON text ({"brokerName":"b","queueId":0,"topic":"t"} as a key
// becomes "{\"brokerName\":\"b\",\"queueId\":0,\"topic\":\"t\"}", 0 becomes
// "0"); everything else is copied as is, less insignificant whitespace.
// Strings are copied verbatim (escapes are left for encoding/json to
// check). It fails on unbalanced input, trailing data or nesting deeper
// than 256.
func Normalize(b []byte) ([]byte, error) {
	n := normalizer{in: b}
	n.ws()
	if err := n.value(0); err != nil {
		return nil, err
	}
	n.ws()
	if n.pos != len(n.in) {
		return nil, n.errorf("trailing data")
	}
	return n.out, nil
}

type normalizer struct {
	in  []byte
	pos int
	out []byte
}

func (n *normalizer) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at byte %d", ErrMalformed, fmt.Sprintf(format, args...), n.pos)
}

func (n *normalizer) ws() {
	for n.pos < len(n.in) {
		switch n.in[n.pos] {
		case ' ', '\t', '\n', '\r':
			n.pos++
		default:
			return
		}
	}
}

func (n *normalizer) value(depth int) error {
	if depth > maxDepth {
		return n.errorf("nesting deeper than %d", maxDepth)
	}
	if n.pos >= len(n.in) {
		return n.errorf("unexpected end")
	}
	switch c := n.in[n.pos]; c {
	case '{':
		return n.object(depth)
	case '[':
		return n.array(depth)
	case '"':
		return n.str()
	default:
		return n.literal()
	}
}

func (n *normalizer) object(depth int) error {
	n.pos++ // '{'
	n.out = append(n.out, '{')
	n.ws()
	if n.pos < len(n.in) && n.in[n.pos] == '}' {
		n.pos++
		n.out = append(n.out, '}')
		return nil
	}
	for {
		n.ws()
		if n.pos >= len(n.in) {
			return n.errorf("unexpected end in object")
		}
		if n.in[n.pos] == '"' {
			if err := n.str(); err != nil {
				return err
			}
		} else {
			// A non-string key: normalise it on its own, then emit it quoted.
			outer := n.out
			n.out = nil
			if err := n.value(depth + 1); err != nil {
				return err
			}
			key := n.out
			n.out = outer
			q, _ := json.Marshal(string(key)) // a string always marshals
			n.out = append(n.out, q...)
		}
		n.ws()
		if n.pos >= len(n.in) || n.in[n.pos] != ':' {
			return n.errorf("want ':' after object key")
		}
		n.pos++
		n.out = append(n.out, ':')
		n.ws()
		if err := n.value(depth + 1); err != nil {
			return err
		}
		n.ws()
		if n.pos >= len(n.in) {
			return n.errorf("unexpected end in object")
		}
		switch n.in[n.pos] {
		case ',':
			n.pos++
			n.out = append(n.out, ',')
		case '}':
			n.pos++
			n.out = append(n.out, '}')
			return nil
		default:
			return n.errorf("want ',' or '}' in object")
		}
	}
}

func (n *normalizer) array(depth int) error {
	n.pos++ // '['
	n.out = append(n.out, '[')
	n.ws()
	if n.pos < len(n.in) && n.in[n.pos] == ']' {
		n.pos++
		n.out = append(n.out, ']')
		return nil
	}
	for {
		n.ws()
		if err := n.value(depth + 1); err != nil {
			return err
		}
		n.ws()
		if n.pos >= len(n.in) {
			return n.errorf("unexpected end in array")
		}
		switch n.in[n.pos] {
		case ',':
			n.pos++
			n.out = append(n.out, ',')
		case ']':
			n.pos++
			n.out = append(n.out, ']')
			return nil
		default:
			return n.errorf("want ',' or ']' in array")
		}
	}
}

// str copies a double-quoted string, escapes included.
func (n *normalizer) str() error {
	start := n.pos
	for n.pos++; n.pos < len(n.in); n.pos++ {
		switch n.in[n.pos] {
		case '\\':
			n.pos++
		case '"':
			n.pos++
			n.out = append(n.out, n.in[start:n.pos]...)
			return nil
		}
	}
	n.pos = start
	return n.errorf("unterminated string")
}

// literal copies a number, true, false or null (checked by encoding/json
// later; here it only has to end at a delimiter).
func (n *normalizer) literal() error {
	start := n.pos
	for n.pos < len(n.in) {
		c := n.in[n.pos]
		if c == ',' || c == ':' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
			c == '{' || c == '[' || c == '"' {
			break
		}
		n.pos++
	}
	if n.pos == start {
		return n.errorf("unexpected %q", n.in[n.pos])
	}
	n.out = append(n.out, n.in[start:n.pos]...)
	return nil
}

// unmarshal decodes a fastjson body into v after Normalize.
func unmarshal(what string, b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return fmt.Errorf("%w: %s: empty body", ErrMalformed, what)
	}
	norm, err := Normalize(b)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := json.Unmarshal(norm, v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrMalformed, what, err)
	}
	return nil
}

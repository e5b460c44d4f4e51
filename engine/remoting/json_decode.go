package remoting

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth bounds object/array nesting while skipping unknown values; it
// matches encoding/json's limit.
const maxJSONDepth = 10000

// jsonDecoder is a single-pass decoder for the JSON header. It accepts exactly
// what encoding/json accepts when decoding into the header struct (the fuzz
// test checks this against encoding/json), except that a top-level null is an
// error rather than an empty header.
type jsonDecoder struct {
	data []byte
	pos  int
}

func decodeJSONHeader(data []byte, c *Command) error {
	d := jsonDecoder{data: data}
	d.skipWS()
	if d.pos >= len(d.data) || d.data[d.pos] != '{' {
		return d.errorf("header is not a JSON object")
	}
	d.pos++
	if err := d.headerObject(c); err != nil {
		return err
	}
	d.skipWS()
	if d.pos != len(d.data) {
		return d.errorf("data after the header object")
	}
	return nil
}

func (d *jsonDecoder) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: json offset %d: %s", ErrMalformedHeader, d.pos, fmt.Sprintf(format, args...))
}

func (d *jsonDecoder) skipWS() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *jsonDecoder) peek() byte {
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

// headerFields are the header's JSON names, matched exactly or case-insensitively.
const (
	fieldUnknown = iota
	fieldCode
	fieldLanguage
	fieldVersion
	fieldOpaque
	fieldFlag
	fieldRemark
	fieldExtFields
)

var headerFieldNames = [...]string{fieldCode: "code", fieldLanguage: "language", fieldVersion: "version",
	fieldOpaque: "opaque", fieldFlag: "flag", fieldRemark: "remark", fieldExtFields: "extFields"}

func matchHeaderField(key string) int {
	for f, n := range headerFieldNames {
		if n != "" && n == key {
			return f
		}
	}
	for f, n := range headerFieldNames {
		if n != "" && strings.EqualFold(n, key) {
			return f
		}
	}
	return fieldUnknown
}

// headerObject decodes the members of the top-level object; '{' is consumed.
func (d *jsonDecoder) headerObject(c *Command) error {
	if d.emptyObject() {
		return nil
	}
	for {
		d.skipWS()
		key, err := d.str()
		if err != nil {
			return err
		}
		if err := d.colon(); err != nil {
			return err
		}
		switch f := matchHeaderField(key); f {
		case fieldCode:
			err = d.int32Field(&c.Code)
		case fieldVersion:
			err = d.int32Field(&c.Version)
		case fieldOpaque:
			err = d.int32Field(&c.Opaque)
		case fieldFlag:
			err = d.int32Field(&c.Flag)
		case fieldRemark:
			err = d.stringField(&c.Remark)
		case fieldLanguage:
			err = d.languageField(&c.Language)
		case fieldExtFields:
			err = d.extFields(c)
		default:
			err = d.skipValue(1)
		}
		if err != nil {
			return err
		}
		d.skipWS()
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return nil
		default:
			return d.errorf("expected ',' or '}' in object")
		}
	}
}

// literal consumes lit ("null", "true", "false").
func (d *jsonDecoder) literal(lit string) error {
	if len(d.data)-d.pos < len(lit) || string(d.data[d.pos:d.pos+len(lit)]) != lit {
		return d.errorf("invalid literal")
	}
	d.pos += len(lit)
	return nil
}

// int32Field decodes a JSON integer into *dst; null leaves it unchanged.
func (d *jsonDecoder) int32Field(dst *int32) error {
	switch b := d.peek(); {
	case b == 'n':
		return d.literal("null")
	case b == '-' || (b >= '0' && b <= '9'):
		start := d.pos
		isInt, err := d.number()
		if err != nil {
			return err
		}
		n, ok := parseJSONInt(d.data[start:d.pos], 1<<31)
		if !isInt || !ok {
			return d.errorf("number %q is not an int32", d.data[start:d.pos])
		}
		*dst = int32(n)
		return nil
	default:
		return d.errorf("expected a number")
	}
}

// stringField decodes a JSON string into *dst; null leaves it unchanged.
func (d *jsonDecoder) stringField(dst *string) error {
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '"':
		s, err := d.str()
		*dst = s
		return err
	default:
		return d.errorf("expected a string")
	}
}

// languageField accepts any JSON value: a name, a number, or anything else
// (LanguageOther), as the Go client does. null leaves *dst unchanged.
func (d *jsonDecoder) languageField(dst *Language) error {
	switch b := d.peek(); {
	case b == 'n':
		return d.literal("null")
	case b == '"':
		s, err := d.str()
		*dst = languageByName(s)
		return err
	case b == '-' || (b >= '0' && b <= '9'):
		start := d.pos
		isInt, err := d.number()
		if err != nil {
			return err
		}
		n, ok := parseJSONInt(d.data[start:d.pos], 1<<63)
		if !isInt || !ok {
			n = -1
		}
		*dst = languageByNumber(n)
		return nil
	default:
		*dst = LanguageOther
		return d.skipValue(1)
	}
}

// extFields decodes the extFields object, merging into c.ExtFields as
// encoding/json does; null sets it to nil and a null member value to "".
func (d *jsonDecoder) extFields(c *Command) error {
	switch d.peek() {
	case 'n':
		c.ExtFields = nil
		return d.literal("null")
	case '{':
		d.pos++
	default:
		return d.errorf("extFields is not an object")
	}
	if c.ExtFields == nil {
		c.ExtFields = make(ExtFields, 16)
	}
	if d.emptyObject() {
		return nil
	}
	for {
		d.skipWS()
		key, err := d.key()
		if err != nil {
			return err
		}
		if err := d.colon(); err != nil {
			return err
		}
		var val string
		switch d.peek() {
		case '"':
			if val, err = d.str(); err != nil {
				return err
			}
		case 'n':
			if err = d.literal("null"); err != nil {
				return err
			}
		default:
			return d.errorf("extFields value for %q is not a string", key)
		}
		c.ExtFields[key] = val
		d.skipWS()
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return nil
		default:
			return d.errorf("expected ',' or '}' in object")
		}
	}
}

// skipValue validates and skips one value nested at depth (the depth of the
// container holding it).
func (d *jsonDecoder) skipValue(depth int) error {
	switch b := d.peek(); {
	case b == '"':
		_, err := d.str()
		return err
	case b == 'n':
		return d.literal("null")
	case b == 't':
		return d.literal("true")
	case b == 'f':
		return d.literal("false")
	case b == '-' || (b >= '0' && b <= '9'):
		_, err := d.number()
		return err
	case b == '{' || b == '[':
		if depth+1 > maxJSONDepth {
			return d.errorf("exceeded max depth")
		}
		d.pos++
		d.skipWS()
		closer := byte('}')
		if b == '[' {
			closer = ']'
		}
		if d.peek() == closer {
			d.pos++
			return nil
		}
		for {
			d.skipWS()
			if b == '{' {
				if _, err := d.str(); err != nil {
					return err
				}
				if err := d.colon(); err != nil {
					return err
				}
			}
			if err := d.skipValue(depth + 1); err != nil {
				return err
			}
			d.skipWS()
			switch d.peek() {
			case ',':
				d.pos++
			case closer:
				d.pos++
				return nil
			default:
				return d.errorf("expected ',' or %q", closer)
			}
		}
	default:
		return d.errorf("invalid character starting a value")
	}
}

// number consumes a JSON number and reports whether it has no fraction or exponent.
func (d *jsonDecoder) number() (isInt bool, err error) {
	p, data := d.pos, d.data
	if p < len(data) && data[p] == '-' {
		p++
	}
	switch {
	case p < len(data) && data[p] == '0':
		p++
	case p < len(data) && data[p] >= '1' && data[p] <= '9':
		for p < len(data) && data[p] >= '0' && data[p] <= '9' {
			p++
		}
	default:
		d.pos = p
		return false, d.errorf("invalid number")
	}
	isInt = true
	if p < len(data) && data[p] == '.' {
		isInt = false
		p++
		if p >= len(data) || data[p] < '0' || data[p] > '9' {
			d.pos = p
			return false, d.errorf("invalid number fraction")
		}
		for p < len(data) && data[p] >= '0' && data[p] <= '9' {
			p++
		}
	}
	if p < len(data) && (data[p] == 'e' || data[p] == 'E') {
		isInt = false
		p++
		if p < len(data) && (data[p] == '+' || data[p] == '-') {
			p++
		}
		if p >= len(data) || data[p] < '0' || data[p] > '9' {
			d.pos = p
			return false, d.errorf("invalid number exponent")
		}
		for p < len(data) && data[p] >= '0' && data[p] <= '9' {
			p++
		}
	}
	d.pos = p
	return isInt, nil
}

// parseJSONInt parses a validated integer literal whose magnitude must stay
// within [-limit, limit-1].
func parseJSONInt(lit []byte, limit uint64) (int64, bool) {
	neg := false
	if len(lit) > 0 && lit[0] == '-' {
		neg = true
		lit = lit[1:]
	}
	var u uint64
	for _, b := range lit {
		if u > (limit+9)/10 {
			return 0, false
		}
		u = u*10 + uint64(b-'0')
		if u > limit {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true // u ≤ limit ≤ 1<<63: -int64(1<<63) wraps to MinInt64, as intended
	}
	if u >= limit {
		return 0, false
	}
	return int64(u), true
}

// key is str for ext keys: plain ASCII keys come from the intern table.
func (d *jsonDecoder) key() (string, error) {
	if d.peek() == '"' {
		data := d.data
		for p := d.pos + 1; p < len(data); p++ {
			b := data[p]
			if b == '"' {
				k := internKey(data[d.pos+1 : p])
				d.pos = p + 1
				return k, nil
			}
			if b == '\\' || b < 0x20 || b >= utf8.RuneSelf {
				break
			}
		}
	}
	return d.str()
}

// str consumes a JSON string and returns its unescaped value. Invalid UTF-8
// and unpaired surrogates become U+FFFD, as encoding/json does.
func (d *jsonDecoder) str() (string, error) {
	if d.peek() != '"' {
		return "", d.errorf("expected a string")
	}
	d.pos++
	start := d.pos
	data := d.data
	// Fast path: plain printable ASCII up to the closing quote.
	for p := start; p < len(data); p++ {
		b := data[p]
		if b == '"' {
			d.pos = p + 1
			return string(data[start:p]), nil
		}
		if b == '\\' || b < 0x20 || b >= utf8.RuneSelf {
			break
		}
	}
	buf := make([]byte, 0, 32)
	p := start
	for {
		if p >= len(data) {
			d.pos = p
			return "", d.errorf("unterminated string")
		}
		b := data[p]
		switch {
		case b == '"':
			d.pos = p + 1
			return string(buf), nil
		case b < 0x20:
			d.pos = p
			return "", d.errorf("control character in string")
		case b == '\\':
			if p+1 >= len(data) {
				d.pos = p
				return "", d.errorf("unterminated escape")
			}
			switch e := data[p+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
				p += 2
			case 'b':
				buf = append(buf, '\b')
				p += 2
			case 'f':
				buf = append(buf, '\f')
				p += 2
			case 'n':
				buf = append(buf, '\n')
				p += 2
			case 'r':
				buf = append(buf, '\r')
				p += 2
			case 't':
				buf = append(buf, '\t')
				p += 2
			case 'u':
				r := hex4(data[p+2:])
				if r < 0 {
					d.pos = p
					return "", d.errorf("invalid \\u escape")
				}
				p += 6
				if utf16.IsSurrogate(r) {
					if p+1 < len(data) && data[p] == '\\' && data[p+1] == 'u' {
						if r2 := hex4(data[p+2:]); r2 >= 0 {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								buf = utf8.AppendRune(buf, dec)
								p += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
			default:
				d.pos = p
				return "", d.errorf("invalid escape")
			}
		case b < utf8.RuneSelf:
			buf = append(buf, b)
			p++
		default:
			r, size := utf8.DecodeRune(data[p:])
			if r == utf8.RuneError && size == 1 {
				buf = utf8.AppendRune(buf, utf8.RuneError)
			} else {
				buf = append(buf, data[p:p+size]...)
			}
			p += size
		}
	}
}

// hex4 decodes four hex digits, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// emptyObject consumes "}" (after white space) if the object just opened
// has no members.
func (d *jsonDecoder) emptyObject() bool {
	d.skipWS()
	if d.peek() == '}' {
		d.pos++
		return true
	}
	return false
}

// colon consumes the ':' (with white space around it) after a member's key.
func (d *jsonDecoder) colon() error {
	d.skipWS()
	if d.peek() != ':' {
		return d.errorf("expected ':' after object key")
	}
	d.pos++
	d.skipWS()
	return nil
}

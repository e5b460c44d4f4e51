package remoting

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth bounds object/array nesting while skipping unknown values; it
// matches encoding/json's limit.
const maxJSONDepth = 10000

// jsonDecoder is a single-pass decoder for the JSON header. Syntax is
// checked as strictly as encoding/json does: anything that is not one JSON
// object is ErrMalformedHeader (a framing error). Inside the object it reads
// members the way the Java broker's fastjson does, which is what other
// clients rely on: member names matched case-insensitively, unknown members
// skipped, a repeated member overriding (extFields merging), null leaving a
// field unchanged, integers given as numbers or numeric strings, extFields
// values given as strings, numbers (kept as their literal text), booleans
// or null (absent). A member whose value has a type that cannot be read
// into its field is recorded as the command's HeaderErr (ErrBadHeaderField):
// the request is answered, not the connection closed. The fuzz test checks
// the decoder against a model built on encoding/json.
//
// No string the decoder returns aliases data (a frame buffer that may be
// recycled): keys known to the hot requests and a few short common values
// come from the intern tables, every other key and value (unescaped in
// scratch first if it has escapes) is copied by the header's strArena, so
// a string kept past the request (a topic name in the broker's topic
// table) pins at most a 256-byte chunk of its header's short strings,
// never the header or the frame, and a send header's strings still cost
// one allocation. A header's extFields hold at most MaxExtFields entries:
// a new key beyond them is refused as a bad field (ErrTooManyExtFields:
// answered, the connection kept), and neither it nor its value is stored.
type jsonDecoder struct {
	data       []byte
	scratch    []byte   // unescaped bytes of the last escaped string (strBytes)
	scratchBox *[]byte  // scratch's pool entry (nil: none taken yet)
	arena      strArena // makes the keys and values: none aliases data
	pos        int
	fieldErr   error // first member of the wrong type (the object itself is valid)
}

func decodeJSONHeader(data []byte, c *Command) error {
	d := jsonDecoder{data: data}
	defer d.putScratch()
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
	c.headerErr = d.fieldErr
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
		key, err := d.strBytes()
		if err != nil {
			return err
		}
		f := matchHeaderField(string(key)) // key is not used after: the value may overwrite scratch
		if err := d.colon(); err != nil {
			return err
		}
		switch f {
		case fieldCode:
			err = d.int32Field("code", &c.Code)
		case fieldVersion:
			err = d.int32Field("version", &c.Version)
		case fieldOpaque:
			err = d.int32Field("opaque", &c.Opaque)
		case fieldFlag:
			err = d.int32Field("flag", &c.Flag)
		case fieldRemark:
			err = d.stringField("remark", &c.Remark)
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
		if end, err := d.memberEnd(); end || err != nil {
			return err
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

// badField records the first header member of the wrong type; decoding
// goes on, so the command keeps its opaque and is answered.
func (d *jsonDecoder) badField(format string, args ...any) {
	if d.fieldErr == nil {
		d.fieldErr = &BadRequestError{Remark: fmt.Sprintf(format, args...), kind: ErrBadHeaderField}
	}
}

// valueKind names the JSON value starting at the next byte, for remarks.
func valueKind(b byte) string {
	switch {
	case b == '"':
		return "a string"
	case b == '{':
		return "an object"
	case b == '[':
		return "an array"
	case b == 't' || b == 'f':
		return "a boolean"
	case b == 'n':
		return "null"
	}
	return "a number"
}

// int32Field decodes an integer into *dst: a JSON number or a string
// holding a decimal integer (fastjson reads both). null leaves it unchanged;
// any other value, or one out of the int32 range, is a bad field.
func (d *jsonDecoder) int32Field(name string, dst *int32) error {
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
			d.badField("the header field <%s> is not an int32: %s", name, clip(d.data[start:d.pos]))
			return nil
		}
		*dst = int32(n)
		return nil
	case b == '"':
		s, err := d.strBytes()
		if err != nil {
			return err
		}
		n, perr := strconv.ParseInt(string(s), 10, 32)
		if perr != nil {
			d.badField("the header field <%s> is not an int32: %q", name, clip(s))
			return nil
		}
		*dst = int32(n)
		return nil
	default:
		d.badField("the header field <%s> is %s, not an int32", name, valueKind(b))
		return d.skipValue(1)
	}
}

// scalarText decodes a string, number or boolean as text: a string
// unescaped, a number as its literal, a boolean as "true"/"false". ok is
// false (and nothing consumed) for null, an object or an array.
func (d *jsonDecoder) scalarText() (text string, ok bool, err error) {
	switch b := d.peek(); {
	case b == '"':
		s, err := d.str()
		return s, true, err
	case b == 't':
		return "true", true, d.literal("true")
	case b == 'f':
		return "false", true, d.literal("false")
	case b == '-' || (b >= '0' && b <= '9'):
		start := d.pos
		if _, err := d.number(); err != nil {
			return "", false, err
		}
		return d.arena.value(d.data[start:d.pos]), true, nil
	}
	return "", false, nil
}

// stringField decodes remark: a string, or a number or boolean as its
// text; null leaves it unchanged; an object or array is a bad field.
func (d *jsonDecoder) stringField(name string, dst *string) error {
	if d.peek() == 'n' {
		return d.literal("null")
	}
	s, ok, err := d.scalarText()
	if err != nil || ok {
		*dst = s
		return err
	}
	d.badField("the header field <%s> is %s, not a string", name, valueKind(d.peek()))
	return d.skipValue(1)
}

// languageField accepts any JSON value: a name, a number, or anything else
// (LanguageOther), as the Go client does. null leaves *dst unchanged.
func (d *jsonDecoder) languageField(dst *Language) error {
	switch b := d.peek(); {
	case b == 'n':
		return d.literal("null")
	case b == '"':
		s, err := d.strBytes()
		*dst = languageByBytes(s)
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

// extFields decodes the extFields object, merging into c.ExtFields (a
// repeated extFields member adds to the first); null sets it to nil.
// Values are read as other clients write them: a string as itself, a
// number as its literal text ("readQueueNums":8 is "8"), a boolean as
// "true"/"false", and null as absent (Java's extFields.get returns null).
// An object or array value, or an extFields that is not an object, is a
// bad field.
func (d *jsonDecoder) extFields(c *Command) error {
	switch b := d.peek(); b {
	case 'n':
		c.ExtFields = nil
		return d.literal("null")
	case '{':
		d.pos++
	default:
		d.badField("the header field <extFields> is %s, not an object", valueKind(b))
		return d.skipValue(1)
	}
	if c.ExtFields == nil {
		c.ExtFields = c.newExt()
	}
	if d.emptyObject() {
		return nil
	}
	for {
		d.skipWS()
		kb, err := d.strBytes()
		if err != nil {
			return err
		}
		if err := d.colon(); err != nil {
			return err
		}
		// kb stays valid until the value is read: colon and literal do not
		// touch scratch.
		switch b := d.peek(); {
		case b == 'n':
			if err := d.literal("null"); err != nil {
				return err
			}
			delete(c.ExtFields, string(kb))
		case b == '{' || b == '[':
			d.badField("the custom field <%s> is %s, not a string, number or boolean", clip(kb), valueKind(b))
			if err := d.skipValue(2); err != nil {
				return err
			}
		default:
			// A new key beyond MaxExtFields is not stored (nor its key
			// made): one frame cannot build a map of millions of entries.
			if _, held := c.ExtFields[string(kb)]; !held && len(c.ExtFields) >= MaxExtFields {
				d.tooManyExt()
				if err := d.skipValue(2); err != nil {
					return err
				}
				break
			}
			key := d.arena.key(kb) // made before the value overwrites scratch
			val, ok, err := d.scalarText()
			if err != nil {
				return err
			}
			if !ok {
				return d.errorf("invalid character starting a value")
			}
			c.ExtFields[key] = val
		}
		if end, err := d.memberEnd(); end || err != nil {
			return err
		}
	}
}

// tooManyExt records a header with more than MaxExtFields extFields.
func (d *jsonDecoder) tooManyExt() {
	if d.fieldErr == nil {
		d.fieldErr = tooManyExtErr()
	}
}

// skipValue validates and skips one value nested at depth (the depth of the
// container holding it).
func (d *jsonDecoder) skipValue(depth int) error {
	switch b := d.peek(); {
	case b == '"':
		_, err := d.strBytes()
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
				if _, err := d.strBytes(); err != nil {
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

// str consumes a JSON string and returns its unescaped value as a string
// of its own (or an interned one).
func (d *jsonDecoder) str() (string, error) {
	b, err := d.strBytes()
	if err != nil {
		return "", err
	}
	return d.arena.value(b), nil
}

// strBytes consumes a JSON string and returns its unescaped bytes: a
// subslice of data when it has no escapes, else d.scratch, which the next
// call overwrites. Invalid UTF-8 and unpaired surrogates become U+FFFD, as
// encoding/json does.
func (d *jsonDecoder) strBytes() ([]byte, error) {
	if d.peek() != '"' {
		return nil, d.errorf("expected a string")
	}
	d.pos++
	start := d.pos
	data := d.data
	// Fast path: plain printable ASCII up to the closing quote.
	p := start
	for ; p < len(data); p++ {
		b := data[p]
		if b == '"' {
			d.pos = p + 1
			return data[start:p], nil
		}
		if b == '\\' || b < 0x20 || b >= utf8.RuneSelf {
			break
		}
	}
	if d.scratchBox == nil {
		d.getScratch()
	}
	buf := append(d.scratch[:0], data[start:p]...)
	for {
		if p >= len(data) {
			d.pos = p
			return nil, d.errorf("unterminated string")
		}
		b := data[p]
		switch {
		case b == '"':
			d.pos = p + 1
			d.scratch = buf
			return buf, nil
		case b < 0x20:
			d.pos = p
			return nil, d.errorf("control character in string")
		case b == '\\':
			if p+1 >= len(data) {
				d.pos = p
				return nil, d.errorf("unterminated escape")
			}
			switch e := data[p+1]; {
			case simpleEscapes[e] != 0:
				buf = append(buf, simpleEscapes[e])
				p += 2
			case e == 'u':
				r := hex4(data[p+2:])
				if r < 0 {
					d.pos = p
					return nil, d.errorf("invalid \\u escape")
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
				return nil, d.errorf("invalid escape")
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

// memberEnd reads what follows an object's member: ',' (more members
// follow) or '}' (end is true: the object ends).
func (d *jsonDecoder) memberEnd() (end bool, err error) {
	d.skipWS()
	switch d.peek() {
	case ',':
		d.pos++
		return false, nil
	case '}':
		d.pos++
		return true, nil
	}
	return false, d.errorf("expected ',' or '}' in object")
}

// simpleEscapes maps the byte after a backslash to the byte a one-byte
// JSON escape stands for (0: not one; \u is handled apart).
var simpleEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// scratchPool holds *[]byte buffers for unescaping: a send header's
// properties are escaped (\u0001, \u0002), so most JSON send headers
// need one, and a pooled one costs no allocation.
var scratchPool sync.Pool

// maxPooledScratch: scratch buffers that grew beyond this are left to the GC.
const maxPooledScratch = 64 << 10

func (d *jsonDecoder) getScratch() {
	if p, ok := scratchPool.Get().(*[]byte); ok {
		d.scratchBox, d.scratch = p, (*p)[:0]
		return
	}
	b := make([]byte, 0, 512)
	d.scratchBox, d.scratch = &b, b
}

// putScratch gives d.scratch back; nothing decoded refers to it (every
// string made from it is a copy).
func (d *jsonDecoder) putScratch() {
	if d.scratchBox == nil || cap(d.scratch) > maxPooledScratch {
		return
	}
	*d.scratchBox = d.scratch[:0]
	scratchPool.Put(d.scratchBox)
	d.scratchBox, d.scratch = nil, nil
}

// languageByBytes is languageByName without making a string of name.
func languageByBytes(name []byte) Language {
	for i, n := range languageNames {
		if n == string(name) {
			return Language(i)
		}
	}
	return LanguageOther
}

// maxRemarkQuote bounds how much of a peer's key or value a bad-field
// remark quotes: the answer to a bad header stays small.
const maxRemarkQuote = 64

// clip is s, or at most its first maxRemarkQuote bytes (cut at a rune
// boundary) and "...".
func clip[T string | []byte](s T) string {
	if len(s) <= maxRemarkQuote {
		return string(s)
	}
	n := maxRemarkQuote
	for n > maxRemarkQuote-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return string(s[:n]) + "..."
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

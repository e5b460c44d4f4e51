package remoting

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// ExtFields is a command's custom header: every value is a string, numbers in
// decimal and booleans as "true"/"false", as the Java header classes write them.
//
// The typed getters return a *FieldError for a missing required field
// (ErrMissingField) or a value that does not parse (ErrMalformedField). The
// Opt getters return def for a missing field and still reject malformed values.
type ExtFields map[string]string

// MaxExtFields bounds the extFields entries a decoded header holds (JSON
// or ROCKETMQ). Java's header classes have fewer than 40 fields, ACL and
// tracing add a handful, so no client comes near it; a header with more
// distinct keys is a bad request (ErrTooManyExtFields, answered
// SYSTEM_ERROR with the connection kept), and the keys beyond the bound
// are not stored, so one frame cannot build a map of millions of entries.
const MaxExtFields = 256

// ErrTooManyExtFields is the HeaderErr of a header with more than
// MaxExtFields extFields entries; it also wraps ErrBadHeaderField.
var ErrTooManyExtFields = errors.New("remoting: too many extFields")

// tooManyExtErr is the header error for a header beyond MaxExtFields.
func tooManyExtErr() error {
	return &BadRequestError{
		Remark: "the header has more than " + strconv.Itoa(MaxExtFields) + " extFields",
		kind:   fmt.Errorf("%w: %w", ErrBadHeaderField, ErrTooManyExtFields),
	}
}

// String returns the required field key.
func (e ExtFields) String(key string) (string, error) {
	v, ok := e[key]
	if !ok {
		return "", &FieldError{Key: key, Err: ErrMissingField}
	}
	return v, nil
}

// Int64 parses the required field key as a decimal int64.
func (e ExtFields) Int64(key string) (int64, error) {
	v, ok := e[key]
	if !ok {
		return 0, &FieldError{Key: key, Err: ErrMissingField}
	}
	return protocol.ParseIntField(key, v, 64)
}

// Int32 parses the required field key as a decimal int32.
func (e ExtFields) Int32(key string) (int32, error) {
	v, ok := e[key]
	if !ok {
		return 0, &FieldError{Key: key, Err: ErrMissingField}
	}
	n, err := protocol.ParseIntField(key, v, 32)
	return int32(n), err
}

// Bool parses the required field key: "true" or "false" in any case (also the
// strconv.ParseBool spellings 1/0/t/f).
func (e ExtFields) Bool(key string) (bool, error) {
	v, ok := e[key]
	if !ok {
		return false, &FieldError{Key: key, Err: ErrMissingField}
	}
	return protocol.ParseBoolField(key, v)
}

// OptString returns the field key, or def if it is absent.
func (e ExtFields) OptString(key, def string) string {
	if v, ok := e[key]; ok {
		return v
	}
	return def
}

// OptInt64 parses the field key, or returns def if it is absent.
func (e ExtFields) OptInt64(key string, def int64) (int64, error) {
	v, ok := e[key]
	if !ok {
		return def, nil
	}
	return protocol.ParseIntField(key, v, 64)
}

// OptInt32 parses the field key, or returns def if it is absent.
func (e ExtFields) OptInt32(key string, def int32) (int32, error) {
	v, ok := e[key]
	if !ok {
		return def, nil
	}
	n, err := protocol.ParseIntField(key, v, 32)
	return int32(n), err
}

// OptBool parses the field key, or returns def if it is absent.
func (e ExtFields) OptBool(key string, def bool) (bool, error) {
	v, ok := e[key]
	if !ok {
		return def, nil
	}
	return protocol.ParseBoolField(key, v)
}

// SetInt64 stores n in decimal.
func (e ExtFields) SetInt64(key string, n int64) { e[key] = strconv.FormatInt(n, 10) }

// SetInt32 stores n in decimal.
func (e ExtFields) SetInt32(key string, n int32) { e[key] = strconv.FormatInt(int64(n), 10) }

// SetBool stores "true" or "false".
func (e ExtFields) SetBool(key string, b bool) { e[key] = strconv.FormatBool(b) }

func itoa32(n int32) string { return strconv.FormatInt(int64(n), 10) }
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
func btoa(b bool) string    { return strconv.FormatBool(b) }

// extPool holds cleared ExtFields maps for NewExtFields and for the header
// decoders of client connections: a map released by ReleaseExtFields is
// reused instead of allocated (a send request's dozen fields cost several
// allocations).
var extPool sync.Pool

// requestExtPool holds the maps of requests decoded by server connections,
// apart from extPool: a broker gives every send request's map back once it
// is answered, and a client in the same process that keeps its responses'
// maps (or a small response map sized for 6 fields) must not drain or
// shrink the maps the next requests are decoded into.
var requestExtPool sync.Pool

// maxPooledExt: maps that grew beyond this many fields are left to the GC.
const maxPooledExt = 64

// NewExtFields returns an empty map from the pool, or a new one sized for
// hint fields.
func NewExtFields(hint int) ExtFields { return newExtFrom(&extPool, hint) }

func newExtFrom(p *sync.Pool, hint int) ExtFields {
	if m, ok := p.Get().(ExtFields); ok {
		return m
	}
	return make(ExtFields, hint)
}

// ReleaseExtFields clears c.ExtFields into the pool its decoder took it
// from (NewExtFields's for a map made otherwise), and sets it to nil. Call
// it only when nothing refers to the map any more — the request answered,
// its fields read — for a map that no one else holds; the broker does so
// for send requests once their response is written.
func (c *Command) ReleaseExtFields() {
	m, p := c.ExtFields, c.extPool
	c.ExtFields, c.extPool = nil, nil
	if m == nil || len(m) > maxPooledExt {
		return
	}
	if p == nil {
		p = &extPool
	}
	clear(m)
	p.Put(m)
}

// newExt returns an empty map for the decoder filling c: from the pool set
// in c.extPool (a server connection's requests), else from NewExtFields's.
func (c *Command) newExt() ExtFields {
	if c.extPool == nil {
		return NewExtFields(16)
	}
	return newExtFrom(c.extPool, 16)
}

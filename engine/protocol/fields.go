package protocol

import "strconv"

// fieldReader reads a request's custom header fields (a
// remoting.ExtFields) with the semantics of remoting.ExtFields' getters:
// a required field that is absent is ErrMissingField, a value that does
// not parse ErrMalformedField, an absent optional field its default. The
// first error is kept; the header parsers return it.
type fieldReader struct {
	ext map[string]string
	err error
}

func (r *fieldReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *fieldReader) get(key string, required bool) (string, bool) {
	v, ok := r.ext[key]
	if !ok && required {
		r.fail(&FieldError{Key: key, Err: ErrMissingField})
	}
	return v, ok
}

func (r *fieldReader) str(key string) string {
	v, _ := r.get(key, true)
	return v
}

func (r *fieldReader) optStr(key, def string) string {
	if v, ok := r.get(key, false); ok {
		return v
	}
	return def
}

func (r *fieldReader) int(key string, bits int, required bool, def int64) int64 {
	v, ok := r.get(key, required)
	if !ok {
		return def
	}
	n, err := ParseIntField(key, v, bits)
	if err != nil {
		r.fail(err)
	}
	return n
}

func (r *fieldReader) i64(key string) int64 { return r.int(key, 64, true, 0) }
func (r *fieldReader) i32(key string) int32 { return int32(r.int(key, 32, true, 0)) }

func (r *fieldReader) optI64(key string, def int64) int64 { return r.int(key, 64, false, def) }

func (r *fieldReader) optBool(key string, def bool) bool {
	v, ok := r.get(key, false)
	if !ok {
		return def
	}
	b, err := ParseBoolField(key, v)
	if err != nil {
		r.fail(err)
	}
	return b
}

func i32s(n int32) string { return strconv.FormatInt(int64(n), 10) }
func i64s(n int64) string { return strconv.FormatInt(n, 10) }

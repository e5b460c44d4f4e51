package protocol

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Errors of a request header's custom fields, wrapped in *FieldError.
var (
	ErrMissingField   = errors.New("protocol: required ext field missing")
	ErrMalformedField = errors.New("protocol: malformed ext field")
)

// FieldError reports a custom header field that is missing or does not
// parse. errors.Is(err, ErrMissingField) or errors.Is(err, ErrMalformedField)
// tells which. engine/remoting answers a request that fails with one
// SYSTEM_ERROR, remark Remark.
type FieldError struct {
	Key   string
	Value string
	Err   error // ErrMissingField or ErrMalformedField
	Cause error // the parse error, for malformed fields
}

func (e *FieldError) Error() string {
	if e.Err == ErrMissingField {
		return fmt.Sprintf("protocol: required ext field %q missing", e.Key)
	}
	return fmt.Sprintf("protocol: ext field %q=%q malformed: %v", e.Key, e.Value, e.Cause)
}

func (e *FieldError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// Remark is the text Java's header decoding gives the problem:
// "the custom field <name> is null" for a missing field.
func (e *FieldError) Remark() string {
	if e.Err == ErrMissingField {
		return "the custom field <" + e.Key + "> is null"
	}
	return fmt.Sprintf("the custom field <%s> is malformed: %q (%v)", e.Key, e.Value, e.Cause)
}

// ParseIntField parses the decimal value v of field key (bits wide) as the
// Java header classes write it; a bad value is a *FieldError.
func ParseIntField(key, v string, bits int) (int64, error) {
	n, err := strconv.ParseInt(v, 10, bits)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) {
			err = ne.Err // "invalid syntax" / "value out of range"; the value is in FieldError
		}
		return 0, &FieldError{Key: key, Value: v, Err: ErrMalformedField, Cause: err}
	}
	return n, nil
}

// ParseBoolField parses the boolean value v of field key ("true"/"false"
// in any case, or what strconv.ParseBool takes); a bad value is a
// *FieldError.
func ParseBoolField(key, v string) (bool, error) {
	switch {
	case strings.EqualFold(v, "true"):
		return true, nil
	case strings.EqualFold(v, "false"):
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, &FieldError{Key: key, Value: v, Err: ErrMalformedField, Cause: strconv.ErrSyntax}
	}
	return b, nil
}

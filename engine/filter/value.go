package filter

import (
	"cmp"
	"errors"
	"math"
	"strconv"
	"strings"
)

// kind is the Java type of a value.
type kind uint8

const (
	kNull   kind = iota
	kBool        // java.lang.Boolean
	kString      // java.lang.String
	kInt         // java.lang.Integer (32 bits)
	kLong        // java.lang.Long
	kDouble      // java.lang.Double
)

// value is one evaluated operand.
type value struct {
	k kind
	b bool
	s string
	n int64 // kInt, kLong
	f float64
}

var (
	nullValue  = value{}
	trueValue  = value{k: kBool, b: true}
	falseValue = value{k: kBool}
)

func boolValue(b bool) value {
	if b {
		return trueValue
	}
	return falseValue
}

func (v value) isNumber() bool { return v.k == kInt || v.k == kLong || v.k == kDouble }

func (v value) String() string {
	switch v.k {
	case kBool:
		if v.b {
			return "TRUE"
		}
		return "FALSE"
	case kString:
		return quote(v.s)
	case kInt, kLong:
		return strconv.FormatInt(v.n, 10)
	case kDouble:
		s := strconv.FormatFloat(v.f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEIN") {
			s += ".0" // stays a float literal when printed and parsed again
		}
		return s
	}
	return "NULL"
}

// equals is Java's Object.equals between two non-null values: same class
// and same value (Double.equals compares bit patterns: NaN equals NaN,
// 0.0 does not equal -0.0).
func (v value) equals(w value) bool {
	if v.k != w.k {
		return false
	}
	switch v.k {
	case kBool:
		return v.b == w.b
	case kString:
		return v.s == w.s
	case kInt, kLong:
		return v.n == w.n
	case kDouble:
		return math.Float64bits(v.f) == math.Float64bits(w.f) || (math.IsNaN(v.f) && math.IsNaN(w.f))
	}
	return true
}

// compareValues is ComparisonExpression.__compare with string conversion
// on (the parser always enables it): values of different classes are
// converted to a common one; a class pair with no conversion compares as
// -1; a string that does not convert is an error.
func compareValues(l, r value) (int, error) {
	if l.k != r.k {
		var err error
		switch l.k {
		case kBool:
			if r.k == kString {
				// Java casts the Boolean itself to String here: ClassCastException.
				return 0, evalErrorf("cannot compare %s with %s", l, r)
			}
			return -1, nil
		case kInt:
			switch r.k {
			case kLong:
				l.k = kLong
			case kDouble:
				l = value{k: kDouble, f: float64(l.n)}
			case kString:
				r, err = parseJava(r.s, kInt)
			default:
				return -1, nil
			}
		case kLong:
			switch r.k {
			case kInt:
				r.k = kLong
			case kDouble:
				l = value{k: kDouble, f: float64(l.n)}
			case kString:
				r, err = parseJava(r.s, kLong)
			default:
				return -1, nil
			}
		case kDouble:
			switch r.k {
			case kInt, kLong:
				r = value{k: kDouble, f: float64(r.n)}
			case kString:
				r, err = parseJava(r.s, kDouble)
			default:
				return -1, nil
			}
		case kString:
			switch r.k {
			case kBool, kInt, kLong, kDouble:
				l, err = parseJava(l.s, r.k)
			default:
				return -1, nil
			}
		default:
			return -1, nil
		}
		if err != nil {
			return 0, err
		}
	}
	switch l.k {
	case kBool:
		return cmp.Compare(b2i(l.b), b2i(r.b)), nil
	case kString:
		return strings.Compare(l.s, r.s), nil
	case kInt, kLong:
		return cmp.Compare(l.n, r.n), nil
	case kDouble:
		return javaDoubleCompare(l.f, r.f), nil
	}
	return 0, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// javaDoubleCompare is Double.compare: -0.0 < 0.0, NaN above everything
// and equal to itself.
func javaDoubleCompare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(math.Float64bits(a)>>63^1, math.Float64bits(b)>>63^1) // sign: -0.0 < 0.0
}

// parseJava converts a string as Boolean.valueOf, Integer.valueOf,
// Long.valueOf or Double.valueOf would.
func parseJava(s string, k kind) (value, error) {
	switch k {
	case kBool:
		return boolValue(strings.EqualFold(s, "true")), nil
	case kInt, kLong:
		bits := 64
		if k == kInt {
			bits = 32
		}
		if strings.ContainsRune(s, '_') || strings.HasPrefix(s, "0x") {
			return value{}, evalErrorf("%s is not a number", quote(s))
		}
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return value{}, evalErrorf("%s is not a number", quote(s))
		}
		return value{k: k, n: n}, nil
	case kDouble:
		f, ok := parseJavaDouble(s)
		if !ok {
			return value{}, evalErrorf("%s is not a number", quote(s))
		}
		return value{k: kDouble, f: f}, nil
	}
	return value{}, evalErrorf("cannot convert %s", quote(s))
}

// parseJavaDouble is Double.valueOf(String): surrounding whitespace (chars
// ≤ ' ') trimmed, an optional f/F/d/D suffix, "NaN" and "Infinity" spelled
// as Java spells them, out-of-range values as ±Infinity or 0.
func parseJavaDouble(s string) (float64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	body := strings.TrimLeft(s, "+-")
	switch {
	case len(body) != len(s) && len(s)-len(body) > 1:
		return 0, false
	case body == "NaN":
		return math.NaN(), true
	case body == "Infinity":
		if strings.HasPrefix(s, "-") {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if n := len(s); n > 0 && strings.ContainsRune("fFdD", rune(s[n-1])) {
		s = s[:n-1] // a type suffix (hex floats end in their exponent's decimal digits)
	}
	if s == "" || strings.ContainsAny(s, "_iInN") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

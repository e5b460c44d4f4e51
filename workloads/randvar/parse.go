package randvar

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// ErrSpec marks every spec and construction error of this package.
var ErrSpec = errors.New("randvar: bad distribution spec")

// Parse turns a spec (see the package doc) into a Dist. Errors wrap ErrSpec
// and quote the spec.
func Parse(spec string) (Dist, error) {
	d, err := parse(strings.TrimSpace(spec))
	if err != nil {
		return nil, fmt.Errorf("%w %q: %s", ErrSpec, spec, strings.TrimPrefix(err.Error(), ErrSpec.Error()+": "))
	}
	return d, nil
}

func parse(spec string) (Dist, error) {
	if spec == "" {
		return nil, errors.New("empty spec (want e.g. fixed:1024, uniform:128-4096, zipf:1-1000, weighted:128=0.5,1024=0.5, roundrobin:0-15)")
	}
	kind, arg, ok := strings.Cut(spec, ":")
	if !ok {
		v, err := parseNumber(spec)
		if err != nil {
			return nil, fmt.Errorf("%v (a bare spec must be a number; otherwise kind:args)", err)
		}
		return Fixed(v), nil
	}
	switch strings.ToLower(kind) {
	case "fixed":
		v, err := parseNumber(arg)
		if err != nil {
			return nil, err
		}
		return Fixed(v), nil
	case "uniform":
		lo, hi, err := parseRange(arg)
		if err != nil {
			return nil, err
		}
		return NewUniform(lo, hi)
	case "roundrobin", "rr":
		lo, hi, err := parseRange(arg)
		if err != nil {
			return nil, err
		}
		return NewRoundRobin(lo, hi)
	case "zipf":
		rng, opt, _ := strings.Cut(arg, ",")
		lo, hi, err := parseRange(rng)
		if err != nil {
			return nil, err
		}
		theta := DefaultTheta
		if opt != "" {
			k, v, ok := strings.Cut(opt, "=")
			if !ok || strings.TrimSpace(k) != "theta" {
				return nil, fmt.Errorf("zipf option %q: want theta=<0..1>", opt)
			}
			if theta, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
				return nil, fmt.Errorf("zipf theta %q is not a number", v)
			}
		}
		return NewZipf(lo, hi, theta)
	case "weighted":
		var vals []uint64
		var ws []float64
		for _, part := range strings.Split(arg, ",") {
			v, w, ok := strings.Cut(part, "=")
			if !ok {
				return nil, fmt.Errorf("weighted entry %q: want value=weight", part)
			}
			n, err := parseNumber(v)
			if err != nil {
				return nil, err
			}
			x, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
			if err != nil {
				return nil, fmt.Errorf("weighted entry %q: weight is not a number", part)
			}
			vals, ws = append(vals, n), append(ws, x)
		}
		return NewWeighted(vals, ws)
	default:
		return nil, fmt.Errorf("unknown kind %q (want fixed, uniform, zipf, weighted or roundrobin)", kind)
	}
}

func parseRange(s string) (lo, hi uint64, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, fmt.Errorf("range %q: want min-max", s)
	}
	if lo, err = parseNumber(a); err != nil {
		return 0, 0, err
	}
	if hi, err = parseNumber(b); err != nil {
		return 0, 0, err
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("range %q: min %d > max %d", s, lo, hi)
	}
	return lo, hi, nil
}

var suffixes = []struct {
	s string
	m uint64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
}

// parseNumber parses a non-negative integer with an optional IEC suffix.
func parseNumber(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	mult := uint64(1)
	lt := strings.ToLower(t)
	for _, x := range suffixes {
		if strings.HasSuffix(lt, x.s) {
			t, mult = strings.TrimSpace(t[:len(t)-len(x.s)]), x.m
			break
		}
	}
	v, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a non-negative integer (optionally with KiB, MiB or GiB)", s)
	}
	if v > ^uint64(0)/mult {
		return 0, fmt.Errorf("%q overflows uint64", s)
	}
	return v * mult, nil
}

// Var is a Dist that remembers its spec: a config field or a command-line flag
// (it implements flag.Value, pflag.Value and encoding.TextUnmarshaler, so YAML
// and JSON configs carry the spec string). The zero Var is unset: IsZero
// reports true and Uint64 returns 0.
type Var struct {
	spec string
	d    Dist
}

// NewVar wraps a Dist; the spec is its String() if it has one.
func NewVar(d Dist) Var {
	if s, ok := d.(fmt.Stringer); ok {
		return Var{spec: s.String(), d: d}
	}
	return Var{spec: fmt.Sprintf("%v", d), d: d}
}

// ParseVar is Parse returning a Var.
func ParseVar(spec string) (Var, error) {
	d, err := Parse(spec)
	if err != nil {
		return Var{}, err
	}
	return Var{spec: strings.TrimSpace(spec), d: d}, nil
}

// IsZero reports whether the Var is unset.
func (v Var) IsZero() bool { return v.d == nil }

// Dist returns the underlying distribution (nil when unset).
func (v Var) Dist() Dist { return v.d }

// Uint64 implements Dist.
func (v Var) Uint64(rng *rand.Rand) uint64 {
	if v.d == nil {
		return 0
	}
	return v.d.Uint64(rng)
}

// String returns the spec ("" when unset).
func (v Var) String() string { return v.spec }

// Set implements flag.Value.
func (v *Var) Set(spec string) error {
	p, err := ParseVar(spec)
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// Type implements pflag.Value.
func (v *Var) Type() string { return "dist" }

// MarshalText implements encoding.TextMarshaler.
func (v Var) MarshalText() ([]byte, error) { return []byte(v.spec), nil }

// UnmarshalText implements encoding.TextUnmarshaler; empty text leaves the
// Var unset.
func (v *Var) UnmarshalText(b []byte) error {
	if strings.TrimSpace(string(b)) == "" {
		*v = Var{}
		return nil
	}
	return v.Set(string(b))
}

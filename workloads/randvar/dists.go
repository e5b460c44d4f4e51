package randvar

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
)

// Fixed always returns its value.
type Fixed uint64

// Uint64 implements Dist.
func (f Fixed) Uint64(*rand.Rand) uint64 { return uint64(f) }

// At implements Indexed.
func (f Fixed) At(uint64) uint64 { return uint64(f) }

func (f Fixed) String() string { return "fixed:" + strconv.FormatUint(uint64(f), 10) }

// Uniform is uniform on [Min, Max].
type Uniform struct{ Min, Max uint64 }

// NewUniform checks min <= max.
func NewUniform(min, max uint64) (Uniform, error) {
	if min > max {
		return Uniform{}, fmt.Errorf("%w: uniform min %d > max %d", ErrSpec, min, max)
	}
	return Uniform{min, max}, nil
}

// Uint64 implements Dist.
func (u Uniform) Uint64(rng *rand.Rand) uint64 {
	span := u.Max - u.Min + 1
	if span == 0 { // the full uint64 range
		return rng.Uint64()
	}
	return u.Min + rng.Uint64N(span)
}

func (u Uniform) String() string { return fmt.Sprintf("uniform:%d-%d", u.Min, u.Max) }

// RoundRobin cycles through Min..Max. Uint64 ignores the rng and advances a
// shared atomic counter; At(n) is the n-th value without any state.
type RoundRobin struct {
	min, max uint64
	next     *atomic.Uint64
}

// NewRoundRobin checks min <= max.
func NewRoundRobin(min, max uint64) (RoundRobin, error) {
	if min > max {
		return RoundRobin{}, fmt.Errorf("%w: roundrobin min %d > max %d", ErrSpec, min, max)
	}
	return RoundRobin{min: min, max: max, next: new(atomic.Uint64)}, nil
}

// Uint64 implements Dist.
func (r RoundRobin) Uint64(*rand.Rand) uint64 { return r.At(r.next.Add(1) - 1) }

// At implements Indexed.
func (r RoundRobin) At(n uint64) uint64 {
	span := r.max - r.min + 1
	if span == 0 {
		return n
	}
	return r.min + n%span
}

func (r RoundRobin) String() string { return fmt.Sprintf("roundrobin:%d-%d", r.min, r.max) }

// Weighted returns one of its values with probability proportional to its
// weight.
type Weighted struct {
	values []uint64
	cum    []float64 // cumulative weights, cum[len-1] = total
}

// NewWeighted builds a Weighted from parallel slices; weights must be positive
// and finite.
func NewWeighted(values []uint64, weights []float64) (*Weighted, error) {
	if len(values) == 0 || len(values) != len(weights) {
		return nil, fmt.Errorf("%w: weighted needs one weight per value (%d values, %d weights)", ErrSpec, len(values), len(weights))
	}
	w := &Weighted{values: append([]uint64(nil), values...), cum: make([]float64, len(weights))}
	total := 0.0
	for i, x := range weights {
		if !(x > 0) || x > 1e300 {
			return nil, fmt.Errorf("%w: weighted: weight %v of value %d must be positive and finite", ErrSpec, x, values[i])
		}
		total += x
		w.cum[i] = total
	}
	return w, nil
}

// Uint64 implements Dist.
func (w *Weighted) Uint64(rng *rand.Rand) uint64 {
	x := rng.Float64() * w.cum[len(w.cum)-1]
	i := sort.SearchFloat64s(w.cum, x)
	if i < len(w.cum) && w.cum[i] == x { // SearchFloat64s finds the first cum >= x; x must be < cum[i]
		i++
	}
	if i >= len(w.values) {
		i = len(w.values) - 1
	}
	return w.values[i]
}

// Mean is the weighted mean of the values.
func (w *Weighted) Mean() float64 {
	sum, prev := 0.0, 0.0
	for i, c := range w.cum {
		sum += float64(w.values[i]) * (c - prev)
		prev = c
	}
	return sum / w.cum[len(w.cum)-1]
}

func (w *Weighted) String() string {
	var b strings.Builder
	b.WriteString("weighted:")
	prev := 0.0
	for i, c := range w.cum {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d=%s", w.values[i], strconv.FormatFloat(c-prev, 'g', -1, 64))
		prev = c
	}
	return b.String()
}

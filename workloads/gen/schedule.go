package gen

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Arrival is an open-loop inter-arrival law.
type Arrival string

// The arrival laws.
const (
	Uniform Arrival = "uniform" // message i at i/rate
	Poisson Arrival = "poisson" // exponential gaps of mean 1/rate
)

// Schedule yields the intended send offsets of an open loop. It never looks
// at responses. Not safe for concurrent use.
type Schedule struct {
	arrival Arrival
	rate    float64
	rng     *rand.Rand
	i       uint64
	at      float64 // ns, Poisson
}

// NewSchedule checks the rate (msg/s, > 0) and the law; seed drives Poisson.
func NewSchedule(a Arrival, rate float64, seed uint64) (*Schedule, error) {
	if !(rate > 0) || rate > 1e9 {
		return nil, fmt.Errorf("%w: rate %v msg/s must be in (0, 1e9]", ErrConfig, rate)
	}
	switch a {
	case "":
		a = Uniform
	case Uniform, Poisson:
	default:
		return nil, fmt.Errorf("%w: arrival %q (want uniform or poisson)", ErrConfig, a)
	}
	return &Schedule{arrival: a, rate: rate, rng: rand.New(rand.NewPCG(seed, 0xbb67ae8584caa73b))}, nil
}

// Next returns the next message's intended offset from the schedule start.
// Uniform offsets are computed from the index (no drift).
func (s *Schedule) Next() time.Duration {
	defer func() { s.i++ }()
	if s.arrival == Uniform {
		return time.Duration(float64(s.i) * 1e9 / s.rate)
	}
	if s.i > 0 {
		s.at += s.rng.ExpFloat64() * 1e9 / s.rate
	}
	return time.Duration(s.at)
}

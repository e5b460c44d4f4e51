// Package randvar provides seeded random variables for workload generators:
// message sizes, topic and queue choice, keys and tags.
//
// A Dist is one method that takes the *rand.Rand explicitly, so a run is
// reproducible from its seed: whoever owns the generator owns the sequence.
// Every Dist here is immutable after construction and safe for concurrent use
// (RoundRobin uses an atomic counter); the *rand.Rand passed in is not, so
// each goroutine brings its own.
//
// Specs (Parse, Var) name a distribution in configs and flags:
//
//	fixed:1024  or  1024                  always 1024
//	uniform:128-4096                      uniform on [128, 4096]
//	zipf:1-1000                           zipfian on [1, 1000], theta 0.99 (YCSB)
//	zipf:1-1000,theta=0.8                 with another skew, 0 < theta < 1
//	weighted:128=0.5,1024=0.3,4096=0.2    listed values with relative weights
//	roundrobin:0-15  (alias rr:0-15)      0, 1, ..., 15, 0, 1, ...
//
// Numbers may carry an IEC size suffix: 4KiB, 1MiB, 1GiB (k, M, G = same).
package randvar

import "math/rand/v2"

// Dist is a random variable over uint64.
type Dist interface {
	Uint64(rng *rand.Rand) uint64
}

// Indexed is implemented by distributions whose n-th draw is a function of n
// alone (RoundRobin). Generators that key every message by its sequence number
// call At(seq) instead of Uint64 so the value does not depend on which
// goroutine built which message.
type Indexed interface {
	At(n uint64) uint64
}

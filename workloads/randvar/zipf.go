package randvar

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// DefaultTheta is YCSB's zipfian constant.
const DefaultTheta = 0.99

// MaxZipfItems bounds the range of a Zipf: its constructor sums the zeta
// series term by term (O(n), about 10 ns per item: 0.3 s at the bound).
const MaxZipfItems = 1 << 25

// Zipf is zipfian on [Min, Max]: Min is the most frequent value, then Min+1,
// and so on; P(Min+k) is proportional to 1/(k+1)^theta. It uses the
// constant-time sampling method of Gray et al., "Quickly Generating
// Billion-Record Synthetic Databases" (SIGMOD 1994), as YCSB does: Min and
// Min+1 are drawn with their exact probabilities, higher ranks follow a
// continuous approximation of the law (rank 3 comes out ~15% too often).
type Zipf struct {
	min, n            uint64
	theta             float64
	alpha, zetan, eta float64
	halfPowTheta      float64 // 0.5^theta
}

// NewZipf builds a Zipf over [min, max] with skew theta in (0, 1).
func NewZipf(min, max uint64, theta float64) (*Zipf, error) {
	if min > max {
		return nil, fmt.Errorf("%w: zipf min %d > max %d", ErrSpec, min, max)
	}
	if !(theta > 0 && theta < 1) {
		return nil, fmt.Errorf("%w: zipf theta %v must be in (0, 1)", ErrSpec, theta)
	}
	n := max - min + 1
	if n == 0 || n > MaxZipfItems {
		return nil, fmt.Errorf("%w: zipf range of %d-%d has more than %d items", ErrSpec, min, max, MaxZipfItems)
	}
	z := &Zipf{min: min, n: n, theta: theta}
	z.zetan = zeta(n, theta)
	zeta2 := zeta(2, theta)
	z.alpha = 1 / (1 - theta)
	z.eta = (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta2/z.zetan)
	z.halfPowTheta = math.Pow(0.5, theta)
	return z, nil
}

func zeta(n uint64, theta float64) float64 {
	s := 0.0
	for i := uint64(1); i <= n; i++ {
		s += 1 / math.Pow(float64(i), theta)
	}
	return s
}

// Uint64 implements Dist.
func (z *Zipf) Uint64(rng *rand.Rand) uint64 {
	if z.n == 1 {
		return z.min
	}
	u := rng.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return z.min
	}
	if uz < 1+z.halfPowTheta {
		return z.min + 1
	}
	k := uint64(float64(z.n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	if k >= z.n {
		k = z.n - 1
	}
	return z.min + k
}

// P returns the exact probability of min+k (for tests and plots).
func (z *Zipf) P(k uint64) float64 {
	if k >= z.n {
		return 0
	}
	return 1 / math.Pow(float64(k+1), z.theta) / z.zetan
}

func (z *Zipf) String() string {
	s := fmt.Sprintf("zipf:%d-%d", z.min, z.min+z.n-1)
	if z.theta != DefaultTheta {
		s += ",theta=" + strconv.FormatFloat(z.theta, 'g', -1, 64)
	}
	return s
}

package hist

import (
	"errors"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Config sets the histogram geometry and the .hgrm output.
type Config struct {
	Lowest    int64   // lowest discernible value, ns (1)
	Highest   int64   // highest trackable value, ns (60 s); larger values are clamped and counted
	SigFigs   int     // significant figures, 1..5 (3: within ~0.1%)
	HgrmTicks int32   // PercentilesPrint ticks per half distance (5)
	HgrmScale float64 // divisor for .hgrm values (1e6: ms, as HdrHistogram's tools assume)
}

// DefaultConfig is New(1, 60e9, 3) with a ms .hgrm.
func DefaultConfig() Config {
	return Config{Lowest: 1, Highest: int64(60 * time.Second), SigFigs: 3, HgrmTicks: 5, HgrmScale: 1e6}
}

// ErrConfig is returned for an invalid Config.
var ErrConfig = errors.New("hist: invalid config")

func (c Config) validate() error {
	if c.Lowest < 1 || c.Highest < 2*c.Lowest || c.SigFigs < 1 || c.SigFigs > 5 || c.HgrmTicks < 1 || !(c.HgrmScale > 0) {
		return ErrConfig
	}
	return nil
}

func (c Config) newHistogram() *hdr.Histogram { return hdr.New(c.Lowest, c.Highest, c.SigFigs) }

// MetricName maps a free-form name to a valid metric name (see package doc).
func MetricName(s string) string {
	if s == "" {
		return "_"
	}
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}

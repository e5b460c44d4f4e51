package consumequeue

import (
	"fmt"
	"math"
)

// Config sizes consume-queue files.
type Config struct {
	// UnitsPerFile is the number of 20-byte units per segment file
	// (RocketMQ mappedFileSizeConsumeQueue / 20 = 300,000).
	UnitsPerFile int
}

// DefaultConfig returns RocketMQ's defaults: 300,000 units (6,000,000 bytes)
// per file.
func DefaultConfig() Config {
	return Config{UnitsPerFile: 300000}
}

func (c Config) validate() error {
	if c.UnitsPerFile <= 0 || int64(c.UnitsPerFile)*UnitSize > math.MaxInt32 {
		return fmt.Errorf("%w: UnitsPerFile=%d", ErrInvalidConfig, c.UnitsPerFile)
	}
	return nil
}

func (c Config) fileSize() int64 { return int64(c.UnitsPerFile) * UnitSize }

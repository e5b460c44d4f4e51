package index

import (
	"fmt"
	"math"
)

// Sizes of the file regions.
const (
	headerSize = 40
	slotSize   = 4
	entrySize  = 20
)

// Config sizes index files and bounds queries.
type Config struct {
	// MaxHashSlots is the number of hash buckets per file (maxHashSlotNum).
	MaxHashSlots int
	// MaxIndexNum is the number of entry places per file, entry 0 unused
	// (maxIndexNum).
	MaxIndexNum int
	// MaxQueryNum caps the offsets one query returns (maxMsgsNumBatch).
	MaxQueryNum int
	// OnFileFull, if set, is called from a background goroutine after a full
	// file has been msynced, with that file's endTimestamp (the store sets
	// the checkpoint's indexMsgTimestamp from it). It must not call back into
	// the Service (Close waits for it). Not part of any serialized
	// configuration.
	OnFileFull func(endTimestamp int64)
}

// DefaultConfig returns RocketMQ's defaults: 5,000,000 slots, 20,000,000
// entries (420,000,040-byte files), 64 results per query.
func DefaultConfig() Config {
	return Config{MaxHashSlots: 5000000, MaxIndexNum: 20000000, MaxQueryNum: 64}
}

// FileSize is the byte size of one index file.
func (c Config) FileSize() int64 {
	return headerSize + int64(c.MaxHashSlots)*slotSize + int64(c.MaxIndexNum)*entrySize
}

func (c Config) validate() error {
	if c.MaxHashSlots <= 0 || c.MaxIndexNum < 2 || c.MaxQueryNum <= 0 ||
		c.MaxHashSlots > math.MaxInt32 || c.MaxIndexNum > math.MaxInt32 ||
		c.FileSize() > math.MaxInt {
		return fmt.Errorf("%w: %+v", ErrInvalidConfig, c)
	}
	return nil
}

// Package commitlog is RocketMQ's CommitLog: one append-only log of records
// for all topics, stored in fixed-size segments (package segment) written
// through a swappable write path (package iopath) and made durable by a
// swappable flush policy (package flush).
//
// On-disk format: every record is RocketMQ's byte-exact commit-log record
// (package record: TOTALSIZE, MAGICCODE, BODYCRC, QUEUEID, FLAG,
// QUEUEOFFSET, PHYSICALOFFSET, SYSFLAG, BORNTIMESTAMP, BORNHOST,
// STORETIMESTAMP, STOREHOSTADDRESS, RECONSUMETIMES, PREPARED TX OFFSET,
// BODY, TOPIC, PROPERTIES). A record never spans segments: when
// record+8 bytes do not fit, the 8-byte end-of-file blank
// [int32 remaining][int32 0xCBD43194] is written and the record goes to the
// start of the next segment, so every full segment ends with a blank.
//
//	segment N:  | rec | rec | rec | ... | rec | BLANK(remaining) ....... |
//	segment N+1:| rec | ...
//
// Physical offsets are global: segment start + position.
//
// Concurrency: Append may be called from many goroutines; appends are
// serialized by one append lock (RocketMQ's putMessageLock) whose hold time
// is measured. Encoding and the wait for durability happen outside it.
// Reads (Read, ReadRecord) may run concurrently with appends for offsets
// below MaxOffset. Close must not race with Append.
package commitlog

import (
	"net/netip"
	"path/filepath"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/vfs"
)

// Config configures a Log. Start from DefaultConfig.
type Config struct {
	// Dir is the store root; segments live in Dir/commitlog.
	Dir string
	FS  vfs.FS
	// Path is the write path (mmap, pwrite, pool, direct, uncached).
	Path iopath.Kind
	// IO holds the write-path knobs (warm-up, mlock, hints, pool, cache).
	IO iopath.Config
	// Flush is the flush policy and its knobs.
	Flush flush.Config
	// SegmentSize is mappedFileSizeCommitLog (1 GiB).
	SegmentSize int64
	// MaxBodySize is maxMessageSize (4 MiB): the body limit.
	MaxBodySize int
	// StoreHost is written into every record and its offset message id.
	StoreHost netip.AddrPort
	// PreallocateNext creates the next segment in the background.
	PreallocateNext bool
	// CheckCRC verifies body CRCs when scanning at open.
	CheckCRC bool
	// BusyTimeout is osPageCacheBusyTimeOutMills: an append that arrives
	// while the current holder of the append lock has held it longer than
	// this is refused at once with OS_PAGE_CACHE_BUSY (back pressure,
	// RocketMQ's isOSPageCacheBusy), without waiting for the lock. 0 means
	// OSPageCacheBusyTimeout (1 s); negative disables the check.
	BusyTimeout time.Duration
	// OnRoll, if set, is called (under the append lock; keep it cheap) when
	// appends move to a new segment.
	OnRoll func(RollEvent)
}

// RollEvent reports a segment roll.
type RollEvent struct {
	Time     time.Time
	NewStart int64
	// Prepared is false when the segment had to be created inline.
	Prepared bool
}

// DefaultConfig returns RocketMQ's defaults for a store rooted at dir, with
// the mmap write path and the async flush policy.
func DefaultConfig(dir string) Config {
	return Config{
		Dir:             dir,
		FS:              vfs.Default,
		Path:            iopath.Mmap,
		IO:              iopath.DefaultConfig(),
		Flush:           flush.DefaultConfig(flush.Async),
		SegmentSize:     1 << 30,
		MaxBodySize:     4 << 20,
		StoreHost:       netip.MustParseAddrPort("127.0.0.1:10911"),
		PreallocateNext: true,
		CheckCRC:        true,
	}
}

// SegmentDir returns the directory holding the segments of a store root.
func SegmentDir(root string) string { return filepath.Join(root, "commitlog") }

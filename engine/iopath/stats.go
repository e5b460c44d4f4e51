package iopath

import (
	"sync/atomic"
	"time"
)

// IOStats counts what an Appender asked of the OS since it was opened.
type IOStats struct {
	Appends     uint64 // successful Append calls
	AppendBytes uint64 // bytes accepted by Append
	WriteCalls  uint64 // pwrite(2)/pwritev2(2) calls (pool commits, pwrite and uncached appends, direct block writes); 0 for mmap
	WriteBytes  uint64 // bytes passed to pwrite(2), including direct's padding and tail rewrites
	SyncCalls   uint64 // fdatasync(2) or msync(2) calls
	SyncNanos   uint64 // wall time spent in them

	// Read-side counters of the direct path (0 for the others): where
	// ReadAt found its bytes. StagingHits counts ReadAt calls served at
	// least in part from the staging or in-flight buffers; RingHits and
	// CacheHits count cache blocks served from the BlockCache's ring of
	// recently written blocks and from its ristretto cache; DeviceReads and
	// DeviceReadBytes count the O_DIRECT preads that served the rest.
	StagingHits     uint64
	RingHits        uint64
	CacheHits       uint64
	DeviceReads     uint64
	DeviceReadBytes uint64
	// StageWaits counts direct Appends that found every staging buffer in
	// flight and waited for the writer (back pressure).
	StageWaits uint64
}

// Stats is implemented by every Appender in this package.
type Stats interface {
	IOStats() IOStats
}

// ioCounters are cheap atomics updated on the data path.
type ioCounters struct {
	appends, appendBytes, writeCalls, writeBytes, syncCalls, syncNanos atomic.Uint64

	stagingHits, ringHits, cacheHits, deviceReads, deviceReadBytes, stageWaits atomic.Uint64
}

func (c *ioCounters) countDeviceRead(n int) {
	c.deviceReads.Add(1)
	c.deviceReadBytes.Add(uint64(n))
}

func (c *ioCounters) countAppend(n int) {
	c.appends.Add(1)
	c.appendBytes.Add(uint64(n))
}

func (c *ioCounters) countWrite(n int) {
	c.writeCalls.Add(1)
	c.writeBytes.Add(uint64(n))
}

func (c *ioCounters) countSync(d time.Duration) {
	c.syncCalls.Add(1)
	c.syncNanos.Add(uint64(d))
}

func (c *ioCounters) IOStats() IOStats {
	return IOStats{
		Appends:     c.appends.Load(),
		AppendBytes: c.appendBytes.Load(),
		WriteCalls:  c.writeCalls.Load(),
		WriteBytes:  c.writeBytes.Load(),
		SyncCalls:   c.syncCalls.Load(),
		SyncNanos:   c.syncNanos.Load(),

		StagingHits:     c.stagingHits.Load(),
		RingHits:        c.ringHits.Load(),
		CacheHits:       c.cacheHits.Load(),
		DeviceReads:     c.deviceReads.Load(),
		DeviceReadBytes: c.deviceReadBytes.Load(),
		StageWaits:      c.stageWaits.Load(),
	}
}

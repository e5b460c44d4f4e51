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
}

// Stats is implemented by every Appender in this package.
type Stats interface {
	IOStats() IOStats
}

// ioCounters are cheap atomics updated on the data path.
type ioCounters struct {
	appends, appendBytes, writeCalls, writeBytes, syncCalls, syncNanos atomic.Uint64
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
	}
}

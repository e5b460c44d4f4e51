// Package probe samples what the kernel does underneath a run: the
// page-cache state of the store's segment files (cachestat(2): cached,
// dirty, writeback, evicted and recently evicted pages per file, without
// mapping it; mincore(2) through engine/pagecache where the kernel lacks
// cachestat, Linux < 6.5, and as its check in the tests), /proc/vmstat
// (dirty and writeback pages, major faults, pages in/out), /proc/<pid>/io
// (bytes that reached the block layer), and the process's own fault counts.
// A Sampler turns these into a time series of Points, one per interval.
// MemoryBudget puts a process into a memory cgroup with a limit, so the page
// cache it may use is bounded (measurement.md §7.6).
//
// Units: vmstat nr_* values are pages (gauges: the value at the sample);
// pgpgin/pgpgout are KiB and every other vmstat field is a counter reported
// as the delta since the previous sample; /proc/<pid>/io fields are bytes or
// call counts (deltas); faults are counts (deltas); SegmentCache fields are
// pages. BenchmarkProbe measures the probe's own cost per kind and number
// of segments.
//
// Concurrency: parsers are pure functions. A Sampler's Sample and Run are
// called by one goroutine; Points may be called from any goroutine.
// MemoryBudget methods are safe for concurrent use (the kernel serialises).
package probe

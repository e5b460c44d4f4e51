// Package hist records latencies into HdrHistograms (hdrhistogram-go v1.4.0)
// the way measurement.md §6.5 and §7.1 describe: values in nanoseconds,
// New(1, 60e9, 3) by default, one Recorder per goroutine (or per small group
// of goroutines), and a single reporter goroutine that swaps each Recorder's
// histograms every interval, merges them per metric, and
//
//   - returns an Interval of Snapshots (count, rate, MB/s, min/mean,
//     p50/p90/p99/p99.9/p99.99/max) for the progress line and the time series;
//   - writes each measured interval of each metric to a .hlog (one tagged
//     line per metric and interval, V2 compressed base64; Tag = metric name);
//   - merges measured intervals into a cumulative histogram per metric, from
//     which WriteHgrm prints the .hgrm percentile table (PercentilesPrint,
//     5 ticks per half distance, values in ms by default, as HdrHistogram's plotter expects).
//
// Metrics are named freely ("service", "response", "send_delay", "flush",
// "e2e", ...); a name may contain only letters, digits, '_', '-' and '.'
// (other bytes become '_'), so it is a valid .hlog tag and file-name part.
// Counters (errors, duplicates, ...) travel with the histograms.
//
// Warm-up: Start(now, measureFrom) fixes the end of warm-up. Every sample has
// a Phase: generators that know a message's intended send time classify it
// exactly (Recorder.In(PhaseOf(intended, measureFrom))), so a count-bounded
// run measures exactly its count; samples recorded through the plain
// Recorder (Auto) take the Collector's phase at the tick that drains them
// (warm-up until the first Tick or EndWarmup at or after measureFrom).
// Intervals that began before measureFrom are flagged Warmup; their snapshots
// show every sample (progress), while only measured samples reach the .hlog,
// the cumulative histograms and the Summary's counters.
//
// .hlog times: the header carries StartTime = the measuring start and
// BaseTime = that instant truncated to a whole second (the library prints
// BaseTime in whole seconds, so a sub-second base would not round-trip);
// interval timestamps are seconds relative to BaseTime, and the library's
// reader turns them back into absolute milliseconds (within 1 ms).
// Interval_Max is in milliseconds (the library's fixed ns->ms ratio).
//
// Concurrency: Recorder methods are safe for concurrent use (a mutex, held for
// one histogram update; give each goroutine its own Recorder to avoid
// contention). NewRecorder is safe for concurrent use. Start, Tick, EndWarmup,
// Summary, Histogram and the Write* methods are called by one reporter
// goroutine.
package hist

// Package gen generates load against a workloads.Driver and consumes it from
// a workloads.Source, recording latencies into a hist.Collector.
//
// Producers:
//
//   - OpenLoop sends at a target rate on a fixed schedule (uniform or Poisson
//     inter-arrival times) shared by Workers goroutines. Message i has an
//     intended send time start + offset(i), independent of responses: when
//     the system stalls, the schedule does not slow down; the due messages
//     queue up and go out as soon as workers are free. Three metrics:
//     "service" (ack - actual send, OMB's publish latency), "response"
//     (ack - intended send: latency without coordinated omission, wrk2/YCSB
//     "intended") and "send_delay" (actual - intended, OMB's publish delay).
//     Workers must exceed rate x service time, or the generator itself falls
//     behind (visible as send_delay).
//   - ClosedLoop runs Producers goroutines that each send as soon as the
//     previous send was acknowledged (plus ThinkTime): "service" only
//     (optionally "service_corrected", hdrhistogram's back-fill).
//
// Consumers (over a workloads.Source):
//
//   - TailConsumer starts at each queue's current end and follows it: "e2e"
//     (now - born) and "e2e_intended" (now - intended send) per message,
//     "pull" per non-empty Pull. Header and consumer times are in the run's
//     clock (Start's wall time plus monotonic elapsed), and an open-loop born
//     time is the intended time plus the header's whole-µs delay (at most
//     1 µs before the send), so the consumer recovers each intended time
//     exactly and splits warm-up from measurement as the producer did.
//   - LagConsumer starts a number of messages or bytes behind the end and
//     measures the catch-up to the end as of its start (CatchUp: messages,
//     bytes, elapsed, rates; "pull" per Pull), then optionally tails.
//
// Every message is a pure function of (MessageConfig.Seed, seq): its size,
// topic, queue, key, tag and filler come from a PCG generator seeded with the
// seed and a hash of seq, so the same seed gives the same sequence of
// messages whichever worker builds them. The body layout is the
// workloads.Header (24 bytes) + filler. Consumers count duplicates by
// (stream, seq).
//
// Warm-up is decided per sample, not per tick: producers classify a sample
// by the message's intended send time (open loop) or actual send time
// (closed loop), consumers an e2e sample by the message's intended send
// time, so a count-bounded run measures exactly Count messages; "pull" and
// the counters of consumers take the Collector's phase (hist.Auto).
//
// Run ties producers and consumers to one Collector and one time window:
// warm-up (reported, not measured), then Duration and/or per-producer Count,
// then a drain for consumers; it ticks the Collector every Interval and stops
// cleanly on ctx cancellation (Result.Status "interrupted").
//
// Concurrency: a generator's Run is called once; Stats/CatchUp may be called
// after Run returns (or concurrently, for a progress view).
package gen

// Metric and counter names recorded by the generators.
const (
	MetricService          = "service"
	MetricResponse         = "response"
	MetricSendDelay        = "send_delay"
	MetricServiceCorrected = "service_corrected"
	MetricE2E              = "e2e"
	MetricE2EIntended      = "e2e_intended"
	MetricPull             = "pull"

	CounterSendErrors = "send_errors"
	CounterPullErrors = "pull_errors"
	CounterDuplicates = "duplicates"
	CounterForeign    = "foreign_bodies" // bodies without a generated header
	CounterCatchUp    = "catchup_msgs"
)

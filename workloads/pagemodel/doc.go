// Package pagemodel predicts the page cache under a brokerlab store: each
// segment's resident and dirty bytes over time, when the kernel's
// background writeback starts and when appends are throttled, from the
// workload, the write path, the flush policy, the budget and the kernel's
// writeback settings (/proc/sys/vm). `brokerlab predict` prints it; every
// run with a page-cache probe stores it beside the measurement.
//
// # Model
//
// W is the append rate (B/s), D the device's writeback rate (0: unknown,
// taken as D ≥ W), S the segment size, F the async flush period, E the
// dirty expiry and P the flusher period. M is the dirtyable memory
// (MemAvailable; with cgroup v2 and a budget B, min(M, B − A), A the
// budget's anonymous memory; a brokerlab run's budget cgroup raises its
// limit with the anonymous memory charged to it, so there B is the page
// cache's alone and A is 0). The limits are
//
//	bg   = dirty_background_bytes  or  dirty_background_ratio · M
//	hard = dirty_bytes             or  dirty_ratio · M   (bg ≥ hard ⇒ bg = hard/2)
//	freerun = (bg + hard)/2,  setpoint = (freerun + hard)/2
//
// and the throttle level L is freerun, or on cgroup v1 with a budget whose
// page cache C = B − A is below it, C (the global limits never bind; the
// cgroup's reclaim meets dirty pages and waits for their writeback).
//
// Writeback starts at t_on = min(t_e, bg/W, t_x): t_e = 0 when appends
// wait for their flush (sync, group, rmqgroup) and for uncached writes,
// F for async, ∞ for none; t_x = ⌈E/P⌉·P, the first flusher wake-up after
// the first pages expire. Unthrottled dirty bytes are
//
//	u(t) = W·t                                   t < t_on
//	u(t) = u_ss                                  t ≥ t_on, D ≥ W
//	u(t) = W·t_on + (W − D)(t − t_on)            t ≥ t_on, D < W
//
// with u_ss = 0 (appends wait, uncached), min(W·F/2, bg) (async: the mean
// of the flush sawtooth) or min(bg, W·(E + P/2)) (none). Appends are
// throttled at t_th = the first t with u(t) ≥ L; from then dirty stays at
// the setpoint (L on v1) and the head advances at D. The kernel's
// background writeback starts at the first t with u(t) ≥ bg, or at t_x
// when that comes first and the store has not written back by then; never
// when the throttle level is below bg and reached first (the budget's
// reclaim holds dirty pages under the background limit).
//
// The log's head is h(t) = W·t (then D after t_th). Resident bytes are
// r(t) = min(h, max(R, d)) with R = min(M, C, W·I/2 when the store drops
// its pages every I); dirty pages cannot be dropped. Pages are evicted
// oldest first, so segment k (bytes [kS, (k+1)S)) holds the part of
// [h − r, h] and [h − d, h] that falls in it; it does not exist before h
// reaches kS or once (k+1)S ≤ h − retain. Direct writes leave nothing in
// the page cache; uncached writes leave their dirty and writeback pages
// only (r = d).
//
// # Where it is wrong
//
//   - The append rate is an input: for a closed loop it is not predicted
//     (the runner passes the measured rate; predict needs --mbps).
//   - D unknown (the default) hides the growth of dirty pages past bg, so
//     no throttling is predicted on a slow device without --device-mbps.
//   - The kernel's throttle is a smooth ramp between freerun and hard
//     (balance_dirty_pages' position ratio), its bg trigger is checked per
//     page batch, and the flusher's timer has a phase the model sets to 0:
//     expiry onsets are right to within one period P.
//   - M is approximated by MemAvailable at the start; other tenants'
//     dirty pages share the global limits and are ignored.
//   - Eviction is not strictly oldest first (active/inactive lists,
//     refaults), mmap's prealloc and warm-up touch the next segment early,
//     pool's commit interval delays pages by up to 200 ms, and uncached
//     writes keep pages for the writeback latency the model takes as 0.
//   - Readers (tailing, lagging consumers) are not modelled: reads of
//     evicted pages bring them back.
//
// Concurrency: Predict and ReadKernel are pure functions of their inputs
// (and /proc); safe for concurrent use.
package pagemodel

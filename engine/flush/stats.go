package flush

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"
)

// BatchBuckets is the number of log2 buckets in Stats.BatchSizes: bucket i
// counts flushes that served [2^(i-1)+1, 2^i] waiters (bucket 0: 0 or 1).
const BatchBuckets = 16

// LatencyBuckets is the number of log2 buckets in Stats.Latency: bucket i
// counts flushes that took (2^(i-1), 2^i] µs (bucket 0: up to 1 µs; the last
// bucket also holds every longer flush). LatencyUpper gives the bounds.
const LatencyBuckets = 24

// Stats are a policy's cumulative counters.
type Stats struct {
	Commits    uint64 // Commit calls
	Flushes    uint64 // Flush calls made
	FlushNanos uint64 // total time inside Flush
	MaxFlush   time.Duration
	Timeouts   uint64 // group: commits that got ErrTimeout
	// ShortFlushes counts commits answered with ErrShortFlush: flushes
	// meant to cover them reported less and could not be made to (not
	// counted in Timeouts, though the error matches ErrTimeout).
	ShortFlushes uint64
	// BatchSizes is the distribution of waiters served per flush (group
	// commit efficiency); Waiters is their sum over all flushes.
	BatchSizes [BatchBuckets]uint64
	Waiters    uint64
	// Latency is the distribution of Flush call durations.
	Latency [LatencyBuckets]uint64
}

// counters is embedded by every policy.
type counters struct {
	commits, flushes, flushNanos, maxFlush, timeouts atomic.Uint64
	shortFlushes                                     atomic.Uint64
	batch                                            [BatchBuckets]atomic.Uint64
	waiters                                          atomic.Uint64
	latency                                          [LatencyBuckets]atomic.Uint64
}

// answer is what a commit waiting for pos learns from a flush that aimed
// at target, returned err and left the file flushed to flushed: err, nil
// when pos is flushed, or a (counted) short-flush error when the flush fell
// short of pos. covered is false when pos lies beyond target (appended after
// the flush took its target), so the flush said nothing about it.
func (c *counters) answer(pos, target, flushed int64, err error) (res error, covered bool) {
	switch {
	case err != nil:
		return err, true
	case pos <= flushed:
		return nil, true
	case pos <= target:
		c.shortFlushes.Add(1)
		return shortFlush(pos, flushed), true
	}
	return nil, false
}

func (c *counters) recordFlush(d time.Duration, waiters int) {
	c.flushes.Add(1)
	c.flushNanos.Add(uint64(d))
	for {
		m := c.maxFlush.Load()
		if uint64(d) <= m || c.maxFlush.CompareAndSwap(m, uint64(d)) {
			break
		}
	}
	b := 0
	if waiters > 1 {
		b = bits.Len(uint(waiters - 1))
	}
	if b >= BatchBuckets {
		b = BatchBuckets - 1
	}
	c.batch[b].Add(1)
	c.waiters.Add(uint64(max(waiters, 0)))
	c.latency[latencyBucket(d)].Add(1)
}

// latencyBucket is the Stats.Latency bucket of a flush that took d.
func latencyBucket(d time.Duration) int {
	us := uint64(max(d, 0)+time.Microsecond-1) / uint64(time.Microsecond) // rounded up
	if us <= 1 {
		return 0
	}
	return min(bits.Len64(us-1), LatencyBuckets-1)
}

// LatencyUpper returns the largest flush duration counted in Stats.Latency
// bucket i (the last bucket has no bound; it returns that bucket's nominal
// 2^(LatencyBuckets-1) µs).
func LatencyUpper(i int) time.Duration { return time.Duration(1<<i) * time.Microsecond }

func (c *counters) snapshot() Stats {
	s := Stats{
		Commits:      c.commits.Load(),
		Flushes:      c.flushes.Load(),
		FlushNanos:   c.flushNanos.Load(),
		MaxFlush:     time.Duration(c.maxFlush.Load()),
		Timeouts:     c.timeouts.Load(),
		ShortFlushes: c.shortFlushes.Load(),
	}
	for i := range c.batch {
		s.BatchSizes[i] = c.batch[i].Load()
	}
	s.Waiters = c.waiters.Load()
	for i := range c.latency {
		s.Latency[i] = c.latency[i].Load()
	}
	return s
}

// BucketUpper returns the largest batch size counted in bucket i.
func BucketUpper(i int) int {
	if i == 0 {
		return 1
	}
	return 1 << i
}

// stickyErr holds the first flush error.
type stickyErr struct{ v atomic.Pointer[error] }

func (s *stickyErr) get() error {
	if p := s.v.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *stickyErr) set(err error) error {
	s.v.CompareAndSwap(nil, &err)
	return s.get()
}

// maxPos raises a to at least v.
func maxPos(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// flushState is what a flushing policy keeps: the flushed position and the
// sticky error. sync, async and rmqgroup flush through run; group runs its
// own loop around the same pieces.
type flushState struct {
	flushed atomic.Int64
	err     stickyErr
}

// run performs one flush for a policy named what, serving waiters commits:
// it returns the sticky error without flushing, else calls f.Flush, records
// the counters, advances the flushed position (or makes the error sticky)
// and reports the Event to cfg.OnFlush.
func (s *flushState) run(f Flusher, cfg *Config, c *counters, what string, waiters int) error {
	if err := s.err.get(); err != nil {
		return err
	}
	start := time.Now()
	pos, err := f.Flush()
	d := time.Since(start)
	c.recordFlush(d, waiters)
	if err != nil {
		err = s.err.set(fmt.Errorf("flush: %s flush: %w", what, err))
	} else {
		maxPos(&s.flushed, pos)
	}
	if cfg.OnFlush != nil {
		cfg.OnFlush(Event{Start: start, Duration: d, Waiters: waiters, FlushedPos: s.flushed.Load(), Err: err})
	}
	return err
}

// runCovering flushes until the flushed position reaches target (the
// Flusher's WrittenPos read before the call): one run, then — after a short
// flush — another while the last one advanced the position, for up to
// cfg.SyncFlushTimeout after the first retry, as RocketMQ's
// GroupCommitService repeats flush(0) for a request. A flush that advances
// nothing ends the retries: the Flusher cannot make progress now. The first
// run counts the waiters, retries count none. It returns the sticky error or
// nil; the caller compares s.flushed with the positions it serves.
func (s *flushState) runCovering(f Flusher, cfg *Config, c *counters, what string, waiters int, target int64) error {
	var began int64 // clock read only once a retry is due
	for {
		before := s.flushed.Load()
		err := s.run(f, cfg, c, what, waiters)
		after := s.flushed.Load()
		if err != nil || after >= target || after == before {
			return err
		}
		if began == 0 {
			began = nanotime()
		} else if time.Duration(nanotime()-began) >= cfg.SyncFlushTimeout {
			return nil
		}
		waiters = 0
	}
}

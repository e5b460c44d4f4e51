package flush

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestLatencyBucket(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int
	}{
		{0, 0}, {time.Nanosecond, 0}, {time.Microsecond, 0},
		{time.Microsecond + 1, 1}, {2 * time.Microsecond, 1},
		{3 * time.Microsecond, 2}, {4 * time.Microsecond, 2}, {5 * time.Microsecond, 3},
		{time.Millisecond, 10}, // 1000 µs ≤ 1024
		{1025 * time.Microsecond, 11},
		{time.Hour, LatencyBuckets - 1},
		{-time.Second, 0},
	} {
		if got := latencyBucket(c.d); got != c.want {
			t.Errorf("latencyBucket(%v) = %d, want %d", c.d, got, c.want)
		}
		b := latencyBucket(c.d)
		if b < LatencyBuckets-1 && c.d > LatencyUpper(b) {
			t.Errorf("%v is above its bucket %d's bound %v", c.d, b, LatencyUpper(b))
		}
		if b > 0 && c.d <= LatencyUpper(b-1) {
			t.Errorf("%v belongs below bucket %d (bound of %d is %v)", c.d, b, b-1, LatencyUpper(b-1))
		}
	}
}

// Every flush is counted in exactly one latency bucket, its delay's or a
// later one, and Waiters sums the waiters the flushes served.
func TestFlushLatencyAndWaiters(t *testing.T) {
	for _, k := range Kinds() {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{delay: 2 * time.Millisecond}
			cfg := DefaultConfig(k)
			cfg.Interval = 5 * time.Millisecond
			cfg.TickInterval = time.Millisecond
			p := newPolicy(t, f, cfg)
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for range 20 {
						if err := p.Commit(context.Background(), f.append(10)); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			st := p.Stats()
			var inBuckets, batches uint64
			for i, n := range st.Latency {
				inBuckets += n
				if n > 0 && i < LatencyBuckets-1 && LatencyUpper(i) < f.delay {
					t.Errorf("%d flushes in bucket %d (≤ %v) though every flush sleeps %v", n, i, LatencyUpper(i), f.delay)
				}
			}
			for _, n := range st.BatchSizes {
				batches += n
			}
			if st.Flushes == 0 || inBuckets != st.Flushes || batches != st.Flushes {
				t.Fatalf("flushes %d, in latency buckets %d, in batch buckets %d", st.Flushes, inBuckets, batches)
			}
			// a waiting commit is served by at most one flush (none when a
			// tick flushed its position before it arrived)
			if waits(k) && (st.Waiters == 0 || st.Waiters > st.Commits) {
				t.Fatalf("%s: waiters served %d, commits %d", k, st.Waiters, st.Commits)
			}
			if !waits(k) && st.Waiters != 0 {
				t.Fatalf("async served %d waiters", st.Waiters)
			}
		})
	}
}

package flush

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// One committer with no flush running flushes inline: one flush per
// commit, each serving exactly that commit.
func TestGroupSingleCommitterLeads(t *testing.T) {
	f := &fakeLog{}
	cfg := DefaultConfig(Group)
	cfg.TickInterval = time.Hour
	var waiters []int
	cfg.OnFlush = func(e Event) { waiters = append(waiters, e.Waiters) }
	p := newPolicy(t, f, cfg)
	for i := 0; i < 100; i++ {
		pos := f.append(10)
		if err := p.Commit(context.Background(), pos); err != nil {
			t.Fatal(err)
		}
		if f.flushed.Load() < pos {
			t.Fatalf("commit %d returned before its flush", i)
		}
	}
	if f.calls.Load() != 100 || len(waiters) != 100 {
		t.Fatalf("%d flushes, %d events for 100 commits", f.calls.Load(), len(waiters))
	}
	for _, w := range waiters {
		if w != 1 {
			t.Fatalf("flush events' Waiters %v, want all 1", waiters)
		}
	}
	// A position already flushed costs nothing.
	if err := p.Commit(context.Background(), f.wrote.Load()); err != nil || f.calls.Load() != 100 {
		t.Fatalf("commit of a flushed position: %v, %d flushes", err, f.calls.Load())
	}
}

// Every waiter that arrives while a flush runs is served by ONE next flush,
// run by one of them.
func TestGroupBatchesWaitersArrivingDuringFlush(t *testing.T) {
	f := &fakeLog{gate: make(chan struct{})}
	cfg := DefaultConfig(Group)
	cfg.TickInterval = time.Hour
	var mu sync.Mutex
	var events []Event
	cfg.OnFlush = func(e Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
	p := newPolicy(t, f, cfg)
	g := p.(*groupPolicy)
	first := f.append(10)
	done := make(chan error, 100)
	go func() { done <- p.Commit(context.Background(), first) }()
	eventually(t, "the leader's flush", func() bool { return f.calls.Load() == 1 })
	const n = 50
	for i := 0; i < n; i++ {
		pos := f.append(10)
		go func() { done <- p.Commit(context.Background(), pos) }()
	}
	eventually(t, "the waiters to queue", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.queue) == n
	})
	f.gate <- struct{}{}
	f.gate <- struct{}{}
	for i := 0; i < n+1; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	close(f.gate) // let Close's final flush through
	if c := f.calls.Load(); c != 2 {
		t.Fatalf("flushes = %d, want 2 (one for the leader, one for the %d that arrived during it)", c, n)
	}
	st := p.Stats()
	if st.BatchSizes[0] != 1 || st.BatchSizes[6] != 1 { // 1 waiter; 50 waiters in (32,64]
		t.Fatalf("batch histogram %v", st.BatchSizes)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2 || events[0].Waiters != 1 || events[1].Waiters != n {
		t.Fatalf("events %+v", events)
	}
}

// A waiter whose position the running flush did not cover is served by the
// next flush, which one of the waiters runs (there is no flusher goroutine).
func TestGroupHandsOffToAWaiter(t *testing.T) {
	f := &fakeLog{gate: make(chan struct{})}
	cfg := DefaultConfig(Group)
	cfg.TickInterval = time.Hour
	p := newPolicy(t, f, cfg)
	var acked atomic.Int64
	for i := 0; i < 3; i++ {
		pos := f.append(10)
		go func() {
			if p.Commit(context.Background(), pos) == nil {
				acked.Add(1)
			}
		}()
		if i == 0 {
			eventually(t, "the leader's flush", func() bool { return f.calls.Load() == 1 })
		}
	}
	eventually(t, "the waiters to queue", func() bool { return queuedWaiters(p) == 2 })
	f.gate <- struct{}{} // the leader's flush covered only the first append
	eventually(t, "the hand-off flush", func() bool { return f.calls.Load() == 2 })
	if acked.Load() != 1 {
		t.Fatalf("%d acknowledged after the first flush, want 1", acked.Load())
	}
	f.gate <- struct{}{}
	eventually(t, "all acknowledged", func() bool { return acked.Load() == 3 })
	close(f.gate)
}

// Steady state allocates nothing per commit: neither the inline leader nor
// queued waiters served by a hand-off.
func TestGroupCommitDoesNotAllocate(t *testing.T) {
	t.Run("leader", func(t *testing.T) {
		f := &fakeLog{}
		cfg := DefaultConfig(Group)
		cfg.TickInterval = time.Hour
		p := newPolicy(t, f, cfg)
		ctx := context.Background()
		if a := testing.AllocsPerRun(1000, func() {
			if err := p.Commit(ctx, f.append(10)); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Fatalf("%v allocations per commit", a)
		}
	})
	for _, coalesce := range []time.Duration{0, 20 * time.Millisecond} {
		t.Run(fmt.Sprintf("waiters/coalesce=%v", coalesce), func(t *testing.T) { groupWaitersAllocs(t, coalesce) })
	}
}

func groupWaitersAllocs(t *testing.T, coalesce time.Duration) {
	if raceEnabled {
		t.Skip("the race detector allocates on channel and mutex operations; run without -race")
	}
	f := &fakeLog{delay: 50 * time.Microsecond}
	cfg := DefaultConfig(Group)
	cfg.TickInterval = time.Hour
	cfg.CoalesceWait = coalesce
	p := newPolicy(t, f, cfg)
	const workers = 8
	start := make([]chan struct{}, workers)
	fin := make(chan error, workers)
	for i := range start {
		start[i] = make(chan struct{})
		go func(c chan struct{}) {
			for range c {
				var err error
				for j := 0; j < 4; j++ {
					if err = p.Commit(context.Background(), f.append(10)); err != nil {
						break
					}
				}
				fin <- err
			}
		}(start[i])
	}
	defer func() {
		for _, c := range start {
			close(c)
		}
	}()
	round := func() {
		for _, c := range start {
			c <- struct{}{}
		}
		for range start {
			if err := <-fin; err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < 20; i++ { // warm the pools and the queue
		round()
	}
	before := p.Stats()
	// 32 commits per run: fewer than one allocation per run means
	// none per commit in steady state.
	if a := testing.AllocsPerRun(50, round); a != 0 {
		t.Fatalf("%v allocations per %d concurrent commits", a, workers*4)
	}
	after := p.Stats()
	var batched uint64
	for i := 1; i < BatchBuckets; i++ {
		batched += after.BatchSizes[i] - before.BatchSizes[i]
	}
	if batched == 0 {
		t.Fatal("no flush served queued waiters: the test did not exercise the waiting path")
	}
}

// With CoalesceWait, closed-loop producers are all carried by each flush
// (the leader waits for the round to be back), and a lone producer never
// waits for the window.
func TestGroupFillCarriesEveryProducer(t *testing.T) {
	f := &fakeLog{delay: time.Millisecond}
	cfg := DefaultConfig(Group)
	cfg.CoalesceWait = time.Second // generous: completion, not the timer, must end each wait
	cfg.TickInterval = time.Hour
	p := newPolicy(t, f, cfg)
	g := p.(*groupPolicy)
	const producers, each = 16, 30
	var wg sync.WaitGroup
	for i := 0; i < producers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				if err := p.Commit(context.Background(), f.append(100)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("producers stalled")
	}
	st := p.Stats()
	// Without filling, rounds alternate between two halves: ~2*each
	// flushes. Filled rounds carry all 16 after the first few.
	if st.Flushes > each+each/2 {
		t.Fatalf("%d flushes for %d producers x %d commits; filled rounds should carry every producer (histogram %v)",
			st.Flushes, producers, each, st.BatchSizes)
	}
	t.Logf("%d flushes, %d fills ran out the window, batches %v", st.Flushes, g.fillWaits.Load(), st.BatchSizes)
	// Only rounds as producers finish (out of step by a round or two) may
	// run out the window.
	if w := g.fillWaits.Load(); w > 4 {
		t.Fatalf("%d fills ran out of CoalesceWait", w)
	}

	// A lone producer: expect drops to 1 after at most one timed-out fill.
	cfg.CoalesceWait = 20 * time.Millisecond
	p2 := newPolicy(t, &fakeLog{}, cfg)
	f2 := p2.(*groupPolicy).f.(*fakeLog)
	for i := 0; i < 200; i++ {
		if err := p2.Commit(context.Background(), f2.append(10)); err != nil {
			t.Fatal(err)
		}
	}
	if w := p2.(*groupPolicy).fillWaits.Load(); w != 0 {
		t.Fatalf("a lone producer waited out the window %d times", w)
	}
}

// A producer that stops costs one fill wait, after which rounds expect
// fewer commits.
func TestGroupFillAdaptsWhenProducersLeave(t *testing.T) {
	f := &fakeLog{delay: time.Millisecond}
	cfg := DefaultConfig(Group)
	cfg.CoalesceWait = 10 * time.Millisecond
	cfg.TickInterval = time.Hour
	p := newPolicy(t, f, cfg)
	g := p.(*groupPolicy)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				if err := p.Commit(context.Background(), f.append(100)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	before := g.fillWaits.Load()
	for j := 0; j < 50; j++ {
		if err := p.Commit(context.Background(), f.append(100)); err != nil {
			t.Fatal(err)
		}
	}
	if w := g.fillWaits.Load() - before; w > 1 {
		t.Fatalf("one producer left of four waited out the window %d times, want at most 1", w)
	}
}

// Close releases a leader waiting for its batch to fill; its commit is
// answered by the flush it then runs.
func TestGroupCloseReleasesFillingLeader(t *testing.T) {
	f := &fakeLog{delay: time.Millisecond}
	cfg := DefaultConfig(Group)
	cfg.CoalesceWait = time.Hour
	cfg.TickInterval = time.Hour
	p, err := New(f, 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := p.(*groupPolicy)
	g.mu.Lock()
	g.expect = 8 // as if the last round had 8 commits in flight
	g.mu.Unlock()
	res := make(chan error, 1)
	go func() { res <- p.Commit(context.Background(), f.append(10)) }()
	eventually(t, "the leader to wait for its batch", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.filling
	})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-res:
		if err != nil {
			t.Fatalf("filling leader answered %v after Close", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the filling leader was not released by Close")
	}
	if f.flushed.Load() != f.wrote.Load() {
		t.Fatalf("flushed %d of %d", f.flushed.Load(), f.wrote.Load())
	}
}

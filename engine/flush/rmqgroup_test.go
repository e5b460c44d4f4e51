package flush

import (
	"context"
	"sync"
	"testing"
	"time"
)

// RMQGroup: every waiter that arrives while a flush is running is served by
// ONE next flush of the flusher goroutine.
func TestRMQGroupBatchesWaitersArrivingDuringFlush(t *testing.T) {
	f := &fakeLog{gate: make(chan struct{})}
	cfg := DefaultConfig(RMQGroup)
	cfg.TickInterval = time.Hour
	p := newPolicy(t, f, cfg)
	g := p.(*rmqGroupPolicy)
	first := f.append(10)
	done := make(chan error, 100)
	go func() { done <- p.Commit(context.Background(), first) }()
	eventually(t, "the flusher's first flush", func() bool { return f.calls.Load() == 1 })
	const n = 50
	for i := 0; i < n; i++ {
		pos := f.append(10)
		go func() { done <- p.Commit(context.Background(), pos) }()
	}
	eventually(t, "the waiters to queue", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.mu.write) == n
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
		t.Fatalf("flushes = %d, want 2 (one for the first waiter, one for the %d that arrived during it)", c, n)
	}
	st := p.Stats()
	if st.BatchSizes[0] != 1 || st.BatchSizes[6] != 1 { // 1 waiter; 50 waiters in (32,64]
		t.Fatalf("batch histogram %v", st.BatchSizes)
	}
}

// With a coalescing window, waiters that arrive within it share one flush
// even when no flush was running when they came.
func TestRMQGroupCoalesceWait(t *testing.T) {
	f := &fakeLog{}
	cfg := DefaultConfig(RMQGroup)
	// 2 s: twenty arrivals 1 ms apart fit in it also when a loaded
	// machine stretches each sleep many times over.
	cfg.CoalesceWait = 2 * time.Second
	cfg.TickInterval = time.Hour
	p := newPolicy(t, f, cfg)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		pos := f.append(10)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Commit(context.Background(), pos); err != nil {
				t.Error(err)
			}
		}()
		time.Sleep(time.Millisecond) // arrive one by one, well inside the window
	}
	wg.Wait()
	if c := f.calls.Load(); c != 1 {
		t.Fatalf("%d flushes for 20 waiters arriving within the coalescing window, want 1", c)
	}
}

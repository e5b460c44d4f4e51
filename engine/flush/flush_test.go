package flush

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLog is a Flusher over an in-memory write position.
type fakeLog struct {
	wrote   atomic.Int64
	flushed atomic.Int64
	calls   atomic.Int64
	delay   time.Duration
	fail    atomic.Pointer[error]
	gate    chan struct{} // if non-nil, Flush blocks until it can receive
}

func (f *fakeLog) append(n int64) int64 { return f.wrote.Add(n) }

func (f *fakeLog) Flush() (int64, error) {
	f.calls.Add(1)
	if f.gate != nil {
		<-f.gate
	}
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	if p := f.fail.Load(); p != nil {
		return f.flushed.Load(), *p
	}
	w := f.wrote.Load()
	f.flushed.Store(w)
	return w, nil
}

func newPolicy(t *testing.T, f Flusher, cfg Config) Policy {
	t.Helper()
	p, err := New(f, 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestParseKind(t *testing.T) {
	for _, k := range Kinds() {
		got, err := ParseKind(string(k))
		if err != nil || got != k {
			t.Fatalf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := ParseKind("fsync"); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("ParseKind(fsync) err = %v", err)
	}
}

// Every policy: once Commit returns for a durable policy, the flushed
// position covers pos; after Close everything is flushed.
func TestCommitCoversPosition(t *testing.T) {
	for _, k := range Kinds() {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{}
			cfg := DefaultConfig(k)
			cfg.Interval = 5 * time.Millisecond
			p := newPolicy(t, f, cfg)
			var wg sync.WaitGroup
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 200; i++ {
						pos := f.append(100)
						if err := p.Commit(context.Background(), pos); err != nil {
							t.Error(err)
							return
						}
						if k != Async && p.FlushedPos() < pos {
							t.Errorf("%s: acknowledged %d but flushed is %d", k, pos, p.FlushedPos())
							return
						}
					}
				}()
			}
			wg.Wait()
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if got, want := f.flushed.Load(), f.wrote.Load(); got != want {
				t.Fatalf("after Close flushed %d, wrote %d", got, want)
			}
			st := p.Stats()
			if st.Commits != 1600 {
				t.Fatalf("Commits = %d, want 1600", st.Commits)
			}
			if k == Sync && st.Flushes < 1600 {
				t.Fatalf("sync made %d flushes for 1600 commits; it must flush per append", st.Flushes)
			}
		})
	}
}

// Group commit: every waiter that arrives while a flush is running is served
// by ONE next flush.
func TestGroupBatchesWaitersArrivingDuringFlush(t *testing.T) {
	f := &fakeLog{gate: make(chan struct{})}
	p := newPolicy(t, f, DefaultConfig(Group))
	first := f.append(10)
	done := make(chan error, 100)
	go func() { done <- p.Commit(context.Background(), first) }()
	// Wait until the flusher is inside Flush (blocked on the gate).
	for f.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	const n = 50
	for i := 0; i < n; i++ {
		pos := f.append(10)
		go func() { done <- p.Commit(context.Background(), pos) }()
	}
	// Let the waiters register, then release the first flush and the next.
	for {
		p.(*groupPolicy).mu.Lock()
		queued := len(p.(*groupPolicy).mu.write)
		p.(*groupPolicy).mu.Unlock()
		if queued == n {
			break
		}
		time.Sleep(time.Millisecond)
	}
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

func TestGroupTimeout(t *testing.T) {
	f := &fakeLog{gate: make(chan struct{})}
	cfg := DefaultConfig(Group)
	cfg.SyncFlushTimeout = 20 * time.Millisecond
	p := newPolicy(t, f, cfg)
	err := p.Commit(context.Background(), f.append(10))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if p.Stats().Timeouts != 1 {
		t.Fatalf("Timeouts = %d", p.Stats().Timeouts)
	}
	close(f.gate)
}

// Flush errors are sticky in every policy.
func TestStickyFlushError(t *testing.T) {
	boom := errors.New("EIO")
	for _, k := range Kinds() {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{}
			f.fail.Store(&boom)
			cfg := DefaultConfig(k)
			cfg.Interval = time.Millisecond
			cfg.LeastPages = 0
			p := newPolicy(t, f, cfg)
			pos := f.append(PageSize * 8)
			err := p.Commit(context.Background(), pos)
			if k == Async {
				// Async acknowledges at once; the background flush fails.
				deadline := time.Now().Add(5 * time.Second)
				for err == nil && time.Now().Before(deadline) {
					time.Sleep(2 * time.Millisecond)
					err = p.Commit(context.Background(), f.append(1))
				}
			}
			if !errors.Is(err, boom) {
				t.Fatalf("err = %v, want %v", err, boom)
			}
			f.fail.Store(nil) // the device recovers, the policy does not
			for i := 0; i < 3; i++ {
				if err := p.Commit(context.Background(), f.append(1)); !errors.Is(err, boom) {
					t.Fatalf("commit after failure: %v, want sticky %v", err, boom)
				}
			}
			if err := p.Close(); !errors.Is(err, boom) {
				t.Fatalf("Close = %v, want sticky %v", err, boom)
			}
		})
	}
}

// Async follows FlushRealTimeService: below LeastPages dirty pages nothing is
// flushed until the thorough interval forces it.
func TestAsyncLeastPagesAndThorough(t *testing.T) {
	f := &fakeLog{}
	cfg := DefaultConfig(Async)
	cfg.Interval = 2 * time.Millisecond
	cfg.ThoroughInterval = time.Hour
	var events atomic.Int64
	cfg.OnFlush = func(Event) { events.Add(1) }
	p := newPolicy(t, f, cfg)
	if err := p.Commit(context.Background(), f.append(PageSize)); err != nil { // 1 page < 4
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	if f.calls.Load() != 0 {
		t.Fatalf("flushed with 1 dirty page; LeastPages is 4")
	}
	p.Commit(context.Background(), f.append(4*PageSize))
	deadline := time.Now().Add(5 * time.Second)
	for f.flushed.Load() != f.wrote.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if f.flushed.Load() != f.wrote.Load() {
		t.Fatal("5 dirty pages were never flushed")
	}
	if events.Load() == 0 {
		t.Fatal("OnFlush not called")
	}
	p.Close()

	// Thorough: one dirty byte is flushed once ThoroughInterval passes.
	f2 := &fakeLog{}
	cfg.ThoroughInterval = 10 * time.Millisecond
	p2 := newPolicy(t, f2, cfg)
	p2.Commit(context.Background(), f2.append(1))
	deadline = time.Now().Add(5 * time.Second)
	for f2.flushed.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if f2.flushed.Load() != 1 {
		t.Fatal("thorough flush did not cover 1 dirty byte")
	}
}

func TestCommitAfterClose(t *testing.T) {
	for _, k := range Kinds() {
		f := &fakeLog{}
		p, _ := New(f, 0, DefaultConfig(k))
		p.Close()
		if err := p.Commit(context.Background(), f.append(1)); !errors.Is(err, ErrClosed) {
			t.Fatalf("%s: Commit after Close = %v", k, err)
		}
	}
}

// With a coalescing window, waiters that arrive within it share one flush
// even when no flush was running when they came.
func TestGroupCoalesceWait(t *testing.T) {
	f := &fakeLog{}
	cfg := DefaultConfig(Group)
	cfg.CoalesceWait = 200 * time.Millisecond
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

package flush

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLog is a Flusher over an in-memory write position. It records
// whether Flush was ever entered concurrently.
type fakeLog struct {
	wrote   atomic.Int64
	flushed atomic.Int64
	calls   atomic.Int64
	delay   time.Duration
	fail    atomic.Pointer[error]
	gate    chan struct{} // if non-nil, Flush blocks until it can receive
	// Short flushes: a Flush never reports beyond ceiling (if > 0), and
	// covers at most up to the next multiple of step (if > 0), as
	// RocketMQ's flush() covers one mapped file per call.
	ceiling atomic.Int64
	step    int64

	inflight   atomic.Int32
	concurrent atomic.Bool
}

func (f *fakeLog) append(n int64) int64 { return f.wrote.Add(n) }

func (f *fakeLog) WrittenPos() int64 { return f.wrote.Load() }

func (f *fakeLog) Flush() (int64, error) {
	if f.inflight.Add(1) > 1 {
		f.concurrent.Store(true)
	}
	defer f.inflight.Add(-1)
	// A flush covers what was appended when it began: read before calls
	// moves, so appends made after a test saw the call are not covered.
	w := f.wrote.Load()
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
	if c := f.ceiling.Load(); c > 0 {
		w = min(w, c)
	}
	if f.step > 0 {
		w = min(w, (f.flushed.Load()/f.step+1)*f.step)
	}
	if w > f.flushed.Load() {
		f.flushed.Store(w)
	}
	return f.flushed.Load(), nil
}

func newPolicy(t testing.TB, f Flusher, cfg Config) Policy {
	t.Helper()
	p, err := New(f, 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// waits reports whether Commit under k blocks until the position is flushed.
func waits(k Kind) bool { return k != Async }

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestKindsAndParseKind(t *testing.T) {
	want := []Kind{Sync, Async, Group, RMQGroup}
	got := Kinds()
	if len(got) != len(want) {
		t.Fatalf("Kinds() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Kinds() = %v, want %v", got, want)
		}
	}
	if all := AllKinds(); len(all) != len(want)+1 || all[len(want)] != DSync {
		t.Fatalf("AllKinds() = %v, want Kinds() and dsync", all)
	}
	for _, k := range AllKinds() {
		got, err := ParseKind(string(k))
		if err != nil || got != k {
			t.Fatalf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	_, err := ParseKind("fsync")
	if !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("ParseKind(fsync) err = %v", err)
	}
	if !strings.Contains(err.Error(), "sync, async, group, rmqgroup, dsync") {
		t.Fatalf("ParseKind error %q does not list the policies", err)
	}
	if _, err := New(&fakeLog{}, 0, Config{Kind: "fsync"}); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("New(fsync) err = %v", err)
	}
}

// Every policy: once Commit returns for a durable policy, the flushed
// position covers pos; after Close everything is flushed; the Flusher is
// never entered concurrently.
func TestCommitCoversPosition(t *testing.T) {
	for _, k := range AllKinds() {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{}
			cfg := DefaultConfig(k)
			cfg.Interval = 5 * time.Millisecond
			cfg.TickInterval = time.Millisecond
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
						if waits(k) && (p.FlushedPos() < pos || f.flushed.Load() < pos) {
							t.Errorf("%s: acknowledged %d but flushed is %d (fake %d)", k, pos, p.FlushedPos(), f.flushed.Load())
							return
						}
						if i%10 == 0 {
							f.append(7) // WAIT=false: nobody commits it
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
			if p.FlushedPos() != f.wrote.Load() {
				t.Fatalf("after Close FlushedPos %d, wrote %d", p.FlushedPos(), f.wrote.Load())
			}
			if f.concurrent.Load() {
				t.Fatal("Flush was called concurrently")
			}
			st := p.Stats()
			if st.Commits != 1600 {
				t.Fatalf("Commits = %d, want 1600", st.Commits)
			}
			if st.Flushes != uint64(f.calls.Load()) {
				t.Fatalf("Stats.Flushes = %d, Flush calls = %d", st.Flushes, f.calls.Load())
			}
			if k == Sync && st.Flushes < 1600 {
				t.Fatalf("sync made %d flushes for 1600 commits; it must flush per append", st.Flushes)
			}
		})
	}
}

// WAIT=false: bytes appended without a Commit become durable through the
// policy's own background work — the tick under sync/group/rmqgroup,
// FlushRealTimeService's loop under async — and not otherwise.
func TestUnwaitedAppendsAreFlushed(t *testing.T) {
	for _, k := range AllKinds() {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{}
			cfg := DefaultConfig(k)
			cfg.Interval = 2 * time.Millisecond
			cfg.TickInterval = 2 * time.Millisecond
			var mu sync.Mutex
			var events []Event
			cfg.OnFlush = func(e Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
			p := newPolicy(t, f, cfg)
			// Async flushes 4 dirty pages at once; the waiting policies
			// flush any byte.
			n := int64(1)
			if k == Async {
				n = 5 * PageSize
			}
			end := f.append(n)
			eventually(t, "the un-waited append to be flushed", func() bool {
				mu.Lock()
				defer mu.Unlock()
				// OnFlush runs after the position is published.
				return f.flushed.Load() == end && p.FlushedPos() == end && len(events) > 0
			})
			mu.Lock()
			defer mu.Unlock()
			if len(events) == 0 || events[0].Waiters != 0 || events[0].FlushedPos != end {
				t.Fatalf("events %+v, want a flush to %d serving 0 commits", events, end)
			}
			if st := p.Stats(); st.Commits != 0 || st.Flushes == 0 || st.BatchSizes[0] == 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// The same append stays unflushed while the background work is not due:
// what flushes it above is the tick (or async's loop), nothing else.
func TestUnwaitedAppendsWaitForTheTick(t *testing.T) {
	for _, k := range AllKinds() {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{}
			cfg := DefaultConfig(k)
			cfg.Interval = time.Hour
			cfg.TickInterval = time.Hour
			p := newPolicy(t, f, cfg)
			f.append(5 * PageSize)
			time.Sleep(30 * time.Millisecond)
			if f.calls.Load() != 0 {
				t.Fatalf("%d flushes before the tick was due", f.calls.Load())
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if f.flushed.Load() != 5*PageSize {
				t.Fatalf("Close flushed to %d, want %d", f.flushed.Load(), 5*PageSize)
			}
		})
	}
}

// Async reads the Flusher's written position: with no Commit at all it
// honours LeastPages and ThoroughInterval over appended bytes.
func TestAsyncLeastPagesAndThorough(t *testing.T) {
	for _, viaCommit := range []bool{true, false} {
		name := "written"
		if viaCommit {
			name = "committed"
		}
		t.Run(name, func(t *testing.T) {
			f := &fakeLog{}
			cfg := DefaultConfig(Async)
			cfg.Interval = 2 * time.Millisecond
			cfg.ThoroughInterval = time.Hour
			var events atomic.Int64
			cfg.OnFlush = func(Event) { events.Add(1) }
			p := newPolicy(t, f, cfg)
			add := func(n int64) {
				pos := f.append(n)
				if viaCommit {
					if err := p.Commit(context.Background(), pos); err != nil {
						t.Fatal(err)
					}
				}
			}
			add(PageSize) // 1 page < 4
			time.Sleep(30 * time.Millisecond)
			if f.calls.Load() != 0 {
				t.Fatalf("flushed with 1 dirty page; LeastPages is 4")
			}
			add(4 * PageSize)
			eventually(t, "5 dirty pages to be flushed", func() bool { return f.flushed.Load() == f.wrote.Load() })
			// OnFlush is told after the flush returned: the log may show the
			// flush a moment before the event arrives.
			eventually(t, "OnFlush to be called", func() bool { return events.Load() > 0 })
			p.Close()

			// Thorough: one dirty byte is flushed once ThoroughInterval passes.
			f2 := &fakeLog{}
			cfg.ThoroughInterval = 10 * time.Millisecond
			p2 := newPolicy(t, f2, cfg)
			pos := f2.append(1)
			if viaCommit {
				p2.Commit(context.Background(), pos)
			}
			eventually(t, "the thorough flush of 1 dirty byte", func() bool { return f2.flushed.Load() == 1 })
		})
	}
}

// Flush errors are sticky in every policy, for waiting commits too.
func TestStickyFlushError(t *testing.T) {
	boom := errors.New("EIO")
	for _, k := range AllKinds() {
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
			var wg sync.WaitGroup
			for i := 0; i < 8; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := p.Commit(context.Background(), f.append(1)); !errors.Is(err, boom) {
						t.Errorf("commit after failure: %v, want sticky %v", err, boom)
					}
				}()
			}
			wg.Wait()
			if err := p.Close(); !errors.Is(err, boom) {
				t.Fatalf("Close = %v, want sticky %v", err, boom)
			}
		})
	}
}

// A flush error answers every commit waiting on that flush with it.
func TestFlushErrorAnswersAllWaiters(t *testing.T) {
	boom := errors.New("EIO")
	for _, k := range []Kind{Group, RMQGroup, DSync} {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{delay: 5 * time.Millisecond}
			f.fail.Store(&boom)
			p := newPolicy(t, f, DefaultConfig(k))
			var wg sync.WaitGroup
			for i := 0; i < 32; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := p.Commit(context.Background(), f.append(10)); !errors.Is(err, boom) {
						t.Errorf("waiter got %v, want %v", err, boom)
					}
				}()
			}
			wg.Wait()
			if st := p.Stats(); st.Timeouts != 0 {
				t.Fatalf("%d timeouts", st.Timeouts)
			}
		})
	}
}

func TestCommitAfterClose(t *testing.T) {
	for _, k := range AllKinds() {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{}
			p, err := New(f, 0, DefaultConfig(k))
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if err := p.Commit(context.Background(), f.append(1)); !errors.Is(err, ErrClosed) {
				t.Fatalf("Commit after Close = %v", err)
			}
			if err := p.Commit(context.Background(), 0); !errors.Is(err, ErrClosed) {
				t.Fatalf("Commit of a flushed position after Close = %v", err)
			}
		})
	}
}

// Close (group, rmqgroup) answers every waiter — nil if the final flush
// covered it, ErrClosed otherwise — however many there are and however slow
// the flush: nobody is left to time out.
func TestCloseAnswersEveryWaiter(t *testing.T) {
	for _, k := range []Kind{Group, RMQGroup, DSync} {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{delay: 20 * time.Millisecond}
			cfg := DefaultConfig(k)
			cfg.SyncFlushTimeout = time.Hour
			p, err := New(f, 0, cfg)
			if err != nil {
				t.Fatal(err)
			}
			const n = 200
			var started, wg sync.WaitGroup
			results := make(chan error, n)
			for i := 0; i < n; i++ {
				started.Add(1)
				wg.Add(1)
				go func() {
					defer wg.Done()
					pos := f.append(100)
					started.Done()
					results <- p.Commit(context.Background(), pos)
				}()
			}
			started.Wait()
			time.Sleep(5 * time.Millisecond) // most are queued behind a 20 ms flush
			closed := make(chan error, 1)
			go func() { closed <- p.Close() }()
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("%d of %d commits still waiting 30 s after Close (timeout is 1 h)", n-len(results), n)
			}
			if err := <-closed; err != nil {
				t.Fatal(err)
			}
			close(results)
			for err := range results {
				if err != nil && !errors.Is(err, ErrClosed) {
					t.Fatalf("waiter answered %v, want nil or ErrClosed", err)
				}
			}
			if p.FlushedPos() != f.wrote.Load() {
				t.Fatalf("after Close FlushedPos %d, wrote %d", p.FlushedPos(), f.wrote.Load())
			}
			if st := p.Stats(); st.Timeouts != 0 {
				t.Fatalf("%d timeouts", st.Timeouts)
			}
		})
	}
}

// Close answers waiters with the sticky error when the final flush fails.
func TestCloseAnswersStickyError(t *testing.T) {
	boom := errors.New("EIO")
	for _, k := range []Kind{Group, RMQGroup, DSync} {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{gate: make(chan struct{})}
			cfg := DefaultConfig(k)
			cfg.SyncFlushTimeout = time.Hour
			p, _ := New(f, 0, cfg)
			const n = 20
			results := make(chan error, n)
			for i := 0; i < n; i++ {
				pos := f.append(10)
				go func() { results <- p.Commit(context.Background(), pos) }()
				if i == 0 {
					eventually(t, "a flush to start", func() bool { return f.calls.Load() == 1 })
				}
			}
			eventually(t, "the waiters to queue", func() bool { return queuedWaiters(p) == n-1 })
			f.fail.Store(&boom)
			closed := make(chan error, 1)
			go func() { closed <- p.Close() }()
			close(f.gate)
			for i := 0; i < n; i++ {
				select {
				case err := <-results:
					if !errors.Is(err, boom) {
						t.Fatalf("waiter answered %v, want %v", err, boom)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("a waiter was left waiting after Close")
				}
			}
			if err := <-closed; !errors.Is(err, boom) {
				t.Fatalf("Close = %v, want %v", err, boom)
			}
		})
	}
}

// queuedWaiters is how many commits wait for a flush that has not started.
func queuedWaiters(p Policy) int {
	switch p := p.(type) {
	case *groupPolicy:
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.queue)
	case *rmqGroupPolicy:
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.mu.write)
	}
	panic("queuedWaiters: not a group policy")
}

// A waiter not covered within SyncFlushTimeout gets ErrTimeout, never
// earlier; its bytes are flushed later.
func TestTimeout(t *testing.T) {
	for _, k := range []Kind{Group, RMQGroup, DSync} {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{gate: make(chan struct{})}
			cfg := DefaultConfig(k)
			cfg.SyncFlushTimeout = 20 * time.Millisecond
			p := newPolicy(t, f, cfg)
			first := make(chan error, 1)
			go func() { first <- p.Commit(context.Background(), f.append(10)) }()
			eventually(t, "the first flush to start", func() bool { return f.calls.Load() == 1 })
			begin := time.Now()
			err := p.Commit(context.Background(), f.append(10))
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("err = %v, want ErrTimeout", err)
			}
			if el := time.Since(begin); el < cfg.SyncFlushTimeout {
				t.Fatalf("timed out after %v, before SyncFlushTimeout %v", el, cfg.SyncFlushTimeout)
			}
			time.Sleep(cfg.SyncFlushTimeout)
			close(f.gate)
			// The first commit's flush took longer than the timeout too.
			if err := <-first; !errors.Is(err, ErrTimeout) {
				t.Fatalf("commit behind a stalled flush: %v, want ErrTimeout", err)
			}
			if p.Stats().Timeouts != 2 {
				t.Fatalf("Timeouts = %d, want 2", p.Stats().Timeouts)
			}
			// The timed-out bytes become durable; the policy keeps working.
			if err := p.Commit(context.Background(), f.append(10)); err != nil {
				t.Fatal(err)
			}
			if f.flushed.Load() != f.wrote.Load() {
				t.Fatalf("flushed %d of %d", f.flushed.Load(), f.wrote.Load())
			}
		})
	}
}

// A queued waiter's context is honoured; the policy keeps serving others.
func TestContextCancel(t *testing.T) {
	for _, k := range []Kind{Group, RMQGroup, DSync} {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{gate: make(chan struct{})}
			p := newPolicy(t, f, DefaultConfig(k))
			first := make(chan error, 1)
			go func() { first <- p.Commit(context.Background(), f.append(10)) }()
			eventually(t, "the first flush to start", func() bool { return f.calls.Load() == 1 })
			ctx, cancel := context.WithCancel(context.Background())
			res := make(chan error, 1)
			go func() { res <- p.Commit(ctx, f.append(10)) }()
			eventually(t, "the waiter to queue", func() bool { return queuedWaiters(p) == 1 })
			cancel()
			if err := <-res; !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled commit: %v", err)
			}
			if err := p.Commit(ctx, f.append(10)); !errors.Is(err, context.Canceled) {
				t.Fatalf("commit with a cancelled context: %v", err)
			}
			close(f.gate)
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			if err := p.Commit(context.Background(), f.append(10)); err != nil {
				t.Fatal(err)
			}
			if g, ok := p.(*groupPolicy); ok {
				g.mu.Lock()
				n := len(g.queue)
				g.mu.Unlock()
				if n != 0 {
					t.Fatalf("%d waiters left queued", n)
				}
			}
		})
	}
}

// Batching: with a slow flush, many concurrent commits are served by far
// fewer flushes (sync: one flush each).
func TestBatching(t *testing.T) {
	for _, k := range AllKinds() {
		if !waits(k) {
			continue
		}
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{delay: 2 * time.Millisecond}
			cfg := DefaultConfig(k)
			cfg.TickInterval = time.Hour
			p := newPolicy(t, f, cfg)
			const producers, each = 32, 10
			var wg sync.WaitGroup
			for g := 0; g < producers; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < each; i++ {
						if err := p.Commit(context.Background(), f.append(100)); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			st := p.Stats()
			if k == Sync {
				if st.Flushes < producers*each {
					t.Fatalf("sync: %d flushes for %d commits", st.Flushes, producers*each)
				}
				return
			}
			if st.Flushes*4 > producers*each {
				t.Fatalf("%d flushes for %d commits; group commit should batch (histogram %v)", st.Flushes, producers*each, st.BatchSizes)
			}
			var served uint64
			for i := 1; i < BatchBuckets; i++ {
				served += st.BatchSizes[i]
			}
			if served == 0 {
				t.Fatalf("no flush served more than one commit: %v", st.BatchSizes)
			}
		})
	}
}

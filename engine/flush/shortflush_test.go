package flush

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitingKinds are the policies whose Commit waits for a flush.
var waitingKinds = []Kind{Sync, Group, RMQGroup}

// shortFlushSetup starts policy k over f with the first Flush held at f's
// gate: the leader's commit at lead is inside its flush, and n followers
// (10 bytes each, appended after that flush began) are committing behind
// it — queued, under group and rmqgroup; under sync waiting for the flush
// lock or about to. It returns the policy and the results, the leader's
// first.
func shortFlushSetup(t *testing.T, k Kind, f *fakeLog, lead int64, n int) (Policy, []int64, []chan error) {
	t.Helper()
	f.gate = make(chan struct{})
	cfg := DefaultConfig(k)
	cfg.TickInterval = time.Hour
	cfg.SyncFlushTimeout = time.Hour // a wrong answer must not hide behind ErrTimeout
	p := newPolicy(t, f, cfg)
	var once sync.Once
	release := func() { once.Do(func() { close(f.gate) }) }
	t.Cleanup(release) // before Close (cleanups run last first)

	pos := []int64{f.append(lead)}
	res := []chan error{make(chan error, 1)}
	go func() { res[0] <- p.Commit(context.Background(), pos[0]) }()
	eventually(t, "the leader's flush to start", func() bool { return f.calls.Load() == 1 })
	for range n {
		at := f.append(10)
		ch := make(chan error, 1)
		pos, res = append(pos, at), append(res, ch)
		go func() { ch <- p.Commit(context.Background(), at) }()
	}
	if k != Sync {
		eventually(t, "the followers to queue", func() bool { return queuedWaiters(p) == n })
	}
	release()
	return p, pos, res
}

// A flusher that reports less than was written and cannot make progress:
// every commit the flushes should have covered, the leader's and the
// followers', gets ErrShortFlush (which matches ErrTimeout, RocketMQ's
// FLUSH_DISK_TIMEOUT) naming both offsets, never nil; FlushedPos stays
// behind each of them. The error is not sticky: once the flusher covers a
// later commit, it gets nil.
func TestShortFlushIsAnError(t *testing.T) {
	for _, k := range waitingKinds {
		t.Run(string(k), func(t *testing.T) {
			const ceiling, n = 5, 8
			f := &fakeLog{}
			f.ceiling.Store(ceiling) // the device stops at byte 5
			p, pos, res := shortFlushSetup(t, k, f, 10, n)
			for i, ch := range res {
				who := "leader"
				if i > 0 {
					who = "follower " + strconv.Itoa(i)
				}
				var err error
				select {
				case err = <-ch:
				case <-time.After(30 * time.Second):
					t.Fatalf("%s (commit at %d) not answered", who, pos[i])
				}
				if err == nil {
					t.Fatalf("%s: Commit(%d) = nil with FlushedPos %d", who, pos[i], p.FlushedPos())
				}
				if !errors.Is(err, ErrShortFlush) || !errors.Is(err, ErrTimeout) {
					t.Fatalf("%s: Commit(%d) = %v, want ErrShortFlush matching ErrTimeout", who, pos[i], err)
				}
				for _, off := range []int64{pos[i], ceiling} {
					if !strings.Contains(err.Error(), strconv.FormatInt(off, 10)) {
						t.Fatalf("%s: error %q does not name offset %d", who, err, off)
					}
				}
				if fp := p.FlushedPos(); fp >= pos[i] {
					t.Fatalf("%s: error %v but FlushedPos %d covers %d", who, err, fp, pos[i])
				}
			}
			if st := p.Stats(); st.ShortFlushes != n+1 || st.Timeouts != 0 {
				t.Fatalf("ShortFlushes = %d, Timeouts = %d; want %d, 0", st.ShortFlushes, st.Timeouts, n+1)
			}
			// A short flush that advanced nothing is not retried: the
			// leader's round took two flushes (the second made no
			// progress), each later round one or two.
			if c := f.calls.Load(); c > int64(2*(n+1)) {
				t.Fatalf("%d flushes for %d commits against a stuck flusher", c, n+1)
			}

			f.ceiling.Store(0) // the flusher recovers: not sticky
			last := f.append(10)
			if err := p.Commit(context.Background(), last); err != nil {
				t.Fatalf("Commit after the flusher recovered = %v, want nil", err)
			}
			if fp := p.FlushedPos(); fp < last {
				t.Fatalf("FlushedPos %d < %d after a nil Commit", fp, last)
			}
		})
	}
}

// Close reports a final flush that stays short of the written position.
func TestShortFlushClose(t *testing.T) {
	for _, k := range waitingKinds {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{}
			f.ceiling.Store(5)
			cfg := DefaultConfig(k)
			cfg.TickInterval = time.Hour
			p, err := New(f, 0, cfg)
			if err != nil {
				t.Fatal(err)
			}
			f.append(10) // nobody commits it
			if err := p.Close(); !errors.Is(err, ErrShortFlush) {
				t.Fatalf("Close = %v, want ErrShortFlush", err)
			}
			if p.FlushedPos() != 5 {
				t.Fatalf("FlushedPos = %d, want 5", p.FlushedPos())
			}
		})
	}
}

// A flusher that covers one 64-byte "segment" per call (RocketMQ's
// flush()) reports short but makes progress: the policy flushes again
// until every commit is covered, leader and followers, all nil.
func TestShortFlushRetriedWhileItProgresses(t *testing.T) {
	for _, k := range waitingKinds {
		t.Run(string(k), func(t *testing.T) {
			const lead, n = 200, 8
			f := &fakeLog{step: 64}
			p, pos, res := shortFlushSetup(t, k, f, lead, n)
			for i, ch := range res {
				var err error
				select {
				case err = <-ch:
				case <-time.After(30 * time.Second):
					t.Fatalf("commit %d at %d not answered", i, pos[i])
				}
				if err != nil {
					t.Fatalf("commit %d at %d: %v (flushed %d)", i, pos[i], err, p.FlushedPos())
				}
				if fp := p.FlushedPos(); fp < pos[i] {
					t.Fatalf("commit %d at %d acknowledged with FlushedPos %d", i, pos[i], fp)
				}
			}
			// The leader's 200 bytes alone take 4 flushes of <= 64.
			if c := f.calls.Load(); c < (lead+63)/64 {
				t.Fatalf("%d flushes; the leader's bytes need at least %d", c, (lead+63)/64)
			}
			if st := p.Stats(); st.ShortFlushes != 0 || st.Flushes != uint64(f.calls.Load()) {
				t.Fatalf("ShortFlushes = %d, Flushes = %d (Flush calls %d)", st.ShortFlushes, st.Flushes, f.calls.Load())
			}
		})
	}
}

// Retries of a short flush that progresses stop SyncFlushTimeout after the
// first retry: the commit gets ErrShortFlush, not an endless round.
func TestShortFlushRetriesAreBounded(t *testing.T) {
	for _, k := range waitingKinds {
		t.Run(string(k), func(t *testing.T) {
			f := &fakeLog{step: 1, delay: time.Millisecond} // 1 byte per flush
			cfg := DefaultConfig(k)
			cfg.TickInterval = time.Hour
			cfg.SyncFlushTimeout = 20 * time.Millisecond
			p := newPolicy(t, f, cfg)
			pos := f.append(100_000)
			// rmqgroup's own timer may answer ErrTimeout first; the round
			// still ends with ErrShortFlush for the request.
			err := p.Commit(context.Background(), pos)
			if !errors.Is(err, ErrTimeout) || (k != RMQGroup && !errors.Is(err, ErrShortFlush)) {
				t.Fatalf("Commit(%d) = %v with FlushedPos %d, want ErrShortFlush", pos, err, p.FlushedPos())
			}
			eventually(t, "the round to give up", func() bool { return p.Stats().ShortFlushes == 1 })
			if c := f.calls.Load(); c < 2 || c >= pos {
				t.Fatalf("%d flushes, want a few retries bounded by the timeout", c)
			}
		})
	}
}

package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
)

// putMany puts n messages from 3 goroutines over topics T0,T1 × queues 0..2
// plus one batch, and returns what was stored keyed by "topic/queue/offset".
func putMany(t *testing.T, s *Store, seed uint64, n int) map[string]stored {
	t.Helper()
	var mu sync.Mutex
	out := map[string]stored{}
	var wg sync.WaitGroup
	errc := make(chan error, 3)
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			for i := g; i < n; i += 3 {
				m := newMsg(rng, fmt.Sprintf("T%d", i%2), int32(i%3), i, 3000, "tag"+strconv.Itoa(i%4))
				r, err := s.Put(context.Background(), m)
				if err != nil {
					errc <- err
					return
				}
				mu.Lock()
				out[fmt.Sprintf("%s/%d/%d", m.Topic, m.QueueID, r.QueueOffset)] = stored{m.Topic, m.QueueID, r.QueueOffset, r.WroteOffset, m.Body, r.UniqKey}
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		t.Fatalf("put: %v", err)
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	var batch []*record.Message
	for i := 0; i < 5; i++ {
		batch = append(batch, newMsg(rng, "T0", 1, 1000+i, 500, "b"))
	}
	r, err := s.PutBatch(context.Background(), batch)
	if err != nil {
		t.Fatalf("put batch: %v", err)
	}
	if r.MsgNum != 5 {
		t.Fatalf("batch MsgNum %d", r.MsgNum)
	}
	phys := r.WroteOffset
	for i, m := range batch {
		out[fmt.Sprintf("T0/1/%d", r.QueueOffset+int64(i))] = stored{"T0", 1, r.QueueOffset + int64(i), phys, m.Body, ""}
		size, _ := withUniqKeyFor(m).Size()
		phys += int64(size)
	}
	return out
}

// checkAll pulls every queue and compares with want; queue offsets must be
// contiguous from 0.
func checkAll(t *testing.T, s *Store, want map[string]stored) {
	t.Helper()
	got := 0
	for _, topic := range []string{"T0", "T1"} {
		for q := int32(0); q < 3; q++ {
			recs := pullAll(t, s, topic, q)
			if max := s.GetMaxOffsetInQueue(topic, q); int64(len(recs)) != max {
				t.Fatalf("%s/%d: pulled %d messages, max offset %d", topic, q, len(recs), max)
			}
			for off, raw := range recs {
				w, ok := want[fmt.Sprintf("%s/%d/%d", topic, q, off)]
				if !ok {
					t.Fatalf("%s/%d@%d served but never put", topic, q, off)
				}
				checkRecord(t, raw, w)
				got++
			}
		}
	}
	if got != len(want) {
		t.Fatalf("pulled %d messages, put %d", got, len(want))
	}
}

// The path × policy matrix: concurrent puts and a batch across several
// segment rolls, every message pulled back with identical bytes, before
// and after a clean reopen, and queue offsets continue after the reopen.
func TestPutGetMatrix(t *testing.T) {
	forEachConfig(t, func(t *testing.T, cfg Config) {
		s := openStore(t, cfg)
		want := putMany(t, s, 1, 150)
		if n := len(s.CommitLog().Segments()); n < 3 {
			t.Fatalf("only %d segments", n)
		}
		waitDispatched(t, s)
		checkAll(t, s, want)
		st := s.Stats()
		if st.PutMessages != uint64(len(want)) || st.CommitLog.Appends != uint64(len(want)) {
			t.Fatalf("stats: %d put messages, %d appends, want %d", st.PutMessages, st.CommitLog.Appends, len(want))
		}
		if st.DispatchedRecords < uint64(len(want)) || st.DispatchBehindBytes != 0 || st.DispatchedOffset != s.CommitLog().MaxOffset() {
			t.Fatalf("dispatch stats: %d records, %d behind, at %d", st.DispatchedRecords, st.DispatchBehindBytes, st.DispatchedOffset)
		}
		if cfg.CommitLog.Flush.Kind != flush.Async && st.Flush.Flushes == 0 {
			t.Fatalf("no flushes counted under %s", cfg.CommitLog.Flush.Kind)
		}
		if cfg.CommitLog.Path == iopath.Direct && s.ReadCache() == nil {
			t.Fatalf("direct path without a read cache")
		}
		mustClose(t, s)
		if _, err := os.Stat(AbortPath(cfg.Root)); !os.IsNotExist(err) {
			t.Fatalf("abort file after clean close: %v", err)
		}

		s = openStore(t, cfg)
		defer mustClose(t, s)
		if s.Recovery().Abnormal {
			t.Fatalf("clean reopen recovered abnormally")
		}
		checkAll(t, s, want)
		rng := rand.New(rand.NewPCG(7, 7))
		before := s.GetMaxOffsetInQueue("T1", 2)
		r := mustPut(t, s, newMsg(rng, "T1", 2, 5000, 100, ""))
		if r.QueueOffset != before {
			t.Fatalf("queue offset after reopen %d, want %d", r.QueueOffset, before)
		}
	})
}

func TestPutAddsUniqKeyAndKeepsCallerMessage(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Async)
	s := openStore(t, cfg)
	defer mustClose(t, s)
	rng := rand.New(rand.NewPCG(1, 1))
	m := newMsg(rng, "T", 0, 0, 10, "")
	props := m.Properties
	r := mustPut(t, s, m)
	if m.Properties != props {
		t.Fatalf("Put modified the caller's properties")
	}
	if len(r.UniqKey) != 32 {
		t.Fatalf("UNIQ_KEY %q", r.UniqKey)
	}
	waitDispatched(t, s)
	_, rec, err := s.LookMessageByOffset(r.WroteOffset)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := rec.Property(record.PropertyUniqKey); string(k) != r.UniqKey {
		t.Fatalf("stored UNIQ_KEY %q, result %q", k, r.UniqKey)
	}
	// A producer's own UNIQ_KEY is kept.
	m2 := newMsg(rng, "T", 0, 1, 10, "")
	m2.Properties = string(record.AppendProperty([]byte(m2.Properties), record.PropertyUniqKey, "MYKEY"))
	if r2 := mustPut(t, s, m2); r2.UniqKey != "MYKEY" {
		t.Fatalf("UNIQ_KEY %q", r2.UniqKey)
	}
}

// PREPARED transaction messages get queue offset 0 and no unit; COMMIT ones
// are consumable.
func TestPutTransactionTypes(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Pwrite, flush.Group)
	s := openStore(t, cfg)
	defer mustClose(t, s)
	rng := rand.New(rand.NewPCG(1, 2))
	mustPut(t, s, newMsg(rng, "T", 0, 0, 10, ""))
	half := newMsg(rng, "T", 0, 1, 10, "")
	half.SysFlag = record.TransactionPrepared
	if r := mustPut(t, s, half); r.QueueOffset != 0 {
		t.Fatalf("prepared message got queue offset %d", r.QueueOffset)
	}
	commit := newMsg(rng, "T", 0, 2, 10, "")
	commit.SysFlag = record.TransactionCommit
	if r := mustPut(t, s, commit); r.QueueOffset != 1 {
		t.Fatalf("commit message got queue offset %d, want 1", r.QueueOffset)
	}
	waitDispatched(t, s)
	if got := s.GetMaxOffsetInQueue("T", 0); got != 2 {
		t.Fatalf("max offset %d, want 2", got)
	}
	if _, err := s.PutBatch(context.Background(), []*record.Message{half}); StatusOf(err) != MessageIllegal {
		t.Fatalf("transactional batch: %v", err)
	}
	if _, err := s.PutBatch(context.Background(), []*record.Message{newMsg(rng, "T", 0, 3, 10, ""), newMsg(rng, "T", 1, 4, 10, "")}); StatusOf(err) != MessageIllegal || !errors.Is(err, ErrBatch) {
		t.Fatalf("mixed batch: %v", err)
	}
}

func TestPutIllegalAndAfterClose(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Sync)
	s := openStore(t, cfg)
	rng := rand.New(rand.NewPCG(1, 3))
	bad := newMsg(rng, "bad topic", 0, 0, 10, "")
	if _, err := s.Put(context.Background(), bad); StatusOf(err) != MessageIllegal {
		t.Fatalf("invalid topic: %v", err)
	}
	tooBig := newMsg(rng, "T", 0, 0, 10, "")
	tooBig.Body = make([]byte, cfg.CommitLog.MaxBodySize+1)
	if _, err := s.Put(context.Background(), tooBig); StatusOf(err) != MessageIllegal {
		t.Fatalf("body over the limit: %v", err)
	}
	// A refused put does not consume a queue offset.
	if r := mustPut(t, s, newMsg(rng, "T", 0, 1, 10, "")); r.QueueOffset != 0 {
		t.Fatalf("queue offset %d after refused puts", r.QueueOffset)
	}
	mustClose(t, s)
	if _, err := s.Put(context.Background(), newMsg(rng, "T", 0, 2, 10, "")); StatusOf(err) != ServiceNotAvailable || !errors.Is(err, ErrClosed) {
		t.Fatalf("put after close: %v", err)
	}
	if _, err := s.GetMessage("g", "T", 0, 0, 1, 1024, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("get after close: %v", err)
	}
}

// A message whose producer does not wait for the flush (WAIT=false) still
// becomes durable and consumable by itself — nobody calls Flush — on every
// write path under every policy (RocketMQ's GroupCommitService wakes every
// 10 ms; the async flusher reads the log's own positions). Under sync,
// group and dsync it is dispatched only once flushed: while the flush is held up it
// stays invisible. The arriving listener sees every unit.
func TestWaitFalseBecomesDurableAndConsumable(t *testing.T) {
	for _, path := range iopath.Kinds() {
		for _, pol := range flush.AllKinds() {
			t.Run(fmt.Sprintf("path=%s/flush=%s", path, pol), func(t *testing.T) {
				skipNoDSync(t, path, pol)
				t.Parallel()
				cfg := testConfig(t, t.TempDir(), path, pol)
				cfg.CommitLog.Flush.Interval = 20 * time.Millisecond
				cfg.CommitLog.Flush.ThoroughInterval = 100 * time.Millisecond
				inj := faultfs.NewInjector(1)
				cfg.FS = faultfs.Wrap(vfs.Default, inj)
				var mu sync.Mutex
				arrived := map[string]int64{}
				cfg.OnMessageArriving = func(topic string, q int32, maxOffset int64) {
					mu.Lock()
					arrived[fmt.Sprintf("%s/%d", topic, q)] = maxOffset
					mu.Unlock()
				}
				s := openStore(t, cfg)
				defer mustClose(t, s)
				rng := rand.New(rand.NewPCG(1, 4))
				mustPut(t, s, newMsg(rng, "T", 0, 0, 10, ""))
				waitDispatched(t, s)
				durableFirst := pol != flush.Async
				var hold faultfs.RuleID
				if durableFirst {
					hold = inj.Add(faultfs.Rule{Op: flushOpFor(path, pol), PathContains: "commitlog", When: faultfs.Always(), Delay: 400 * time.Millisecond})
				}
				m := newMsg(rng, "T", 0, 1, 10, "")
				m.Properties = string(record.AppendProperty([]byte(m.Properties), record.PropertyWaitStoreMsgOK, "false"))
				r := mustPut(t, s, m)
				end := r.WroteOffset + r.WroteBytes
				if durableFirst {
					if s.WaitDispatched(100 * time.Millisecond) {
						t.Fatalf("a record whose flush is held up was dispatched under %s", pol)
					}
					inj.Remove(hold)
				}
				if !s.WaitDispatched(10 * time.Second) {
					t.Fatalf("the WAIT=false record was never dispatched (flushed %d, end %d)", s.CommitLog().FlushedOffset(), end)
				}
				if durableFirst && s.CommitLog().FlushedOffset() < end {
					t.Fatalf("dispatched before it was flushed: flushed %d, end %d", s.CommitLog().FlushedOffset(), end)
				}
				deadline := time.Now().Add(10 * time.Second)
				for s.CommitLog().FlushedOffset() < end {
					if time.Now().After(deadline) {
						t.Fatalf("the WAIT=false record was never flushed (flushed %d, end %d)", s.CommitLog().FlushedOffset(), end)
					}
					time.Sleep(5 * time.Millisecond)
				}
				if got := s.GetMaxOffsetInQueue("T", 0); got != 2 {
					t.Fatalf("max offset %d, want 2", got)
				}
				if got := pullAll(t, s, "T", 0); len(got) != 2 {
					t.Fatalf("%d messages served, want 2", len(got))
				}
				mu.Lock()
				defer mu.Unlock()
				if arrived["T/0"] != 2 {
					t.Fatalf("listener saw max offset %d, want 2", arrived["T/0"])
				}
			})
		}
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Async)
	s := openStore(t, cfg)
	defer mustClose(t, s)
	if _, err := Open(cfg); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
	b, err := os.ReadFile(AbortPath(cfg.Root))
	if err != nil || string(b) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("abort file %q, %v", b, err)
	}
}

// While an append has held the commit log's append lock for over 1 s,
// IsOSPageCacheBusy reports it and a new put is refused with
// OS_PAGE_CACHE_BUSY.
func TestOSPageCacheBusy(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), iopath.Pwrite, flush.Async)
	inj := faultfs.NewInjector(1)
	cfg.FS = faultfs.Wrap(vfs.Default, inj)
	s := openStore(t, cfg)
	defer mustClose(t, s)
	qA, qB := int32(0), int32(1)
	for s.stripeFor("T", qA) == s.stripeFor("T", qB) {
		qB++
	}
	inj.Add(faultfs.Rule{Op: vfs.OpWrite, PathContains: "commitlog", When: faultfs.OnlyNth(1), Delay: 3 * time.Second}) // 2 s past the 1 s threshold: room for a slow machine
	errA := make(chan error, 1)
	go func() {
		_, err := s.Put(context.Background(), fixedMsg("T", qA, 10, ""))
		errA <- err
	}()
	for i := 0; s.CommitLog().LockHeldFor() == 0; i++ {
		if i > 5000 {
			t.Fatalf("the slow append never took the lock")
		}
		time.Sleep(100 * time.Microsecond)
	}
	for !s.IsOSPageCacheBusy() {
		if s.CommitLog().LockHeldFor() == 0 {
			t.Fatalf("IsOSPageCacheBusy never true while an append held the lock for 3 s")
		}
		time.Sleep(time.Millisecond)
	}
	_, errB := s.Put(context.Background(), fixedMsg("T", qB, 10, ""))
	if StatusOf(errB) != OSPageCacheBusy {
		t.Fatalf("put behind a 3 s append: %v", errB)
	}
	if err := <-errA; err != nil {
		t.Fatalf("slow put: %v", err)
	}
	if s.IsOSPageCacheBusy() {
		t.Fatalf("still busy after the append")
	}
	if r := mustPut(t, s, fixedMsg("T", qB, 10, "")); r.QueueOffset != 0 {
		t.Fatalf("the refused put consumed queue offset: next is %d", r.QueueOffset)
	}
	if s.Stats().CommitLog.BusyRefused != 1 {
		t.Fatalf("busy refusals %d", s.Stats().CommitLog.BusyRefused)
	}
}

// The direct path's committed position moves by whole staging buffers, so
// under async the dispatcher's bound falls inside records: it dispatches
// every record wholly below it, waits for the rest, and never takes the cut
// for corruption.
func TestDispatchBoundInsideARecord(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Direct, flush.Async)
	cfg.CommitLog.SegmentSize = 4 << 20
	cfg.CommitLog.Flush.Interval = time.Hour // no flush, no background tail commit:
	cfg.CommitLog.Flush.ThoroughInterval = time.Hour
	cfg.CommitLog.IO.CommitInterval = time.Hour // only full buffers reach the device
	s := openStore(t, cfg)
	defer mustClose(t, s)
	rng := rand.New(rand.NewPCG(5, 6))
	var last PutResult
	for i := 0; i < 200; i++ { // ~300 KiB of records of 1 to 3,000 bytes: one full 256 KiB buffer
		last = mustPut(t, s, newMsg(rng, "T", 0, i, 3000, ""))
	}
	// The writer goroutine writes full buffers in the background; wait for
	// the first (the bound it leaves, 256 KiB, falls inside a 3,000-byte
	// record). Later buffers may still be written while the test runs, so
	// the bound is read again each time it is compared.
	var committed int64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if committed = s.CommitLog().CommittedOffset(); committed >= 256<<10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("committed offset %d after 10 s: no full buffer written", committed)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	var served int64
	for {
		served = s.GetMaxOffsetInQueue("T", 0)
		committed = s.CommitLog().CommittedOffset()
		if d := s.DispatchedOffset(); d > 0 && d <= committed && committed-d < 3500 && s.GetMaxOffsetInQueue("T", 0) == served {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dispatched to %d, committed %d", s.DispatchedOffset(), committed)
		}
		time.Sleep(time.Millisecond)
	}
	if committed >= last.WroteOffset {
		t.Fatalf("committed offset %d: the test needs it inside the log (last record at %d)", committed, last.WroteOffset)
	}
	if n := s.Stats().DispatchErrors; n != 0 {
		t.Fatalf("%d dispatch errors: a bound inside a record was taken for corruption", n)
	}
	if served == 0 || served >= 200 {
		t.Fatalf("%d messages served before the flush, want the committed ones only", served)
	}
	if _, err := s.CommitLog().Flush(); err != nil {
		t.Fatal(err)
	}
	waitDispatched(t, s)
	if got := s.GetMaxOffsetInQueue("T", 0); got != 200 {
		t.Fatalf("%d messages served after the flush, want 200", got)
	}
}

package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
)

// Fault-injection tests (issue 7): the store runs over faultfs, a fault is
// injected into the commit log's segment files, and the test checks what a
// broker relies on:
//
//   - the put that meets the fault gets a clear status wrapping the injected
//     errno (a failed write or flush: SERVICE_NOT_AVAILABLE, or UNKNOWN_ERROR
//     when the pwrite itself failed inside the append; a failed segment
//     creation: CREATE_MAPPED_FILE_FAILED);
//   - a write or flush error is sticky: every later put gets
//     SERVICE_NOT_AVAILABLE, also after the fault cleared, until a restart;
//     a failed segment creation is not sticky;
//   - reads of acknowledged data keep working in the faulted process;
//   - the process does not panic, Close keeps the abort file after a
//     write/flush error, and after the fault clears a reopen (recovery)
//     serves every acknowledged message (sync, group; under async every
//     message acknowledged before an explicit flush) with identical body and
//     properties, the consume queues hold no holes or duplicates and no
//     record fails its CRC;
//   - a slow flush beyond SyncFlushTimeout gives FLUSH_DISK_TIMEOUT under
//     group commit and the message is stored.

const (
	faultTopic  = "FAULT"
	faultQueues = 4
)

// faultOp is one kind of injected fault and the write paths it applies to.
type faultOp struct {
	name  string
	op    vfs.Op
	paths []iopath.Kind
	// creation: the fault hits segment creation (not sticky).
	creation bool
	// flushOnly: the op runs only in a flush (status is always
	// SERVICE_NOT_AVAILABLE); otherwise the failing put may also get
	// UNKNOWN_ERROR (a pwrite inside the append).
	flushOnly bool
}

var faultOps = []faultOp{
	// pwrite: every append; pool: the commit step; direct: full staging
	// blocks in Append and the tail block in Flush.
	{name: "write", op: vfs.OpWrite, paths: []iopath.Kind{iopath.Pwrite, iopath.Pool, iopath.Direct, iopath.Uncached}},
	{name: "msync", op: vfs.OpMsync, paths: []iopath.Kind{iopath.Mmap}, flushOnly: true},
	{name: "fdatasync", op: vfs.OpSync, paths: []iopath.Kind{iopath.Pwrite, iopath.Pool, iopath.Direct, iopath.Uncached}, flushOnly: true},
	{name: "fallocate", op: vfs.OpAllocate, paths: iopath.Kinds(), creation: true},
	{name: "open", op: vfs.OpOpen, paths: iopath.Kinds(), creation: true},
}

var faultErrnos = []syscall.Errno{syscall.EIO, syscall.ENOSPC}

// faultKey is a message's place: queue and queue offset.
type faultKey struct {
	q   int32
	off int64
}

// faultLedger remembers every message offered to the store, the
// acknowledged ones and those that must survive a restart.
type faultLedger struct {
	mu      sync.Mutex
	sent    map[string]*record.Message // by UNIQ_KEY
	acked   map[faultKey]string        // PUT_OK (or FLUSH_DISK_TIMEOUT) → UNIQ_KEY
	phys    map[faultKey]int64         // acknowledged → commit-log offset
	durable map[faultKey]bool          // must be served after a reopen
	ackEnd  int64                      // end of the last acknowledged record
	// durableEnd is the end of the last record known durable.
	durableEnd int64
}

func newFaultLedger() *faultLedger {
	return &faultLedger{
		sent: map[string]*record.Message{}, acked: map[faultKey]string{},
		phys: map[faultKey]int64{}, durable: map[faultKey]bool{},
	}
}

// faultMsg returns message i: queue i%4, a random body, KEYS, SEQ and its
// own UNIQ_KEY (so the stored properties equal the sent ones).
func faultMsg(rng *rand.Rand, i int) *record.Message {
	body := make([]byte, 100+rng.IntN(1000))
	for j := range body {
		body[j] = byte(rng.Uint32())
	}
	props := record.EncodeProperties(map[string]string{
		record.PropertyKeys:    "k" + strconv.Itoa(i),
		record.PropertyUniqKey: record.NewUniqID(),
		"SEQ":                  strconv.Itoa(i),
	})
	return &record.Message{
		Topic: faultTopic, QueueID: int32(i % faultQueues), Flag: int32(i), Body: body, Properties: props,
		BornTimestamp: time.Now().UnixMilli(), BornHost: bornHost,
	}
}

func uniqOf(props string) string {
	k, _ := record.Property(props, record.PropertyUniqKey)
	return k
}

// put offers m and records the outcome; durable says whether an
// acknowledgement promises survival of a restart.
func (l *faultLedger) put(s *Store, m *record.Message, durable bool) (PutResult, error) {
	l.mu.Lock()
	l.sent[uniqOf(m.Properties)] = m
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := s.Put(ctx, m)
	if err == nil || r.Status == FlushDiskTimeout {
		k := faultKey{m.QueueID, r.QueueOffset}
		l.mu.Lock()
		l.acked[k] = uniqOf(m.Properties)
		l.phys[k] = r.WroteOffset
		end := r.WroteOffset + r.WroteBytes
		if durable && err == nil {
			l.durable[k] = true
			l.durableEnd = max(l.durableEnd, end)
		}
		l.ackEnd = max(l.ackEnd, end)
		l.mu.Unlock()
	}
	return r, err
}

// markAllDurable makes every acknowledged message one that must survive
// (after an explicit flush).
func (l *faultLedger) markAllDurable() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.acked {
		l.durable[k] = true
	}
	l.durableEnd = l.ackEnd
}

// faultStoreConfig is testConfig over faultfs with flushes on every async
// interval (LeastPages 0).
func faultStoreConfig(t *testing.T, path iopath.Kind, pol flush.Kind, seed uint64) (Config, *faultfs.Injector) {
	cfg := testConfig(t, t.TempDir(), path, pol)
	inj := faultfs.NewInjector(seed)
	cfg.FS = faultfs.Wrap(vfs.Default, inj)
	cfg.CommitLog.Flush.LeastPages = 0
	cfg.CommitLog.Flush.SyncFlushTimeout = 5 * time.Second
	return cfg, inj
}

// segmentRule is a rule restricted to the commit log's segment files.
func segmentRule(cfg Config, op vfs.Op, when faultfs.Trigger, err error, delay time.Duration) faultfs.Rule {
	return faultfs.Rule{
		Op: op, PathContains: commitlog.SegmentDir(cfg.Root) + string(filepath.Separator),
		When: when, Err: err, Delay: delay,
	}
}

// waitDispatchedTo waits until the dispatcher has passed end.
func waitDispatchedTo(t *testing.T, s *Store, end int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.DispatchedOffset() < end {
		if time.Now().After(deadline) {
			t.Fatalf("dispatch stuck at %d, want %d (flushed %d, max %d)", s.DispatchedOffset(), end,
				s.CommitLog().FlushedOffset(), s.CommitLog().MaxOffset())
		}
		time.Sleep(time.Millisecond)
	}
}

// checkServed reads every durable (acknowledged and flushed) message
// through GetMessage in the running store — or, with all, every
// acknowledged one — and compares it with what was sent.
func (l *faultLedger) checkServed(t *testing.T, s *Store, all bool) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	end := l.durableEnd
	if all {
		end = l.ackEnd
	}
	waitDispatchedTo(t, s, end)
	for k, uniq := range l.acked {
		if !all && !l.durable[k] {
			continue
		}
		res, err := s.GetMessage("g", faultTopic, k.q, k.off, 1, 1<<20, nil)
		if err != nil || res.Status != Found || len(res.Messages) == 0 {
			t.Fatalf("read of acknowledged %d/%d in the faulted store: %v %v", k.q, k.off, res.Status, err)
		}
		ref := res.Messages[0]
		l.checkRecordLocked(t, res.Buffer[ref.Pos:ref.Pos+int(ref.Size)], k, uniq)
	}
}

// checkRecordLocked decodes raw (with its CRC) and checks it is the message
// sent with uniq, stored at k. REQUIRES: l.mu held.
func (l *faultLedger) checkRecordLocked(t *testing.T, raw []byte, k faultKey, uniq string) {
	t.Helper()
	rec, err := record.Decode(raw, true)
	if err != nil {
		t.Fatalf("%d/%d: record fails its check: %v", k.q, k.off, err)
	}
	got, _ := rec.Property(record.PropertyUniqKey)
	if uniq != "" && string(got) != uniq {
		t.Fatalf("%d/%d: holds message %s, acknowledged %s", k.q, k.off, got, uniq)
	}
	m := l.sent[string(got)]
	if m == nil {
		t.Fatalf("%d/%d: holds message %q that was never sent", k.q, k.off, got)
	}
	if string(rec.Topic) != m.Topic || rec.QueueID != k.q || rec.QueueOffset != k.off ||
		!bytes.Equal(rec.Body, m.Body) || string(rec.Properties) != m.Properties || rec.BornHost != m.BornHost {
		t.Fatalf("%d/%d: stored record differs from the message sent (topic %s queue %d offset %d)",
			k.q, k.off, rec.Topic, rec.QueueID, rec.QueueOffset)
	}
}

// checkRecovered verifies a reopened store: the commit log is a sequence
// of valid records (CRC checked) of messages that were sent, each queue's
// offsets run 0..n-1 in log order with the consume queue agreeing, every
// served record is the logged one, every durable message is there and
// every acknowledged message that survived is intact (async: a clean
// prefix). It returns the number of records per queue.
func (l *faultLedger) checkRecovered(t *testing.T, s *Store) map[int32]int64 {
	t.Helper()
	waitDispatchedTo(t, s, s.CommitLog().MaxOffset())
	l.mu.Lock()
	defer l.mu.Unlock()
	log := s.CommitLog()
	next := map[int32]int64{}
	first := map[int32]int64{} // a cleaned log starts past queue offset 0
	walkLog(t, log, func(off int64, raw []byte, rec record.Record) {
		k := faultKey{rec.QueueID, rec.QueueOffset}
		if _, seen := first[rec.QueueID]; !seen {
			first[rec.QueueID] = 0
			if log.MinOffset() > 0 {
				first[rec.QueueID], next[rec.QueueID] = rec.QueueOffset, rec.QueueOffset
			}
		}
		if rec.QueueOffset != next[rec.QueueID] {
			t.Fatalf("queue %d: record at %d has queue offset %d, want %d (hole or duplicate)", rec.QueueID, off, rec.QueueOffset, next[rec.QueueID])
		}
		l.checkRecordLocked(t, raw, k, l.acked[k])
		next[rec.QueueID]++
	})
	for q := int32(0); q < faultQueues; q++ {
		if got := s.GetMaxOffsetInQueue(faultTopic, q); got != next[q] {
			t.Fatalf("queue %d: consume queue max %d, commit log holds %d", q, got, next[q])
		}
		served := pullAll(t, s, faultTopic, q)
		if int64(len(served)) != next[q]-first[q] {
			t.Fatalf("queue %d: %d served, %d stored", q, len(served), next[q]-first[q])
		}
		for off, raw := range served {
			k := faultKey{q, off}
			if off < first[q] || off >= next[q] {
				t.Fatalf("queue %d: served offset %d outside [%d,%d)", q, off, first[q], next[q])
			}
			l.checkRecordLocked(t, raw, k, l.acked[k])
		}
	}
	for k := range l.durable {
		if k.off < first[k.q] || k.off >= next[k.q] {
			t.Fatalf("acknowledged message %d/%d lost (queue holds %d)", k.q, k.off, next[k.q])
		}
	}
	return next
}

func abortExists(root string) bool {
	_, err := os.Stat(AbortPath(root))
	return err == nil
}

// TestFaultMatrix injects EIO and ENOSPC into each file operation over every
// write path × flush policy where the operation applies.
func TestFaultMatrix(t *testing.T) {
	t.Parallel()
	seed := uint64(1)
	for _, fo := range faultOps {
		for _, errno := range faultErrnos {
			for _, path := range fo.paths {
				for _, pol := range flush.AllKinds() {
					seed++
					name := fmt.Sprintf("%s/%s/path=%s/flush=%s", fo.name, errnoName(errno), path, pol)
					t.Run(name, func(t *testing.T) {
						skipNoDSync(t, path, pol)
						if pol.DurableWrites() && fo.op == vfs.OpSync {
							t.Skip("flush=dsync never calls fdatasync: its durable write is the write fault's case")
						}
						t.Parallel()
						if fo.creation {
							runCreationFault(t, fo, errno, path, pol, seed)
						} else {
							runStickyFault(t, fo, errno, path, pol, seed)
						}
					})
				}
			}
		}
	}
}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.EIO:
		return "EIO"
	case syscall.ENOSPC:
		return "ENOSPC"
	}
	return e.Error()
}

// runStickyFault: a write or flush fault makes the log unwritable.
func runStickyFault(t *testing.T, fo faultOp, errno syscall.Errno, path iopath.Kind, pol flush.Kind, seed uint64) {
	cfg, inj := faultStoreConfig(t, path, pol, seed)
	s := openStore(t, cfg)
	closed := false
	defer func() {
		if !closed {
			_ = s.Close()
		}
	}()
	rng := rand.New(rand.NewPCG(seed, 7))
	led := newFaultLedger()
	durableAck := pol != flush.Async
	i := 0
	for ; i < 24; i++ {
		if _, err := led.put(s, faultMsg(rng, i), durableAck); err != nil {
			t.Fatalf("put %d before the fault: %v", i, err)
		}
	}
	// Everything so far is made durable explicitly, so it must survive under
	// every policy.
	if _, err := s.CommitLog().Flush(); err != nil {
		t.Fatal(err)
	}
	led.markAllDurable()

	inj.Add(segmentRule(cfg, fo.op, faultfs.Always(), errno, 0))
	var failErr error
	var failRes PutResult
	deadline := time.Now().Add(10 * time.Second)
	for ; failErr == nil && i < 2000 && time.Now().Before(deadline); i++ {
		failRes, failErr = led.put(s, faultMsg(rng, i), durableAck)
		if pol == flush.Async && failErr == nil {
			time.Sleep(time.Millisecond) // let the background flush meet the fault
		}
	}
	if failErr == nil {
		t.Fatalf("no put failed in %d puts with %s faults on %s", i, errnoName(errno), fo.op)
	}
	st := StatusOf(failErr)
	okStatus := st == ServiceNotAvailable
	if !okStatus || failRes.Status != st {
		t.Fatalf("failing put: status %v (result %v), err %v; want SERVICE_NOT_AVAILABLE%s", st, failRes.Status, failErr,
			map[bool]string{true: "", false: " or UNKNOWN_ERROR"}[fo.flushOnly])
	}
	if !errors.Is(failErr, errno) || !errors.Is(failErr, faultfs.ErrInjected) {
		t.Fatalf("failing put's error does not wrap the injected %s: %v", errnoName(errno), failErr)
	}
	t.Logf("first failing put (#%d): %v", i-1, st)

	// Sticky: the fault clears, the log stays unwritable until a restart.
	inj.Clear()
	if err := s.CommitLog().Err(); !errors.Is(err, errno) {
		t.Fatalf("commit log error %v, want sticky %s", err, errnoName(errno))
	}
	for j := 0; j < 3; j++ {
		_, err := led.put(s, faultMsg(rng, i), durableAck)
		i++
		if StatusOf(err) != ServiceNotAvailable || !errors.Is(err, errno) {
			t.Fatalf("put after the fault cleared: %v, want sticky SERVICE_NOT_AVAILABLE wrapping %s", err, errnoName(errno))
		}
	}
	led.checkServed(t, s, false)

	err := s.Close()
	closed = true
	if err == nil {
		t.Fatalf("Close after a sticky %s reported no error", fo.op)
	}
	if !abortExists(cfg.Root) {
		t.Fatalf("Close after a write/flush error removed the abort file; the next open would not recover abnormally")
	}

	s2 := openStore(t, cfg)
	defer mustClose(t, s2)
	if !s2.Recovery().Abnormal {
		t.Fatalf("reopen after a faulted close: recovery not abnormal")
	}
	got := led.checkRecovered(t, s2)
	t.Logf("recovered queues %v; %d acknowledged, %d required", got, len(led.acked), len(led.durable))
	// Writable again after the restart.
	for j := 0; j < 4; j++ {
		if _, err := led.put(s2, faultMsg(rng, i+j), true); err != nil {
			t.Fatalf("put after the restart: %v", err)
		}
	}
	led.checkRecovered(t, s2)
}

// runCreationFault: segment creation (open or fallocate of the next
// segment) fails; the put gets CREATE_MAPPED_FILE_FAILED; nothing is sticky.
func runCreationFault(t *testing.T, fo faultOp, errno syscall.Errno, path iopath.Kind, pol flush.Kind, seed uint64) {
	cfg, inj := faultStoreConfig(t, path, pol, seed)
	s := openStore(t, cfg)
	rng := rand.New(rand.NewPCG(seed, 9))
	led := newFaultLedger()
	i := 0
	for ; i < 8; i++ {
		if _, err := led.put(s, faultMsg(rng, i), true); err != nil {
			t.Fatalf("put %d before the fault: %v", i, err)
		}
	}
	if _, err := s.CommitLog().Flush(); err != nil {
		t.Fatal(err)
	}
	led.markAllDurable()
	// The background allocator may already hold the next segment; appends
	// cross it and fail at the one after (at most three 64 KiB segments).
	inj.Add(segmentRule(cfg, fo.op, faultfs.Always(), errno, 0))
	var failErr error
	var failRes PutResult
	for ; failErr == nil && i < 400; i++ {
		failRes, failErr = led.put(s, faultMsg(rng, i), true)
	}
	if failErr == nil {
		t.Fatalf("no put failed in %d puts with %s faults on %s", i, errnoName(errno), fo.op)
	}
	if StatusOf(failErr) != CreateMappedFileFailed || failRes.Status != CreateMappedFileFailed ||
		!errors.Is(failErr, errno) || !errors.Is(failErr, faultfs.ErrInjected) {
		t.Fatalf("failing put: %v (result %v), want CREATE_MAPPED_FILE_FAILED wrapping %s", failErr, failRes.Status, errnoName(errno))
	}
	// Repeated attempts keep failing cleanly while the fault lasts.
	for j := 0; j < 3; j++ {
		_, err := led.put(s, faultMsg(rng, i), true)
		i++
		if StatusOf(err) != CreateMappedFileFailed {
			t.Fatalf("put while segment creation fails: %v", err)
		}
	}
	if err := s.CommitLog().Err(); err != nil {
		t.Fatalf("a failed segment creation made the log unwritable: %v", err)
	}
	led.checkServed(t, s, false)
	inj.Clear()
	for j := 0; j < 8; j++ {
		if _, err := led.put(s, faultMsg(rng, i), true); err != nil {
			t.Fatalf("put after the fault cleared: %v", err)
		}
		i++
	}
	led.checkServed(t, s, false)
	mustClose(t, s)
	if abortExists(cfg.Root) {
		t.Fatalf("a clean close after a cleared creation fault kept the abort file")
	}
	s2 := openStore(t, cfg)
	defer mustClose(t, s2)
	if s2.Recovery().Abnormal {
		t.Fatalf("clean close, but recovery was abnormal")
	}
	led.checkRecovered(t, s2)
}

// flushOpFor is the operation that makes bytes durable on a write path
// under a flush policy (under dsync, the durable write itself).
func flushOpFor(path iopath.Kind, pol flush.Kind) vfs.Op {
	if pol.DurableWrites() {
		return vfs.OpWrite
	}
	if path == iopath.Mmap {
		return vfs.OpMsync
	}
	return vfs.OpSync
}

// A flush slower than SyncFlushTimeout (under dsync: a durable write):
// group commit and dsync answer FLUSH_DISK_TIMEOUT, the message is stored (readable once the slow flush
// completes, and after a restart); sync and async puts simply wait (sync)
// or do not wait (async) and succeed.
func TestFaultSlowFlush(t *testing.T) {
	t.Parallel()
	for _, path := range iopath.Kinds() {
		for _, pol := range flush.AllKinds() {
			t.Run(fmt.Sprintf("path=%s/flush=%s", path, pol), func(t *testing.T) {
				skipNoDSync(t, path, pol)
				t.Parallel()
				cfg, inj := faultStoreConfig(t, path, pol, 3)
				// Margins that hold on a loaded machine (-race, every package
				// at once): the warm-up puts' real flushes stay well under
				// the timeout; the injected one stays well over it.
				cfg.CommitLog.Flush.SyncFlushTimeout = time.Second
				s := openStore(t, cfg)
				rng := rand.New(rand.NewPCG(11, 12))
				led := newFaultLedger()
				for i := 0; i < 4; i++ {
					if _, err := led.put(s, faultMsg(rng, i), true); err != nil {
						t.Fatal(err)
					}
				}
				// The segment's flush stalls until released. A sync put waits
				// for the flush: it is released once it has stalled. Group
				// commit's leader runs the flush itself: it is released once
				// it has stalled longer than the 1 s timeout, so the leader
				// finds its commit late. rmqgroup's flusher goroutine runs
				// it: the put times out while it stalls, and the test
				// releases it then. An async put does not wait at all.
				stall := make(chan struct{})
				release := sync.OnceFunc(func() { close(stall) })
				defer release() // a failed check must not leave the flush stalled
				rule := segmentRule(cfg, flushOpFor(path, pol), faultfs.Always(), nil, 0)
				rule.Hold = stall
				id := inj.Add(rule)
				released := make(chan struct{})
				go func() {
					defer close(released)
					if pol == flush.Sync || pol == flush.Group {
						for deadline := time.Now().Add(30 * time.Second); inj.Fired(id) == 0 && time.Now().Before(deadline); {
							time.Sleep(time.Millisecond)
						}
						if pol == flush.Group {
							time.Sleep(cfg.CommitLog.Flush.SyncFlushTimeout + 100*time.Millisecond) // the stall outlasts the timeout by construction
						}
						release()
					}
				}()
				r, err := led.put(s, faultMsg(rng, 4), pol != flush.Async)
				switch pol {
				case flush.Group, flush.RMQGroup, flush.DSync:
					if StatusOf(err) != FlushDiskTimeout || r.Status != FlushDiskTimeout || !errors.Is(err, flush.ErrTimeout) {
						t.Fatalf("group commit behind a stalled flush (timeout 1 s): %v, want FLUSH_DISK_TIMEOUT", err)
					}
					if !r.Status.Stored() || r.WroteBytes == 0 {
						t.Fatalf("FLUSH_DISK_TIMEOUT result does not describe the stored message: %+v", r)
					}
				default:
					if err != nil {
						t.Fatalf("%s put behind a stalled flush: %v", pol, err)
					}
				}
				<-released
				if pol == flush.Sync || pol == flush.Group {
					if inj.Fired(id) == 0 {
						t.Fatalf("the %s put returned without its flush reaching the segment", pol)
					}
				} else {
					release()
				}
				inj.Remove(id)
				// The timed-out message is durable once a later flush covers it.
				if _, err := s.CommitLog().Flush(); err != nil {
					t.Fatal(err)
				}
				led.markAllDurable()
				led.checkServed(t, s, false)
				mustClose(t, s)
				s2 := openStore(t, cfg)
				defer mustClose(t, s2)
				led.checkRecovered(t, s2)
			})
		}
	}
}

// Random EIO faults (0.5 % of writes and flushes of the segment files) under
// concurrent producers: whatever fails first, every acknowledged message is
// intact after the restart (group, sync and dsync: all of them).
func TestFaultRandomConcurrent(t *testing.T) {
	t.Parallel()
	for _, path := range iopath.Kinds() {
		for _, pol := range []flush.Kind{flush.Sync, flush.Group, flush.DSync} {
			t.Run(fmt.Sprintf("path=%s/flush=%s", path, pol), func(t *testing.T) {
				skipNoDSync(t, path, pol)
				t.Parallel()
				seed := uint64(time.Now().UnixNano())
				t.Logf("seed %d", seed)
				cfg, inj := faultStoreConfig(t, path, pol, seed)
				s := openStore(t, cfg)
				led := newFaultLedger()
				inj.Add(segmentRule(cfg, vfs.OpWrite, faultfs.WithProbability(0.005), syscall.EIO, 0))
				inj.Add(segmentRule(cfg, flushOpFor(path, pol), faultfs.WithProbability(0.005), syscall.EIO, 0))
				var wg sync.WaitGroup
				var statusMu sync.Mutex
				statuses := map[PutStatus]int{}
				for g := 0; g < 4; g++ {
					wg.Add(1)
					go func(g int) {
						defer wg.Done()
						rng := rand.New(rand.NewPCG(seed, uint64(g)))
						for i := 0; i < 150; i++ {
							_, err := led.put(s, faultMsg(rng, g*1000+i), true)
							st := StatusOf(err)
							statusMu.Lock()
							statuses[st]++
							statusMu.Unlock()
							// A write fault fails the put as a sticky log error
							// (SERVICE_NOT_AVAILABLE), or, when it hits the write a
							// path makes while creating the next segment (the
							// uncached path's RWF_DONTCACHE probe), as
							// CREATE_MAPPED_FILE_FAILED, which is not sticky: the
							// next put creates the segment again.
							if err != nil && st != ServiceNotAvailable && st != CreateMappedFileFailed {
								t.Errorf("put: unexpected status %v: %v", st, err)
								return
							}
							if err != nil && !errors.Is(err, faultfs.ErrInjected) {
								t.Errorf("put failed with %v, not wrapping the injected fault: %v", st, err)
								return
							}
						}
					}(g)
				}
				wg.Wait()
				t.Logf("statuses %v, log error %v", statuses, s.CommitLog().Err())
				led.checkServed(t, s, false)
				inj.Clear()
				_ = s.Close()
				s2 := openStore(t, cfg)
				defer mustClose(t, s2)
				led.checkRecovered(t, s2)
			})
		}
	}
}

// Under async flush, messages acknowledged but not yet flushed when a flush
// fails are still in the running process (page cache, mapping, pool buffer,
// direct staging buffer): the commit log keeps reading them until the
// restart, which may lose them (the async promise). Consumers are served
// only what survives a crash of the process: on mmap, pwrite and uncached
// everything acknowledged (it is in the page cache); on pool and direct,
// whose failed commit left the bytes in user space, only what was
// committed before the fault — the rest is not dispatched, so no consumer
// acts on a message a kill -9 would erase. The fault is the one each path's
// flush meets first: msync (mmap), fdatasync (pwrite), the commit's pwrite
// (pool) and the tail block's pwrite (direct).
func TestFaultAsyncUnflushedStillServed(t *testing.T) {
	t.Parallel()
	ops := map[iopath.Kind]vfs.Op{iopath.Mmap: vfs.OpMsync, iopath.Pwrite: vfs.OpSync, iopath.Pool: vfs.OpWrite, iopath.Direct: vfs.OpWrite, iopath.Uncached: vfs.OpSync}
	for _, path := range iopath.Kinds() {
		t.Run("path="+string(path), func(t *testing.T) {
			t.Parallel()
			cfg, inj := faultStoreConfig(t, path, flush.Async, 5)
			cfg.CommitLog.Flush.Interval = time.Hour // only explicit flushes
			cfg.CommitLog.IO.CommitInterval = time.Hour
			s := openStore(t, cfg)
			defer func() { _ = s.Close() }()
			rng := rand.New(rand.NewPCG(21, 22))
			led := newFaultLedger()
			for i := 0; i < 8; i++ {
				if _, err := led.put(s, faultMsg(rng, i), false); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.CommitLog().Flush(); err != nil {
				t.Fatal(err)
			}
			led.markAllDurable()
			for i := 8; i < 40; i++ { // ~20 KiB acknowledged, in memory only
				if _, err := led.put(s, faultMsg(rng, i), false); err != nil {
					t.Fatal(err)
				}
			}
			op, ok := ops[path]
			if !ok {
				t.Fatalf("no fault op for write path %s", path)
			}
			inj.Add(segmentRule(cfg, op, faultfs.Always(), syscall.EIO, 0))
			if _, err := s.CommitLog().Flush(); !errors.Is(err, syscall.EIO) {
				t.Fatalf("flush with %s faults: %v", op, err)
			}
			inj.Clear()
			// The bytes are still in the process: the commit log reads every
			// acknowledged record back intact (for direct this is the
			// regression of a Flush that moved its staging buffer before the
			// write succeeded, leaving zeros).
			led.mu.Lock()
			for k, uniq := range led.acked {
				raw, _, err := s.CommitLog().ReadRecord(led.phys[k], nil)
				if err != nil {
					t.Fatalf("commit-log read of acknowledged %d/%d at %d: %v", k.q, k.off, led.phys[k], err)
				}
				led.checkRecordLocked(t, raw, k, uniq)
			}
			led.mu.Unlock()
			led.checkServed(t, s, false)
			committed := s.CommitLog().CommittedOffset()
			if path == iopath.Pool || path == iopath.Direct {
				if committed >= led.ackEnd {
					t.Fatalf("committed offset %d covers everything acknowledged (%d) although the commit failed", committed, led.ackEnd)
				}
				if n := servedAbove(s, led, committed); n > 0 {
					t.Fatalf("%d acknowledged messages above the committed offset %d were served to a consumer", n, committed)
				}
				return
			}
			if committed != led.ackEnd {
				t.Fatalf("committed offset %d, want the written end %d on a page-cache path", committed, led.ackEnd)
			}
			if lost := unservedAcked(s, led); len(lost) > 0 {
				t.Fatalf("%d acknowledged messages not served, first %v", len(lost), lost[0])
			}
			led.checkServed(t, s, true)
		})
	}
}

// servedAbove counts acknowledged messages stored at or above off that
// GetMessage serves (after a moment for dispatch to run).
func servedAbove(s *Store, l *faultLedger, off int64) int {
	time.Sleep(50 * time.Millisecond)
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for k := range l.acked {
		if l.phys[k] < off {
			continue
		}
		res, err := s.GetMessage("g", faultTopic, k.q, k.off, 1, 1<<20, nil)
		if err == nil && res.Status == Found {
			n++
		}
	}
	return n
}

// unservedAcked lists acknowledged messages GetMessage does not serve
// (within a short wait for dispatch).
func unservedAcked(s *Store, l *faultLedger) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	deadline := time.Now().Add(500 * time.Millisecond)
	for s.DispatchedOffset() < l.ackEnd && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	var out []string
	for k := range l.acked {
		res, err := s.GetMessage("g", faultTopic, k.q, k.off, 1, 1<<20, nil)
		if err != nil || res.Status != Found {
			out = append(out, fmt.Sprintf("%d/%d: %v %v", k.q, k.off, res.Status, err))
		}
	}
	return out
}

// checkLogged reads every acknowledged message straight from the commit log
// (LookMessageByOffset), whether or not it was dispatched.
func (l *faultLedger) checkLogged(t *testing.T, s *Store) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, uniq := range l.acked {
		raw, _, err := s.LookMessageByOffset(l.phys[k])
		if err != nil {
			t.Fatalf("commit-log read of acknowledged %d/%d at %d: %v", k.q, k.off, l.phys[k], err)
		}
		l.checkRecordLocked(t, raw, k, uniq)
	}
}

// forgetBelow drops acknowledged messages stored below minPhys (deleted by
// the cleaner).
func (l *faultLedger) forgetBelow(minPhys int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for k := range l.acked {
		if l.phys[k] < minPhys {
			delete(l.acked, k)
			delete(l.durable, k)
			n++
		}
	}
	return n
}

// Under async flush on the mmap and pwrite paths an acknowledged record is
// in the kernel page cache, which outlives a killed process: a SIGKILL
// loses nothing acknowledged (pool and direct keep acknowledged bytes in
// user-space buffers and may lose them; see TestCrashRecoverAsyncFlushCleanPrefix).
// Uses the crash tests' writer (TestHelperWriter) and checker;
// scripts/crashloop.sh checks the same over the network with the default
// 500 ms flush interval (-strict-async).
func TestFaultKillAsyncPageCachePaths(t *testing.T) {
	t.Parallel()
	for _, path := range []iopath.Kind{iopath.Mmap, iopath.Pwrite} {
		t.Run("path="+string(path), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cfg := crashConfig(t, dir, path, flush.Async) // the writer flushes every 10 ms at ≥ 16 KiB dirty
			seed := uint64(time.Now().UnixNano())
			rng := rand.New(rand.NewPCG(seed, 3))
			survivors := map[ackKey]string{}
			for c := 0; c < 2; c++ {
				acks, seen := runWriter(t, dir, path, flush.Async, seed+uint64(c), time.Duration(50+rng.IntN(150))*time.Millisecond)
				for k, v := range acks {
					survivors[k] = v
				}
				for k, v := range seen {
					survivors[k] = v
				}
				checkCrashRecovery(t, cfg, survivors, true)
				t.Logf("cycle %d: %d acknowledged under async, none lost", c, len(acks))
			}
		})
	}
}

package commitlog

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
)

// Fault-injection tests of the commit log's own file handling (issue 7):
// faults while opening (scan, tail repair), while rolling (end-of-segment
// blank, directory sync of a new segment), on batches and at Close. The
// store-level matrix (engine/store/fault_test.go) covers puts, reads and
// restarts over every write path × flush policy.

// faultLogConfig is a small log (64 KiB segments, group commit) over
// faultfs.
func faultLogConfig(t *testing.T, path iopath.Kind) (Config, *faultfs.Injector) {
	cfg := DefaultConfig(t.TempDir())
	cfg.Path = path
	cfg.Flush = flush.DefaultConfig(flush.Group)
	cfg.SegmentSize = 64 << 10
	pool := iopath.NewBufferPool(4, cfg.SegmentSize)
	t.Cleanup(func() { pool.Close() })
	cfg.IO.Pool = pool
	inj := faultfs.NewInjector(1)
	cfg.FS = faultfs.Wrap(vfs.Default, inj)
	return cfg, inj
}

// segRule restricts a rule to the log's segment files.
func segRule(cfg Config, op vfs.Op, when faultfs.Trigger, err error) faultfs.Rule {
	return faultfs.Rule{Op: op, PathContains: SegmentDir(cfg.Dir) + string(filepath.Separator), When: when, Err: err}
}

type appended struct {
	r Result
	m *record.Message
}

// appendN appends n random records (queue offsets 0..n-1) and returns them.
func appendN(t *testing.T, l *Log, rng *rand.Rand, n int) []appended {
	t.Helper()
	out := make([]appended, 0, n)
	for i := 0; i < n; i++ {
		m := msg(rng, i, 1500)
		r, err := l.Append(context.Background(), m, int64(i))
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		out = append(out, appended{r, m})
	}
	return out
}

// segmentDigests hashes every file in the segment directory.
func segmentDigests(t *testing.T, cfg Config) map[string][32]byte {
	t.Helper()
	dir := SegmentDir(cfg.Dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][32]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

func sameDigests(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A read error while scanning at open fails Open with the I/O error —
// never mistaken for corruption, so nothing is cut or zeroed — and a later
// open without the fault finds every record.
func TestFaultOpenReadErrorChangesNothing(t *testing.T) {
	t.Parallel()
	for _, path := range iopath.Kinds() {
		t.Run("path="+string(path), func(t *testing.T) {
			t.Parallel()
			cfg, inj := faultLogConfig(t, path)
			l := openLog(t, cfg)
			recs := appendN(t, l, rand.New(rand.NewPCG(1, 2)), 150) // ~2 segments
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			before := segmentDigests(t, cfg)
			for _, nth := range []uint64{1, 2} {
				id := inj.Add(segRule(cfg, vfs.OpRead, faultfs.OnlyNth(nth), syscall.EIO))
				_, err := OpenWith(cfg, OpenOptions{ScanFrom: 0})
				inj.Remove(id)
				if !errors.Is(err, syscall.EIO) || errors.Is(err, ErrCorruption) {
					t.Fatalf("open with read %d failing: %v, want the EIO (not corruption)", nth, err)
				}
				if !sameDigests(before, segmentDigests(t, cfg)) {
					t.Fatalf("a failed open changed the segment files")
				}
			}
			l = openLog(t, cfg)
			defer l.Close()
			if rep := l.Report(); rep.Corruption != nil || rep.ZeroedBytes != 0 {
				t.Fatalf("open after the fault: %+v", rep)
			}
			for _, a := range recs {
				checkRecord(t, l, a.r, a.m)
			}
		})
	}
}

// Garbage after the end (a torn tail) is zeroed at open; a write or sync
// failure while zeroing fails Open with the I/O error, and a later open
// repairs the tail and keeps every record before it.
func TestFaultOpenTailRepairError(t *testing.T) {
	t.Parallel()
	cfg, inj := faultLogConfig(t, iopath.Pwrite)
	l := openLog(t, cfg)
	recs := appendN(t, l, rand.New(rand.NewPCG(3, 4)), 20)
	end := l.MaxOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(SegmentDir(cfg.Dir), "00000000000000000000")
	f, err := os.OpenFile(seg, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	garbage := make([]byte, 3000)
	for i := range garbage {
		garbage[i] = byte(i*7 + 1)
	}
	if _, err := f.WriteAt(garbage, end); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync} {
		id := inj.Add(segRule(cfg, op, faultfs.Always(), syscall.EIO))
		_, err := Open(cfg)
		inj.Remove(id)
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("open with %s failing during tail repair: %v", op, err)
		}
	}
	l = openLog(t, cfg)
	defer l.Close()
	// (The fdatasync-failing open had already zeroed the garbage in the page
	// cache, so this open may find a clean tail.)
	if rep := l.Report(); rep.End != end {
		t.Fatalf("repair: end %d, want %d", rep.End, end)
	}
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range b[end : end+int64(len(garbage))] {
		if c != 0 {
			t.Fatalf("byte %d after the end is %#x after the repair", i, c)
		}
	}
	for _, a := range recs {
		checkRecord(t, l, a.r, a.m)
	}
	// Appends continue at the recovered end.
	r, err := l.Append(context.Background(), msg(rand.New(rand.NewPCG(5, 6)), 99, 100), 20)
	if err != nil || r.PhysOffset != end {
		t.Fatalf("append after repair: offset %d (want %d), %v", r.PhysOffset, end, err)
	}
}

// The end-of-segment blank is written through the write path like any
// record: on pwrite a failed blank write makes the append fail with
// UNKNOWN_ERROR and the log unwritable (sticky); the reopened log ends at
// the last record and rolls normally.
func TestFaultBlankWriteError(t *testing.T) {
	t.Parallel()
	cfg, inj := faultLogConfig(t, iopath.Pwrite)
	l := openLog(t, cfg)
	rng := rand.New(rand.NewPCG(7, 8))
	var recs []appended
	var i int
	for ; ; i++ {
		m := msg(rng, i, 1500)
		size, _ := m.Size()
		if l.MaxOffset()+int64(size)+record.BlankMinLen+1600 > cfg.SegmentSize {
			break // the next big record will not fit
		}
		r, err := l.Append(context.Background(), m, int64(i))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, appended{r, m})
	}
	end := l.MaxOffset()
	inj.Add(segRule(cfg, vfs.OpWrite, faultfs.Always(), syscall.EIO))
	big := msg(rng, i, 10)
	big.Body = make([]byte, 3000)
	_, err := l.Append(context.Background(), big, int64(i))
	if StatusOf(err) != ServiceNotAvailable || !errors.Is(err, syscall.EIO) {
		t.Fatalf("append needing a blank with writes failing: %v", err)
	}
	if l.MaxOffset() != end || len(l.Segments()) != 1 {
		t.Fatalf("failed blank moved the end to %d (was %d) or rolled (%d segments)", l.MaxOffset(), end, len(l.Segments()))
	}
	inj.Clear()
	if _, err := l.Append(context.Background(), big, int64(i)); StatusOf(err) != ServiceNotAvailable || !errors.Is(err, syscall.EIO) {
		t.Fatalf("append after the failed blank: %v, want sticky SERVICE_NOT_AVAILABLE", err)
	}
	if err := l.Close(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("close after a sticky error: %v, want the EIO", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	l = openLog(t, cfg)
	defer l.Close()
	if l.MaxOffset() != end {
		t.Fatalf("reopened end %d, want %d", l.MaxOffset(), end)
	}
	for _, a := range recs {
		checkRecord(t, l, a.r, a.m)
	}
	r, err := l.Append(context.Background(), big, int64(i))
	if err != nil || r.PhysOffset != cfg.SegmentSize {
		t.Fatalf("append after reopen: at %d (want the next segment %d): %v", r.PhysOffset, cfg.SegmentSize, err)
	}
}

// Failing to fsync the directory after creating a segment fails the roll
// with CREATE_MAPPED_FILE_FAILED; it is not sticky, and the retried roll
// reuses the preallocated file.
func TestFaultSegmentDirSync(t *testing.T) {
	t.Parallel()
	for _, path := range iopath.Kinds() {
		t.Run("path="+string(path), func(t *testing.T) {
			t.Parallel()
			cfg, inj := faultLogConfig(t, path)
			cfg.PreallocateNext = false
			l := openLog(t, cfg)
			rng := rand.New(rand.NewPCG(9, 10))
			id := inj.Add(faultfs.Rule{Op: vfs.OpSyncDir, PathContains: SegmentDir(cfg.Dir), Err: syscall.EIO})
			_, err := l.Append(context.Background(), msg(rng, 0, 100), 0)
			if StatusOf(err) != CreateMappedFileFailed || !errors.Is(err, syscall.EIO) {
				t.Fatalf("first append with the directory sync failing: %v", err)
			}
			inj.Remove(id)
			recs := appendN(t, l, rng, 100)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openLog(t, cfg)
			defer l.Close()
			for _, a := range recs {
				checkRecord(t, l, a.r, a.m)
			}
		})
	}
}

// A batch is all or nothing under a write fault: nothing is stored, the end
// does not move, no result is returned.
func TestFaultBatchStoresNothing(t *testing.T) {
	t.Parallel()
	cfg, inj := faultLogConfig(t, iopath.Pwrite)
	l := openLog(t, cfg)
	defer l.Close()
	rng := rand.New(rand.NewPCG(11, 12))
	appendN(t, l, rng, 5)
	end := l.MaxOffset()
	inj.Add(segRule(cfg, vfs.OpWrite, faultfs.Always(), syscall.ENOSPC))
	batch := []*record.Message{msg(rng, 0, 100), msg(rng, 0, 100), msg(rng, 0, 100)}
	for _, m := range batch {
		m.Topic, m.QueueID = "B", 0
	}
	rs, err := l.AppendBatch(context.Background(), batch, 0, nil)
	if len(rs) != 0 || StatusOf(err) != ServiceNotAvailable || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("batch under ENOSPC: %d results, %v", len(rs), err)
	}
	if l.MaxOffset() != end {
		t.Fatalf("end moved from %d to %d", end, l.MaxOffset())
	}
}

// A flush slower than SyncFlushTimeout answers FLUSH_DISK_TIMEOUT with a
// complete result: the record is stored and readable, and durable once a
// later flush covers it.
func TestFaultSlowGroupCommit(t *testing.T) {
	t.Parallel()
	cfg, inj := faultLogConfig(t, iopath.Pwrite)
	cfg.Flush.SyncFlushTimeout = 30 * time.Millisecond
	l := openLog(t, cfg)
	defer l.Close()
	rng := rand.New(rand.NewPCG(13, 14))
	id := inj.Add(faultfs.Rule{Op: vfs.OpSync, PathContains: SegmentDir(cfg.Dir), Delay: 200 * time.Millisecond})
	m := msg(rng, 0, 100)
	r, err := l.Append(context.Background(), m, 0)
	if StatusOf(err) != FlushDiskTimeout || r.Status != FlushDiskTimeout || !errors.Is(err, flush.ErrTimeout) {
		t.Fatalf("append behind a slow flush: %v (%v)", err, r.Status)
	}
	checkRecord(t, l, r, m)
	inj.Remove(id)
	if pos, err := l.Flush(); err != nil || pos < r.PhysOffset+int64(r.Size) {
		t.Fatalf("flush after the slow one: %d %v", pos, err)
	}
}

// knownFlushedPastWrote describes the regression
// TestFaultFlushedNeverPastMaxOffset guards against (fixed: flushAll clamps).
const knownFlushedPastWrote = "regression (engine/commitlog/log.go flushAll): the flushed offset is taken " +
	"from the appender's position, which an append in progress (app.Append returned, l.wrote not yet " +
	"stored; in particular writeBlank's header and padding before roll moves l.wrote) has already " +
	"advanced, so FlushedOffset() can exceed MaxOffset(). The store's dispatcher reads [from, " +
	"FlushedOffset()) under sync/group flush, ReadAt refuses bytes past MaxOffset, and the dispatcher " +
	"logs 'dispatch stalled ... beyond max offset' and retries (seen in crashloop.sh group cycles at " +
	"segment rolls). Fix: clamp the flushed offset to l.wrote in flushAll (or have the store use " +
	"min(FlushedOffset, MaxOffset))"

// The flushed offset never runs ahead of the written end (MaxOffset), also
// while an append that rolls the segment is writing its end-of-segment
// blank. Slow pwrites widen that window; a second goroutine flushes and
// compares.
func TestFaultFlushedNeverPastMaxOffset(t *testing.T) {
	t.Parallel()
	cfg, inj := faultLogConfig(t, iopath.Pwrite)
	l := openLog(t, cfg)
	defer l.Close()
	rng := rand.New(rand.NewPCG(15, 16))
	i := 0
	for ; l.MaxOffset() < cfg.SegmentSize-4000; i++ {
		if _, err := l.Append(context.Background(), msg(rng, i, 1000), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	inj.Add(faultfs.Rule{Op: vfs.OpWrite, PathContains: SegmentDir(cfg.Dir), Delay: 30 * time.Millisecond})
	stop := make(chan struct{})
	violation := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := l.Flush(); err != nil {
				return
			}
			if f, w := l.FlushedOffset(), l.MaxOffset(); f > w {
				select {
				case violation <- fmt.Sprintf("FlushedOffset %d > MaxOffset %d", f, w):
				default:
				}
			}
		}
	}()
	for j := 0; j < 8; j++ { // crosses the end of the first segment
		m := msg(rng, i, 10)
		m.Body = make([]byte, 1500)
		if _, err := l.Append(context.Background(), m, int64(i)); err != nil {
			t.Fatal(err)
		}
		i++
	}
	close(stop)
	<-done
	select {
	case v := <-violation:
		t.Fatalf("%s. Observed: %s", knownFlushedPastWrote, v)
	default:
	}
	if l.FlushedOffset() > l.MaxOffset() {
		t.Fatalf("FlushedOffset %d > MaxOffset %d", l.FlushedOffset(), l.MaxOffset())
	}
}

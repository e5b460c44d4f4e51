package commitlog

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/segment"
	"github.com/brokerlab/brokerlab/engine/vfs"
)

// baselineFlushes are the flush cadences the raw baseline implements (see the
// file comment of bench_test.go); each is the ceiling of the commit-log
// policy of the same name.
var baselineFlushes = []flush.Kind{flush.Sync, flush.Async, flush.Group}

// baselineLog is the fair raw baseline: the least a commit log must do to store
// an encoded record through a write path and make it durable with a given
// cadence. It writes the log's on-disk format (records, end-of-segment
// blank and padding) into a segment.Queue configured as the log configures
// it, so a commit log opens what it wrote.
//
// Concurrency: append may be called from many goroutines; mu serializes the
// appends (the log's append lock); flushMu serializes flushes, which run
// concurrently with at most one append (the iopath contract).
type baselineLog struct {
	q     *segment.Queue
	kind  flush.Kind
	meter *flushMeter

	mu    sync.Mutex // the append mutex
	qoff  int64      // next QUEUEOFFSET; guarded by mu
	wrote atomic.Int64

	flushMu sync.Mutex // serializes flushes
	flushed atomic.Int64
	err     atomic.Pointer[error] // sticky write/flush error

	// group: at most one flush runs; writers that arrive meanwhile wait on
	// cond and one of them runs the next flush for all of them.
	gmu      sync.Mutex
	cond     *sync.Cond
	flushing bool // guarded by gmu

	// async: RocketMQ's FlushRealTimeService cadence.
	interval, thorough time.Duration
	leastBytes         int64
	stop, done         chan struct{}
}

// baselineZeros backs the padding after an end-of-segment blank.
var baselineZeros = make([]byte, 1<<20)

// errBaselineClosed is returned by append after close.
var errBaselineClosed = errors.New("commitlog bench: raw log closed")

// openBaseline opens a raw log over a new segment queue in dir. Async's loop uses
// RocketMQ's defaults (flush.DefaultConfig).
func openBaseline(dir string, path iopath.Kind, kind flush.Kind, segSize int64, io iopath.Config, meter *flushMeter) (*baselineLog, error) {
	q, err := segment.Open(segment.Config{FS: vfs.Default, Dir: dir, Size: segSize, Path: path, IO: io, PreallocateNext: true}, nil)
	if err != nil {
		return nil, err
	}
	d := flush.DefaultConfig(flush.Async)
	r := &baselineLog{q: q, kind: kind, meter: meter, interval: d.Interval, thorough: d.ThoroughInterval,
		leastBytes: int64(d.LeastPages) * flush.PageSize}
	r.cond = sync.NewCond(&r.gmu)
	if kind == flush.Async {
		r.startAsync()
	}
	return r, nil
}

// startAsync starts the background flush loop: every interval, flush if at
// least leastBytes are dirty, or anything dirty once thorough has passed
// since the last flush that covered everything.
func (r *baselineLog) startAsync() {
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.done)
		t := time.NewTicker(r.interval)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
			}
			dirty := r.wrote.Load() - r.flushed.Load()
			full := time.Since(last) >= r.thorough
			if dirty <= 0 || (dirty < r.leastBytes && !full) {
				continue
			}
			if _, err := r.flush(); err != nil {
				return // sticky: the next append reports it
			}
			if full {
				last = time.Now()
			}
		}
	}()
}

func (r *baselineLog) getErr() error {
	if p := r.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (r *baselineLog) setErr(err error) error {
	r.err.CompareAndSwap(nil, &err)
	return r.getErr()
}

// append stores the encoded record rec (its QUEUEOFFSET, PHYSICALOFFSET and
// STORETIMESTAMP are patched in place) and returns when the cadence's
// durability promise holds. It returns the log end after rec.
func (r *baselineLog) append(rec []byte) (int64, error) {
	r.mu.Lock()
	end, err := r.appendLocked(rec)
	if err == nil && r.kind == flush.Sync {
		_, err = r.flush()
	}
	r.mu.Unlock()
	if err == nil && r.kind == flush.Group {
		err = r.groupCommit(end)
	}
	return end, err
}

// appendLocked writes rec at the end, rolling (after an end-of-segment
// blank) when rec and a blank would not fit. REQUIRES: mu held.
func (r *baselineLog) appendLocked(rec []byte) (int64, error) {
	if err := r.getErr(); err != nil {
		return 0, err
	}
	seg := r.q.Last()
	var err error
	if seg == nil || seg.Full() {
		if seg, err = r.roll(seg); err != nil {
			return 0, err
		}
	}
	app := seg.Appender()
	if rem := app.Size() - app.WrotePos(); int64(len(rec))+record.BlankMinLen > rem {
		if err := r.writeBlank(app, rem); err != nil {
			return 0, err
		}
		if seg, err = r.roll(seg); err != nil {
			return 0, err
		}
		app = seg.Appender()
	}
	phys := seg.Start() + app.WrotePos()
	record.Patch(rec, r.qoff, phys, time.Now().UnixMilli())
	if _, err := app.Append(rec); err != nil {
		return 0, r.setErr(fmt.Errorf("raw append: %w", err))
	}
	r.qoff++
	end := phys + int64(len(rec))
	r.wrote.Store(end)
	return end, nil
}

// roll starts the segment after prev (or the first). REQUIRES: mu held.
func (r *baselineLog) roll(prev *segment.Segment) (*segment.Segment, error) {
	var start int64
	if prev != nil {
		start = prev.End()
	}
	seg, err := r.q.Roll(start)
	if err != nil {
		return nil, r.setErr(fmt.Errorf("raw roll: %w", err))
	}
	r.wrote.Store(start)
	return seg, nil
}

// writeBlank fills the rest of the segment with the blank record and
// zeros, as the log does. REQUIRES: mu held.
func (r *baselineLog) writeBlank(app iopath.Appender, rem int64) error {
	var hdr [record.BlankMinLen]byte
	record.PutBlank(hdr[:], int32(rem))
	if _, err := app.Append(hdr[:]); err != nil {
		return r.setErr(fmt.Errorf("raw blank: %w", err))
	}
	for left := rem - record.BlankMinLen; left > 0; {
		n := min(left, int64(len(baselineZeros)))
		if _, err := app.Append(baselineZeros[:n]); err != nil {
			return r.setErr(fmt.Errorf("raw padding: %w", err))
		}
		left -= n
	}
	return nil
}

// flush makes everything written so far durable: every segment with
// unflushed bytes, oldest first. Each flush that ran is recorded in meter.
func (r *baselineLog) flush() (int64, error) {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	if err := r.getErr(); err != nil {
		return r.flushed.Load(), err
	}
	t0 := time.Now()
	flushed := r.flushed.Load()
	for _, s := range r.q.Segments() {
		if s.End() <= flushed {
			continue
		}
		app := s.Appender()
		fp := app.FlushedPos()
		if fp < app.WrotePos() {
			var err error
			if fp, err = app.Flush(); err != nil {
				return flushed, r.setErr(fmt.Errorf("raw flush %s: %w", s.Path(), err))
			}
		}
		flushed = s.Start() + fp
		if !s.Full() {
			break
		}
	}
	if r.meter != nil {
		r.meter.record(time.Since(t0))
	}
	flushed = min(flushed, r.wrote.Load())
	if flushed > r.flushed.Load() {
		r.flushed.Store(flushed)
	}
	return r.flushed.Load(), nil
}

// groupCommit returns once end is flushed: the caller flushes itself when
// no flush is running, otherwise it waits for the running one and, if that
// did not cover it, for (or as) the next.
func (r *baselineLog) groupCommit(end int64) error {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	for r.flushed.Load() < end {
		if err := r.getErr(); err != nil {
			return err
		}
		if r.flushing {
			r.cond.Wait()
			continue
		}
		r.flushing = true
		r.gmu.Unlock()
		_, err := r.flush()
		r.gmu.Lock()
		r.flushing = false
		r.cond.Broadcast()
		if err != nil {
			return err
		}
	}
	return nil
}

// close stops the async loop and closes the segments (flushing nothing).
func (r *baselineLog) close() error {
	if r.stop != nil {
		close(r.stop)
		<-r.done
		r.stop = nil
	}
	r.setErr(errBaselineClosed)
	return r.q.Close()
}

// BenchmarkRawPath is the fair raw baseline (see the file comment of
// bench_test.go): compare BenchmarkAppend/path=X/flush=Y/size=S/conc=C with
// BenchmarkRawPath/path=X/flush=Y/size=S/conc=C.
func BenchmarkRawPath(b *testing.B) {
	for _, path := range iopath.Kinds() {
		for _, pol := range baselineFlushes {
			for _, c := range benchCells() {
				name := fmt.Sprintf("path=%s/flush=%s/%s", path, pol, c)
				b.Run(name, func(b *testing.B) { benchRaw(b, path, pol, c.size, c.conc) })
			}
		}
	}
}

func benchRaw(b *testing.B, path iopath.Kind, pol flush.Kind, size, conc int) {
	var meter flushMeter
	r, err := openBaseline(SegmentDir(b.TempDir()), path, pol, *benchSeg, benchIO(b, path, *benchSeg), &meter)
	if err != nil {
		if isUnsupported(err) {
			b.Skipf("path %s unsupported here: %v", path, err)
		}
		b.Fatal(err)
	}
	b.Cleanup(func() { r.close() })
	body := benchBody(size)
	host := DefaultConfig("").StoreHost // what the log stamps into BenchmarkAppend's records
	b.SetBytes(int64(size))
	b.ReportAllocs()
	io0 := segmentsIO(r.q.Segments())
	meter.reset()
	var owed func() error
	var cycles int64
	if !waitsForFlush(pol) {
		owed = func() error {
			cycles = meter.n.Load() // the loop's flushes, before the owed one below is recorded
			_, err := r.flush()
			return err
		}
	}
	owedTook := runConc(b, conc, func() func() error {
		buf := make([]byte, 0, size+1024) // the record: header, topic and body
		m := &record.Message{Topic: "BenchmarkTest", Body: body, BornHost: born, StoreHost: host, BornTimestamp: 1}
		return func() error {
			rec, err := record.AppendEncode(buf[:0], m, record.BodyCRC(m.Body), 0, 0, 0)
			if err != nil {
				return err
			}
			buf = rec
			_, err = r.append(rec)
			return err
		}
	}, owed)
	if owed != nil {
		reportOwed(b, b.N, size, cycles, owedTook)
	}
	meter.report(b, pol, b.N, conc)
	reportStageWaits(b, path, io0, segmentsIO(r.q.Segments()))
}

// TestRawBaseline checks that the raw baseline does what BenchmarkRawPath
// claims, over every path × raw cadence: concurrent appends across segment
// rolls produce a log the commit log opens and reads back record by record
// (same format, queue offsets 0..n-1 in order, correct physical offsets);
// sync and group appends return only once flushed; the async loop flushes
// on its own.
func TestRawBaseline(t *testing.T) {
	const (
		segSize = 64 << 10
		conc    = 4
		per     = 60
		size    = 1000
	)
	for _, path := range iopath.Kinds() {
		for _, pol := range baselineFlushes {
			t.Run(fmt.Sprintf("path=%s/flush=%s", path, pol), func(t *testing.T) {
				dir := t.TempDir()
				io := benchIO(t, path, segSize)
				var meter flushMeter
				r, err := openBaseline(SegmentDir(dir), path, pol, segSize, io, &meter)
				if isUnsupported(err) {
					t.Skipf("path %s unsupported here: %v", path, err)
				}
				if err != nil {
					t.Fatal(err)
				}
				if pol == flush.Async {
					// Restart the loop with a short interval so the test does
					// not wait 500 ms; the cadence logic is the same.
					close(r.stop)
					<-r.done
					r.interval = 5 * time.Millisecond
					r.startAsync()
				}
				body := benchBody(size)
				host := DefaultConfig("").StoreHost
				var wg sync.WaitGroup
				errs := make(chan error, conc)
				for g := 0; g < conc; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var buf []byte
						for i := 0; i < per; i++ {
							m := record.Message{Topic: "BenchmarkTest", Body: body, BornHost: born, StoreHost: host, BornTimestamp: 1}
							rec, err := record.AppendEncode(buf[:0], &m, record.BodyCRC(m.Body), 0, 0, 0)
							if err != nil {
								errs <- err
								return
							}
							buf = rec
							end, err := r.append(rec)
							if err != nil {
								errs <- err
								return
							}
							if pol != flush.Async && r.flushed.Load() < end {
								errs <- fmt.Errorf("%s append returned with %d flushed < end %d", pol, r.flushed.Load(), end)
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if isUnsupported(err) { // refused at the first segment
						t.Skipf("path %s unsupported here: %v", path, err)
					}
					t.Fatal(err)
				}
				end := r.wrote.Load()
				if pol == flush.Async {
					deadline := time.Now().Add(10 * time.Second)
					for r.flushed.Load() < end-r.leastBytes && time.Now().Before(deadline) {
						time.Sleep(5 * time.Millisecond)
					}
					if got := r.flushed.Load(); got < end-r.leastBytes {
						t.Fatalf("async loop flushed %d of %d", got, end)
					}
				}
				if pol != flush.Async && meter.n.Load() == 0 {
					t.Fatal("no flush recorded")
				}
				if _, err := r.flush(); err != nil {
					t.Fatal(err)
				}
				if err := r.close(); err != nil {
					t.Fatal(err)
				}

				cfg := DefaultConfig(dir)
				cfg.Path = path
				cfg.SegmentSize = segSize
				cfg.IO = io
				l, err := Open(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				if l.MaxOffset() != end {
					t.Fatalf("log end %d, raw wrote %d", l.MaxOffset(), end)
				}
				if len(l.Segments()) < 2 {
					t.Fatalf("%d segments: the test did not roll", len(l.Segments()))
				}
				var buf []byte
				n := int64(0)
				for off := int64(0); off < end; {
					var rec record.Record
					buf, rec, err = l.ReadRecord(off, buf)
					if errors.Is(err, record.ErrBlank) {
						off = l.RollNextFile(off)
						continue
					}
					if err != nil {
						t.Fatalf("record %d at %d: %v", n, off, err)
					}
					if rec.QueueOffset != n || rec.PhysicalOffset != off || string(rec.Topic) != "BenchmarkTest" ||
						len(rec.Body) != size || rec.StoreHost != host || rec.BodyCRC != record.BodyCRC(body) {
						t.Fatalf("record %d at %d: queue offset %d, physical offset %d, topic %q, %d-byte body",
							n, off, rec.QueueOffset, rec.PhysicalOffset, rec.Topic, len(rec.Body))
					}
					n++
					off += int64(rec.TotalSize)
				}
				if n != conc*per {
					t.Fatalf("read %d records, appended %d", n, conc*per)
				}
			})
		}
	}
}

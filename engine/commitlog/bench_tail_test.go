package commitlog

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/segment"
)

// Tail reading as the store's dispatcher does it (engine/store/dispatch.go):
// every tailInterval, or at once after a productive round, read
// [from, CommittedOffset()) in chunks of at most tailChunk bytes within one
// segment and walk the records.
const (
	tailInterval = time.Millisecond // store.DefaultConfig's ReputInterval
	tailChunk    = 1 << 20          // the dispatcher's chunk
)

// tailReader reads the log back behind its appenders. from and the
// counters are written only by its goroutine.
type tailReader struct {
	l    *Log
	buf  []byte
	from atomic.Int64
	recs atomic.Int64 // records read back
	err  atomic.Pointer[error]
	stop chan struct{}
	done chan struct{}
}

func startTail(l *Log) *tailReader {
	t := &tailReader{l: l, buf: make([]byte, tailChunk), stop: make(chan struct{}), done: make(chan struct{})}
	go t.loop()
	return t
}

func (t *tailReader) loop() {
	defer close(t.done)
	tick := time.NewTicker(tailInterval)
	defer tick.Stop()
	for {
		n, err := t.round()
		if err != nil {
			t.err.CompareAndSwap(nil, &err)
			return
		}
		if n > 0 {
			continue
		}
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
	}
}

// round reads what is readable now and returns how many records it read.
func (t *tailReader) round() (int64, error) {
	end := t.l.CommittedOffset()
	seg := t.l.SegmentSize()
	var n int64
	for from := t.from.Load(); from < end; from = t.from.Load() {
		chunk := min(end, from-from%seg+seg, from+tailChunk) - from
		if chunk < record.BlankMinLen {
			return n, nil // a fragment of a record: wait for the rest
		}
		buf := t.buf[:chunk]
		if _, err := t.l.ReadAt(buf, from); err != nil {
			return n, fmt.Errorf("tail read at %d: %w", from, err)
		}
		p := int64(0)
		for p+record.BlankMinLen <= chunk {
			size, magic, err := record.PeekSize(buf[p:])
			if err != nil {
				return n, fmt.Errorf("tail at %d: %w", from+p, err)
			}
			if magic == record.MagicBlank {
				t.from.Store(t.l.RollNextFile(from + p))
				break
			}
			if p+int64(size) > chunk {
				break
			}
			p += int64(size)
			n++
			t.recs.Add(1)
			t.from.Store(from + p)
		}
		if t.from.Load() == from {
			return n, nil // the next record is not all readable yet
		}
	}
	return n, nil
}

// catchUp waits (bounded) until the reader has passed end, then stops it.
func (t *tailReader) catchUp(end int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for t.from.Load() < end && t.err.Load() == nil && time.Now().Before(deadline) {
		time.Sleep(tailInterval)
	}
	close(t.stop)
	<-t.done
	if p := t.err.Load(); p != nil {
		return *p
	}
	if got := t.from.Load(); got < end {
		return fmt.Errorf("tail reader at %d, not at %d after %v", got, end, limit)
	}
	return nil
}

// tailCells are the rows of BenchmarkAppendTail: a small record with one
// producer, and the P3 cell.
var tailCells = []benchCell{{1024, 1}, {65536, 4}}

// BenchmarkAppendTail is BenchmarkAppend on the direct path (flush=async)
// with a reader tailing the log as the store's dispatcher does, to show
// where the read-back of fresh data is served from. Beyond BenchmarkAppend's
// metrics it reports, per append, the direct appender's read counters:
// dev-read-B/op (bytes of O_DIRECT preads: 0 in steady state when fresh
// data comes from the staging buffers or the ring of recently written
// blocks), staging-hits/op, ring-hits/op and cache-hits/op, and
// tail-recs/op, the share of the appended records read back: after the
// timed appends the reader catches up (untimed) to the committed offset,
// which on the direct path excludes what still sits in a staging buffer.
func BenchmarkAppendTail(b *testing.B) {
	for _, c := range tailCells {
		b.Run(fmt.Sprintf("path=%s/flush=%s/%s", iopath.Direct, flush.Async, c), func(b *testing.B) {
			benchTail(b, iopath.Direct, flush.Async, c.size, c.conc)
		})
	}
}

func benchTail(b *testing.B, path iopath.Kind, pol flush.Kind, size, conc int) {
	l := openBenchLog(b, path, pol, nil)
	body := benchBody(size)
	var qoff atomic.Int64
	b.SetBytes(int64(size))
	b.ReportAllocs()
	io0 := logIO(l)
	tail := startTail(l)
	runConc(b, conc, func() func() error {
		return func() error {
			m := record.Message{Topic: "BenchmarkTest", QueueID: 0, Body: body, BornHost: born, BornTimestamp: 1}
			_, err := l.Append(context.Background(), &m, qoff.Add(1))
			return err
		}
	}, func() error { // the flush an async row owes, inside the timer
		_, err := l.Flush()
		return err
	})
	if err := tail.catchUp(l.CommittedOffset(), 30*time.Second); err != nil {
		b.Fatal(err)
	}
	after := logIO(l)
	io := subIO(after, io0)
	n := float64(b.N)
	b.ReportMetric(float64(tail.recs.Load())/n, "tail-recs/op")
	b.ReportMetric(float64(io.DeviceReadBytes)/n, "dev-read-B/op")
	b.ReportMetric(float64(io.StagingHits)/n, "staging-hits/op")
	b.ReportMetric(float64(io.RingHits)/n, "ring-hits/op")
	b.ReportMetric(float64(io.CacheHits)/n, "cache-hits/op")
	reportStageWaits(b, path, io0, after)
}

// logIO sums the I/O counters of the log's segments.
func logIO(l *Log) iopath.IOStats { return segmentsIO(l.Segments()) }

// segmentsIO sums the read and back-pressure counters of segments
// (segments are never removed during a benchmark, so differences of sums
// are the run's I/O).
func segmentsIO(segs []*segment.Segment) iopath.IOStats {
	var sum iopath.IOStats
	for _, s := range segs {
		if st, ok := s.Appender().(iopath.Stats); ok {
			x := st.IOStats()
			sum.DeviceReads += x.DeviceReads
			sum.DeviceReadBytes += x.DeviceReadBytes
			sum.StagingHits += x.StagingHits
			sum.RingHits += x.RingHits
			sum.CacheHits += x.CacheHits
			sum.StageWaits += x.StageWaits
		}
	}
	return sum
}

// subIO returns the counters of a minus b.
func subIO(a, b iopath.IOStats) iopath.IOStats {
	return iopath.IOStats{
		DeviceReads:     a.DeviceReads - b.DeviceReads,
		DeviceReadBytes: a.DeviceReadBytes - b.DeviceReadBytes,
		StagingHits:     a.StagingHits - b.StagingHits,
		RingHits:        a.RingHits - b.RingHits,
		CacheHits:       a.CacheHits - b.CacheHits,
		StageWaits:      a.StageWaits - b.StageWaits,
	}
}

// reportStageWaits reports, for the direct path, stage-waits/op: appends
// that found every staging buffer in flight and waited for the device.
func reportStageWaits(b *testing.B, path iopath.Kind, before, after iopath.IOStats) {
	if path == iopath.Direct {
		b.ReportMetric(float64(after.StageWaits-before.StageWaits)/float64(b.N), "stage-waits/op")
	}
}

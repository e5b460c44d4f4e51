package commitlog

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/brokerlab/brokerlab/engine/record"
)

// independentCells are BenchmarkIndependent's rows: one producer, every
// size of the matrix.
func independentCells() []benchCell {
	var cs []benchCell
	for _, c := range benchCells() {
		if c.conc == 1 {
			cs = append(cs, c)
		}
	}
	return cs
}

// independentLog is a durable log that shares no engine code: records are
// encoded once before the run, each append is one unix.Pwrite of them at
// the end of a file preallocated (fallocate) for the whole run, and a
// goroutine calls fdatasync every interval when anything was written since
// the last one (RocketMQ's async cadence without its 4-page threshold).
// Nothing the timed loop calls is in engine/: no record encoding or
// patching, no segment queue, no iopath appender, no rolls.
//
// Concurrency: append is called from one goroutine at a time (the
// benchmark runs it at conc=1); sync may run concurrently with it
// (fdatasync and pwrite on one descriptor are safe together).
type independentLog struct {
	f       *os.File
	fd      int
	off     atomic.Int64 // end of what has been written
	synced  atomic.Int64 // end of what the last fdatasync covered
	syncs   atomic.Int64 // fdatasyncs by the loop
	syncMu  sync.Mutex   // one fdatasync at a time
	err     atomic.Pointer[error]
	stop    chan struct{}
	done    chan struct{}
	stopped sync.Once
}

// openIndependent creates dir/independent.log preallocated to size bytes
// and starts the fdatasync loop.
func openIndependent(dir string, size int64, interval time.Duration) (*independentLog, error) {
	f, err := os.OpenFile(filepath.Join(dir, "independent.log"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		f.Close()
		return nil, fmt.Errorf("independent: fallocate %d: %w", size, err)
	}
	l := &independentLog{f: f, fd: int(f.Fd()), stop: make(chan struct{}), done: make(chan struct{})}
	go l.loop(interval)
	return l, nil
}

func (l *independentLog) loop(interval time.Duration) {
	defer close(l.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if l.off.Load() > l.synced.Load() {
			if l.sync() != nil {
				return
			}
			l.syncs.Add(1)
		}
	}
}

// append writes rec at the end.
func (l *independentLog) append(rec []byte) error {
	if p := l.err.Load(); p != nil {
		return *p
	}
	off := l.off.Load()
	if _, err := unix.Pwrite(l.fd, rec, off); err != nil {
		return l.fail(fmt.Errorf("independent: pwrite at %d: %w", off, err))
	}
	l.off.Store(off + int64(len(rec)))
	return nil
}

// fail records err as the log's sticky error and returns it (a function of
// its own, so append's err does not escape and allocate on every call).
func (l *independentLog) fail(err error) error {
	l.err.CompareAndSwap(nil, &err)
	return err
}

// sync makes everything written so far durable.
func (l *independentLog) sync() error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	end := l.off.Load()
	if err := unix.Fdatasync(l.fd); err != nil {
		return l.fail(fmt.Errorf("independent: fdatasync: %w", err))
	}
	l.synced.Store(end)
	return nil
}

// close stops the loop and closes the file (syncing nothing).
func (l *independentLog) close() error {
	l.stopped.Do(func() { close(l.stop) })
	<-l.done
	return l.f.Close()
}

// BenchmarkIndependent is the baseline that shares no engine code (issue
// 32): compare BenchmarkAppend/path=X/flush=async/size=S/conc=1 with
// BenchmarkIndependent/path=pwrite/flush=async/size=S/conc=1. Its record
// is BenchmarkRawPath's, encoded once before the timer with package record
// so the bytes written are those the log writes; the timed loop is only
// pwrite and atomics, and the row ends with the fdatasync it owes inside
// the timer, as every async row does.
func BenchmarkIndependent(b *testing.B) {
	for _, c := range independentCells() {
		b.Run(fmt.Sprintf("path=pwrite/flush=async/%s", c), func(b *testing.B) { benchIndependent(b, c.size) })
	}
}

func benchIndependent(b *testing.B, size int) {
	body := benchBody(size)
	m := &record.Message{Topic: "BenchmarkTest", Body: body, BornHost: born, StoreHost: DefaultConfig("").StoreHost, BornTimestamp: 1}
	rec, err := record.AppendEncode(nil, m, record.BodyCRC(body), 0, 0, time.Now().UnixMilli())
	if err != nil {
		b.Fatal(err)
	}
	l, err := openIndependent(b.TempDir(), int64(b.N)*int64(len(rec)), asyncInterval)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.close() })
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var cycles int64
	owedTook := runConc(b, 1, func() func() error {
		return func() error { return l.append(rec) }
	}, func() error {
		cycles = l.syncs.Load()
		return l.sync()
	})
	reportOwed(b, b.N, size, cycles, owedTook)
}

// TestIndependentLog checks the independent baseline: appends land back to
// back in its file, the loop syncs on its own, and sync covers everything.
func TestIndependentLog(t *testing.T) {
	rec := []byte("0123456789abcdef")
	const n = 64
	l, err := openIndependent(t.TempDir(), n*int64(len(rec)), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	for i := 0; i < n; i++ {
		if err := l.append(rec); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for l.syncs.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if l.syncs.Load() == 0 {
		t.Fatal("the loop never synced")
	}
	if err := l.sync(); err != nil {
		t.Fatal(err)
	}
	if got := l.synced.Load(); got != n*int64(len(rec)) {
		t.Fatalf("synced %d, wrote %d", got, n*len(rec))
	}
	got, err := os.ReadFile(l.f.Name())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if string(got[i*len(rec):(i+1)*len(rec)]) != string(rec) {
			t.Fatalf("record %d is %q", i, got[i*len(rec):(i+1)*len(rec)])
		}
	}
}

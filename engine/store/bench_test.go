package store

// Benchmarks of the message store.
//
//	go test -run '^$' -bench 'BenchmarkGet' -count 10 -timeout 0 ./engine/store | tee get.txt
//	benchstat -col /path get.txt
//	benchstat -col /data -row /size -filter '/path:mmap' get.txt
//	go test -run '^$' -bench 'BenchmarkDispatch|BenchmarkRecover' -count 10 -timeout 0 ./engine/store | tee store.txt
//	benchstat -col /path -row /size store.txt
//	benchstat -row /seg@num store.txt
//
// BenchmarkGet: one op is one GetMessage pull of up to 32 messages (256 KiB)
// from a queue holding 16 MiB of records; MB/s counts record bytes served;
// p50-ns/p99-ns/p999-ns are per-pull latencies. data=cold drops the store's
// own files from the page cache (fdatasync + posix_fadvise DONTNEED on each
// file, never the machine's caches) after closing the store, before the
// timed loop and whenever the loop has read the whole queue once; the direct
// path also starts with an empty block cache. BenchmarkDispatch: one op
// dispatches one record into its consume queue and the index.
// BenchmarkRecover: one op is an Open after a simulated crash (abort file
// left, checkpoint zeroed, so the whole log is scanned with CRCs and
// re-dispatched); MB/s is commit-log bytes recovered.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/iopath"
)

// benchConfig is a store with production-like consume-queue files and
// moderate index files.
func benchConfig(b *testing.B, dir string, path iopath.Kind, segSize int64) Config {
	cfg := DefaultConfig(dir)
	cfg.CommitLog.Path = path
	cfg.CommitLog.Flush = flush.DefaultConfig(flush.Async)
	cfg.CommitLog.SegmentSize = segSize
	pool := iopath.NewBufferPool(4, segSize)
	b.Cleanup(func() { pool.Close() })
	cfg.CommitLog.IO.Pool = pool
	cfg.Index = index.Config{MaxHashSlots: 1 << 16, MaxIndexNum: 1 << 18, MaxQueryNum: 64}
	cfg.ReadCacheBytes = 64 << 20
	cfg.Logger = quietLogger
	cfg.CleanInterval = 0
	cfg.DiskUsage = func(string) (float64, error) { return 0.10, nil }
	return cfg
}

func openBenchStore(b *testing.B, cfg Config) *Store {
	b.Helper()
	s, err := Open(cfg)
	if errors.Is(err, iopath.ErrUnsupported) {
		b.Skipf("write path %s unsupported here: %v", cfg.CommitLog.Path, err)
	}
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// fill puts bodies of size bytes into queue B/0 until total record bytes
// reach bytes, and returns the message count.
func fill(b *testing.B, s *Store, size int, bytes int64) int64 {
	b.Helper()
	m := fixedMsg("B", 0, size, "tag")
	var n, total int64
	for total < bytes {
		r, err := s.Put(context.Background(), m)
		if err != nil {
			b.Fatal(err)
		}
		n++
		total += r.WroteBytes
	}
	if !s.WaitDispatched(time.Minute) {
		b.Fatal("dispatch stuck")
	}
	return n
}

// dropStoreFiles fdatasyncs and drops from the page cache every regular
// file under root (the store's own files only).
func dropStoreFiles(b *testing.B, root string) {
	b.Helper()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return err
		}
		return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// minPercentileSamples is the least number of samples a row reports
// percentiles from (fewer: none reported; a p99.9 from 300 samples is its
// third-largest value).
const minPercentileSamples = 10000

func reportLatency(b *testing.B, h *hdrhistogram.Histogram) {
	if h.TotalCount() < minPercentileSamples {
		return
	}
	b.ReportMetric(float64(h.ValueAtQuantile(50)), "p50-ns")
	b.ReportMetric(float64(h.ValueAtQuantile(99)), "p99-ns")
	b.ReportMetric(float64(h.ValueAtQuantile(99.9)), "p999-ns")
}

func BenchmarkGet(b *testing.B) {
	for _, path := range iopath.Kinds() {
		for _, data := range []string{"hot", "cold"} {
			for _, size := range []int{128, 1024, 4096} {
				b.Run(fmt.Sprintf("path=%s/data=%s/size=%d", path, data, size), func(b *testing.B) {
					benchGet(b, path, data == "cold", size)
				})
			}
		}
	}
}

func benchGet(b *testing.B, path iopath.Kind, cold bool, size int) {
	cfg := benchConfig(b, b.TempDir(), path, 16<<20)
	s := openBenchStore(b, cfg)
	n := fill(b, s, size, 16<<20)
	reopen := func() {
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		dropStoreFiles(b, cfg.Root)
		s = openBenchStore(b, cfg)
	}
	if cold {
		reopen()
	}
	defer func() {
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}()
	first, err := s.GetMessage("g", "B", 0, 0, 32, 256<<10, nil)
	if err != nil || first.Status != Found {
		b.Fatalf("get: %v %v", first.Status, err)
	}
	perPull := len(first.Messages)
	b.SetBytes(int64(len(first.Buffer)))
	if cold {
		reopen()
	}
	h := hdrhistogram.New(1, int64(10*time.Second), 3)
	off := int64(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if off+int64(perPull) > n {
			off = 0
			if cold {
				b.StopTimer()
				reopen()
				b.StartTimer()
			}
		}
		t0 := time.Now()
		res, err := s.GetMessage("g", "B", 0, off, 32, 256<<10, nil)
		h.RecordValue(int64(time.Since(t0)))
		if err != nil || len(res.Messages) != perPull {
			b.Fatalf("pull at %d: %v, %d messages, want %d", off, err, len(res.Messages), perPull)
		}
		off = res.NextBeginOffset
	}
	b.StopTimer()
	reportLatency(b, h)
	if c := s.ReadCache(); c != nil {
		b.ReportMetric(c.Stats().HitRatio, "cache-hit-ratio")
	}
}

// BenchmarkDispatch measures the dispatcher alone: records appended while it
// is held are dispatched by the benchmark goroutine.
func BenchmarkDispatch(b *testing.B) {
	for _, path := range []iopath.Kind{iopath.Mmap, iopath.Pwrite} {
		for _, size := range []int{128, 1024} {
			b.Run(fmt.Sprintf("path=%s/size=%d", path, size), func(b *testing.B) {
				cfg := benchConfig(b, b.TempDir(), path, 64<<20)
				s := openBenchStore(b, cfg)
				defer s.Close()
				s.disp.paused.Store(true)
				m := fixedMsg("B", 0, size, "tag")
				var recBytes int64
				for i := 0; i < b.N; i++ {
					m.Properties = fmt.Sprintf("KEYS\x01k%d\x02TAGS\x01tag\x02", i)
					r, err := s.Put(context.Background(), m)
					if err != nil {
						b.Fatal(err)
					}
					recBytes = r.WroteBytes
				}
				b.SetBytes(recBytes)
				b.ReportAllocs()
				b.ResetTimer()
				t0 := time.Now()
				got, err := s.reputUntil(s.reputEnd(), true)
				elapsed := time.Since(t0)
				b.StopTimer()
				s.disp.paused.Store(false)
				if err != nil || got != int64(b.N) {
					b.Fatalf("dispatched %d of %d: %v", got, b.N, err)
				}
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
			})
		}
	}
}

// BenchmarkRecover measures recovery after a crash of a store holding 64 MiB
// of 1 KiB messages over 8 queues.
func BenchmarkRecover(b *testing.B) {
	for _, seg := range []int64{4 << 20, 16 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("seg=%dMiB", seg>>20), func(b *testing.B) {
			cfg := benchConfig(b, b.TempDir(), iopath.Mmap, seg)
			s := openBenchStore(b, cfg)
			m := fixedMsg("B", 0, 1024, "tag")
			for s.CommitLog().MaxOffset() < 64<<20 {
				m.QueueID = (m.QueueID + 1) % 8
				if _, err := s.Put(context.Background(), m); err != nil {
					b.Fatal(err)
				}
			}
			logBytes := s.CommitLog().MaxOffset()
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(logBytes)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if err := os.WriteFile(AbortPath(cfg.Root), []byte("1"), 0o644); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(CheckpointPath(cfg.Root), make([]byte, checkpointSize), 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				s := openBenchStore(b, cfg)
				b.StopTimer()
				if rep := s.Recovery(); !rep.Abnormal || rep.ScanFrom != 0 || rep.End != logBytes {
					b.Fatalf("recovery %+v", rep)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

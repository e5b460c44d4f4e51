package commitlog

// Benchmarks of the engine core. The numbers live here, not in tests.
//
//	go test ./engine/commitlog -run '^$' -bench 'Append|RawPath' -benchtime=300x -count=5 | tee append.txt
//	benchstat -col /path append.txt                  # write paths side by side
//	benchstat -col /flush -row /conc append.txt      # flush policies by concurrency
//
// Sub-benchmark names are key=value so benchstat can pivot on any of them:
// BenchmarkAppend/path=mmap/flush=group/size=1024/conc=64.
// -bench.seg sets the segment size (default 64 MiB, so a run rolls and
// every path pays for its rolls).

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/segment"
	"github.com/brokerlab/brokerlab/engine/vfs"
)

var (
	benchSeg      = flag.Int64("bench.seg", 64<<20, "segment size for benchmarks")
	benchCoalesce = flag.Duration("bench.coalesce", 0, "group commit coalescing window (flush.Config.CoalesceWait)")
)

var (
	benchSizes = []int{128, 1024, 4096}
	benchConcs = []int{1, 16, 64}
)

// latencies merges per-goroutine HDR histograms (ns).
type latencies struct {
	mu  sync.Mutex
	all *hdrhistogram.Histogram
}

func newLatencies() *latencies { return &latencies{all: hdrhistogram.New(1, 60e9, 3)} }

func (l *latencies) merge(h *hdrhistogram.Histogram) {
	l.mu.Lock()
	l.all.Merge(h)
	l.mu.Unlock()
}

func (l *latencies) report(b *testing.B) {
	b.ReportMetric(float64(l.all.ValueAtQuantile(50)), "p50-ns")
	b.ReportMetric(float64(l.all.ValueAtQuantile(99)), "p99-ns")
	b.ReportMetric(float64(l.all.ValueAtQuantile(99.9)), "p999-ns")
}

// runConc runs op b.N times split over conc goroutines, timing each call.
func runConc(b *testing.B, conc int, op func(h *hdrhistogram.Histogram) error) {
	lat := newLatencies()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	b.ResetTimer()
	for g := 0; g < conc; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := hdrhistogram.New(1, 60e9, 3)
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if err := op(h); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				h.RecordValue(int64(time.Since(t0)))
			}
			lat.merge(h)
		}()
	}
	wg.Wait()
	b.StopTimer()
	if p := failed.Load(); p != nil {
		b.Fatal(*p)
	}
	lat.report(b)
}

func BenchmarkAppend(b *testing.B) {
	for _, path := range iopath.Kinds() {
		for _, pol := range flush.Kinds() {
			for _, size := range benchSizes {
				for _, conc := range benchConcs {
					name := fmt.Sprintf("path=%s/flush=%s/size=%d/conc=%d", path, pol, size, conc)
					b.Run(name, func(b *testing.B) { benchAppend(b, path, pol, size, conc) })
				}
			}
		}
	}
}

func benchAppend(b *testing.B, path iopath.Kind, pol flush.Kind, size, conc int) {
	cfg := DefaultConfig(b.TempDir())
	cfg.Path = path
	cfg.Flush = flush.DefaultConfig(pol)
	cfg.Flush.CoalesceWait = *benchCoalesce
	cfg.SegmentSize = *benchSeg
	cfg.IO.Pool = iopath.NewBufferPool(3, cfg.SegmentSize)
	l, err := Open(cfg)
	if err != nil {
		if isUnsupported(err) {
			b.Skipf("path %s unsupported here: %v", path, err)
		}
		b.Fatal(err)
	}
	defer l.Close()
	defer cfg.IO.Pool.Close()
	body := make([]byte, size)
	for i := range body {
		body[i] = byte(i * 7)
	}
	var qoff atomic.Int64
	b.SetBytes(int64(size))
	b.ReportAllocs()
	runConc(b, conc, func(*hdrhistogram.Histogram) error {
		m := record.Message{Topic: "BenchmarkTest", QueueID: 0, Body: body, BornHost: born, BornTimestamp: 1}
		_, err := l.Append(context.Background(), &m, qoff.Add(1))
		return err
	})
	st := l.Stats()
	if st.Flush.Flushes > 0 {
		b.ReportMetric(float64(st.Flush.Commits)/float64(st.Flush.Flushes), "appends/flush")
	}
}

func isUnsupported(err error) bool {
	return err != nil && (errorsIs(err, iopath.ErrUnsupported) || errorsIs(err, vfs.ErrUnsupported))
}

// BenchmarkRawPath pushes the same bytes through the bare write path: no
// encoding, no append lock, no flush policy; a full segment is closed and
// the next one created inline. It is the ceiling BenchmarkAppend is measured
// against (compare size=1024 with path=X/flush=async/size=1024/conc=1).
func BenchmarkRawPath(b *testing.B) {
	for _, path := range iopath.Kinds() {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("path=%s/size=%d", path, size), func(b *testing.B) { benchRaw(b, path, size) })
		}
	}
}

func benchRaw(b *testing.B, path iopath.Kind, size int) {
	dir := b.TempDir()
	segSize := *benchSeg
	cfg := iopath.DefaultConfig()
	cfg.Pool = iopath.NewBufferPool(3, segSize)
	defer cfg.Pool.Close()
	// The record a 'size' body becomes, so both benchmarks move the same bytes.
	m := record.Message{Topic: "BenchmarkTest", Body: make([]byte, size), BornHost: born, StoreHost: born, BornTimestamp: 1}
	rec, err := record.AppendEncode(nil, &m, record.BodyCRC(m.Body), 0, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	var start int64
	open := func() iopath.Appender {
		a, err := iopath.Open(path, vfs.Default, filepath.Join(dir, segment.Name(start)), segSize, 0, cfg)
		if err != nil {
			if isUnsupported(err) {
				b.Skipf("path %s unsupported here: %v", path, err)
			}
			b.Fatal(err)
		}
		return a
	}
	app := open()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	h := hdrhistogram.New(1, 60e9, 3)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := app.Append(rec); err == iopath.ErrFull {
			app.Close()
			os.Remove(filepath.Join(dir, segment.Name(start)))
			start += segSize
			app = open()
			if _, err := app.Append(rec); err != nil {
				b.Fatal(err)
			}
		} else if err != nil {
			b.Fatal(err)
		}
		h.RecordValue(int64(time.Since(t0)))
	}
	b.StopTimer()
	app.Close()
	lat := newLatencies()
	lat.merge(h)
	lat.report(b)
}

// TestMain prints benchfmt configuration lines when benchmarking, so a
// results file says where it was measured.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		printBenchConfig()
	}
	os.Exit(m.Run())
}

func printBenchConfig() {
	kv := map[string]string{}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kv["kernel"] = string(trimNL(b))
	}
	kv["segment-size"] = fmt.Sprint(*benchSeg)
	kv["group-coalesce"] = benchCoalesce.String()
	if d, err := os.MkdirTemp("", "fsprobe"); err == nil {
		kv["fs"] = fsType(d)
		os.Remove(d)
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("%s: %s\n", k, kv[k])
	}
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

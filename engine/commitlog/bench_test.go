package commitlog

// Benchmarks of the engine core. The numbers live here, not in tests.
//
//	scripts/bench.sh                                             # the matrix, fixed work per row, rows alternating, plus fio and the ratios
//	go test ./engine/commitlog -run '^$' -bench.plan 'Append|RawPath|Independent' -bench.passes 5
//	                                                             # the rows scripts/bench.sh runs: pass, -bench pattern, N
//	benchstat -col /path bench.txt                               # write paths side by side
//	benchstat -table .name -col /flush -row /path,/size,/conc bench.txt # flush policies, one row per path/size/conc
//	benchstat -filter '/size:1024 /conc:1' -col .name bench.txt  # Append beside its raw and independent baselines
//
// Every row does a fixed amount of work: scripts/bench.sh runs each row on
// its own with -benchtime=Nx, N from rowN (bench_plan_test.go): enough
// records to roll at least two segments and, for async rows, to cross at
// least two of the async flush loop's 500 ms cycles at the fastest rate an
// async row can reach (checked after the run: a row that crossed fewer
// fails and says so). Numerator and denominator rows alternate: the rows of
// one size and producer count run next to each other, one pass after
// another, each pass in the reverse order of the one before. Run by hand
// with -benchtime=Nx from the plan; a time-based -benchtime gives rows
// different work and is not what the ratios assume.
//
// Sub-benchmark names are key=value so benchstat can pivot on any of them:
//
//	BenchmarkAppend/path=X/flush=Y/size=S/conc=C      the commit log (X ∈ iopath.Kinds(), Y ∈ flush.Kinds())
//	BenchmarkRawPath/path=X/flush=Y/size=S/conc=C     the fair raw baseline (Y ∈ sync, async, group)
//	BenchmarkIndependent/path=pwrite/flush=async/size=S/conc=1
//	                                                  a baseline sharing no engine code: pre-encoded
//	                                                  records, bare pwrite on a preallocated file,
//	                                                  fdatasync every 500 ms (bench_independent_test.go)
//	BenchmarkAppendTail/path=direct/flush=async/...   Append with a dispatcher-like reader tailing the
//	                                                  log; reports where read-back was served from
//	                                                  (bench_tail_test.go)
//
// Every row configures the write path as the store does (benchIO): the pool
// path's 3-buffer pool, the direct path's 256 MiB block cache with its ring
// of recently written blocks.
//
// BenchmarkRawPath is the ceiling BenchmarkAppend is measured against: per
// operation it encodes the same message with package record (body CRC
// included), patches its queue offset, physical offset and store timestamp
// under one append mutex, and appends it through the same iopath appender
// in the same segment.Queue (same segment size, same background
// preallocation, the same end-of-segment blank and padding); then it makes
// it durable with the cadence of the policy it is compared with:
//
//	sync   flush under the append mutex after every write (one flush per write)
//	async  a background loop with RocketMQ's cadence: every 500 ms flush if at
//	       least 4 pages are dirty, everything every 10 s
//	group  after appending, a writer flushes inline if no flush is running;
//	       writers arriving during a flush wait and one of them flushes for
//	       all of them next (at conc=1 this is sync with the flush outside
//	       the mutex)
//
// Because BenchmarkRawPath shares the engine's record, segment and iopath
// code it cannot show what that code costs; BenchmarkIndependent can.
//
// Async rows end with the flush they owe inside the timer: after the last
// append, everything appended is made durable before the clock stops, so
// an async row's sec/op includes its share of writeback (owed-flush-ns
// reports that last flush alone, flush-cycles the background flushes the
// run crossed).
//
// Segments are kept until the benchmark's cleanup (after b.StopTimer), so
// dirty pages are written back as they are in the log.
//
// Metrics beside sec/op (the mean) and MB/s: p50-ns, p99-ns, p999-ns of the
// per-call latency (only from >= minPercentileSamples = 10k calls, else
// omitted); for every policy that flushes for its callers (all but
// async) appends/flush (b.N over the flushes of the timed run) and flush-ns
// (their mean latency); for group-style policies (group, rmqgroup) also
// limit-ops/s = conc / flush-ns, the physical limit of a loop that flushes
// back to back and serves every producer with each flush. Direct-path rows
// add stage-waits/op (appends that waited for a staging buffer: the
// device's back pressure).
//
// The matrix (benchCells) is size ∈ 128|1024|4096 × conc ∈ 1|16|64, plus
// size 65536 at conc 1 and 4 only: 64 KiB records at 16 or 64 producers
// only repeat the conc=4 figure (the device is the limit) while costing the
// most time and disk; conc=4 is the P3 row
// BenchmarkAppend/path=direct/flush=async/size=65536/conc=4. Both benchmarks
// use the same cells, so every Append row has its raw row for each of sync,
// async and group: with 5 paths and 4 policies, 220 Append + 165 RawPath +
// 4 Independent + 2 AppendTail rows.
//
// -bench.seg sets the segment size (default 1 MiB: small, so that rolling
// twice is cheap even for the per-message sync rows; every path pays for
// its rolls, as the raw baseline does). The N of every row follows from it
// (rowN).

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/vfs"
)

var (
	benchSeg      = flag.Int64("bench.seg", 1<<20, "segment size for benchmarks (rowN derives every row's N from it)")
	benchCoalesce = flag.Duration("bench.coalesce", 0, "group commit coalescing window (flush.Config.CoalesceWait)")
)

// benchCell is one size × concurrency point of the matrix.
type benchCell struct{ size, conc int }

// benchCells is the matrix both benchmarks run (see the file comment for
// why 65536 runs only at conc 1 and 4).
func benchCells() []benchCell {
	var cs []benchCell
	for _, size := range []int{128, 1024, 4096} {
		for _, conc := range []int{1, 16, 64} {
			cs = append(cs, benchCell{size, conc})
		}
	}
	return append(cs, benchCell{65536, 1}, benchCell{65536, 4})
}

func (c benchCell) String() string { return fmt.Sprintf("size=%d/conc=%d", c.size, c.conc) }

// runConc runs b.N operations split over conc goroutines; when the last one
// returns it calls owed (if not nil: the flush an async row owes, timed as
// part of the run) and stops the timer. Each goroutine takes its operation
// from newOp (so it can own its buffers); every call is timed into a
// histogram and the latency quantiles are reported. It returns how long
// owed took.
func runConc(b *testing.B, conc int, newOp func() func() error, owed func() error) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	ops := make([]func() error, conc)
	hs := make([]*hdrhistogram.Histogram, conc) // allocated outside the timed region
	for g := range ops {
		ops[g] = newOp()
		hs[g] = hdrhistogram.New(1, 60e9, 3)
	}
	b.ResetTimer()
	for g := 0; g < conc; g++ {
		wg.Add(1)
		go func(op func() error, h *hdrhistogram.Histogram) {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if err := op(); err != nil {
					e := err // a copy escapes, not every iteration's err
					failed.CompareAndSwap(nil, &e)
					return
				}
				h.RecordValue(int64(time.Since(t0)))
			}
		}(ops[g], hs[g])
	}
	wg.Wait()
	var owedTook time.Duration
	if owed != nil && failed.Load() == nil {
		t0 := time.Now()
		if err := owed(); err != nil {
			failed.CompareAndSwap(nil, &err)
		}
		owedTook = time.Since(t0)
	}
	b.StopTimer()
	if p := failed.Load(); p != nil {
		if isUnsupported(*p) { // a path refused at its first segment
			b.Skipf("write path unsupported here: %v", *p)
		}
		b.Fatal(*p)
	}
	all := hdrhistogram.New(1, 60e9, 3)
	for _, h := range hs {
		all.Merge(h)
	}
	if all.TotalCount() >= minPercentileSamples {
		b.ReportMetric(float64(all.ValueAtQuantile(50)), "p50-ns")
		b.ReportMetric(float64(all.ValueAtQuantile(99)), "p99-ns")
		b.ReportMetric(float64(all.ValueAtQuantile(99.9)), "p999-ns")
	}
	return owedTook
}

// minPercentileSamples is the least number of timed calls a row reports
// percentiles from: a p99.9 from 300 samples is its third-largest value.
// Rows with fewer report none (benchratio then pairs none for that count).
const minPercentileSamples = 10000

// flushMeter accumulates the flush events of one timed run
// (flush.Config.OnFlush, or the raw baseline's own flushes).
type flushMeter struct {
	n, nanos atomic.Int64
}

func (m *flushMeter) onFlush(e flush.Event) {
	if e.Err == nil {
		m.record(e.Duration)
	}
}

func (m *flushMeter) record(d time.Duration) {
	m.n.Add(1)
	m.nanos.Add(int64(d))
}

func (m *flushMeter) reset() {
	m.n.Store(0)
	m.nanos.Store(0)
}

// waitsForFlush reports whether policy k makes its callers wait for a flush
// (every policy but async).
func waitsForFlush(k flush.Kind) bool { return k != flush.Async }

// groupStyle reports whether policy k serves many waiters with one flush
// (group, rmqgroup and any other batching policy): its physical limit is
// conc / flush latency.
func groupStyle(k flush.Kind) bool { return k != flush.Async && k != flush.Sync }

// report adds appends/flush and flush-ns for policies whose callers wait,
// and limit-ops/s for group-style ones. n is the number of appends timed.
func (m *flushMeter) report(b *testing.B, k flush.Kind, n, conc int) {
	flushes, nanos := m.n.Load(), m.nanos.Load()
	if !waitsForFlush(k) || flushes == 0 {
		return
	}
	mean := float64(nanos) / float64(flushes)
	b.ReportMetric(float64(n)/float64(flushes), "appends/flush")
	b.ReportMetric(mean, "flush-ns")
	if groupStyle(k) && mean > 0 {
		b.ReportMetric(float64(conc)*1e9/mean, "limit-ops/s")
	}
}

func BenchmarkAppend(b *testing.B) {
	for _, path := range iopath.Kinds() {
		for _, pol := range flush.Kinds() {
			for _, c := range benchCells() {
				name := fmt.Sprintf("path=%s/flush=%s/%s", path, pol, c)
				b.Run(name, func(b *testing.B) { benchAppend(b, path, pol, c.size, c.conc) })
			}
		}
	}
}

func benchAppend(b *testing.B, path iopath.Kind, pol flush.Kind, size, conc int) {
	var meter flushMeter
	l := openBenchLog(b, path, pol, meter.onFlush)
	body := benchBody(size)
	var qoff atomic.Int64
	b.SetBytes(int64(size))
	b.ReportAllocs()
	io0 := logIO(l)
	meter.reset()
	var owed func() error
	var cycles int64
	if !waitsForFlush(pol) {
		owed = func() error {
			cycles = meter.n.Load() // the policy's own flushes; Flush below is not metered
			_, err := l.Flush()
			return err
		}
	}
	owedTook := runConc(b, conc, func() func() error {
		return func() error {
			m := record.Message{Topic: "BenchmarkTest", QueueID: 0, Body: body, BornHost: born, BornTimestamp: 1}
			_, err := l.Append(context.Background(), &m, qoff.Add(1))
			return err
		}
	}, owed)
	if owed != nil {
		reportOwed(b, b.N, size, cycles, owedTook)
	}
	meter.report(b, pol, b.N, conc)
	reportStageWaits(b, path, io0, logIO(l))
}

// Store defaults (store.DefaultConfig's ReadCacheBytes, ReadCacheBlockSize)
// for the direct path's block cache.
const (
	benchCacheBytes = 256 << 20
	benchCacheBlock = 64 << 10
)

// benchIO returns the write-path knobs every benchmark row uses, as the
// store sets them: the pool path's bounded buffer pool (3 buffers) and, for
// the direct path, the store's default BlockCache (256 MiB of 64 KiB
// blocks plus its ring of recently written blocks). They are released in
// tb's cleanup, after anything registered later (the log) has closed.
func benchIO(tb testing.TB, path iopath.Kind, segSize int64) iopath.Config {
	io := iopath.DefaultConfig()
	io.Pool = iopath.NewBufferPool(3, segSize)
	tb.Cleanup(func() { io.Pool.Close() })
	if path == iopath.Direct {
		c, err := iopath.NewBlockCache(benchCacheBytes, benchCacheBlock)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(c.Close)
		io.Cache = c
	}
	return io
}

// benchBody is the message body both benchmarks store.
func benchBody(size int) []byte {
	body := make([]byte, size)
	for i := range body {
		body[i] = byte(i * 7)
	}
	return body
}

func isUnsupported(err error) bool {
	return err != nil && (errorsIs(err, iopath.ErrUnsupported) || errorsIs(err, vfs.ErrUnsupported))
}

// TestMain prints benchfmt configuration lines when benchmarking, so a
// results file says where it was measured; with -bench.plan it prints the
// plan (printPlan) and exits.
func TestMain(m *testing.M) {
	flag.Parse()
	if *benchPlan != "" {
		re, err := regexp.Compile(*benchPlan)
		if err == nil {
			err = printPlan(os.Stdout, re, *benchPasses)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
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

// openBenchLog opens a commit log for a benchmark: path and policy, the
// -bench.seg segment size and -bench.coalesce window, the paths' benchmark
// I/O config and onFlush (may be nil); it skips where the path is
// unsupported and closes the log at cleanup.
func openBenchLog(b *testing.B, path iopath.Kind, pol flush.Kind, onFlush func(flush.Event)) *Log {
	cfg := DefaultConfig(b.TempDir())
	cfg.Path = path
	cfg.Flush = flush.DefaultConfig(pol)
	cfg.Flush.CoalesceWait = *benchCoalesce
	cfg.Flush.OnFlush = onFlush
	cfg.SegmentSize = *benchSeg
	cfg.IO = benchIO(b, path, cfg.SegmentSize)
	l, err := Open(cfg)
	if err != nil {
		if isUnsupported(err) {
			b.Skipf("path %s unsupported here: %v", path, err)
		}
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

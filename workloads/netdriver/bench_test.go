package netdriver_test

// BenchmarkSend: the harness's network path end to end over loopback —
// netdriver → engine/remoting → broker → engine/store (mmap write path,
// -store=disk, async flush unless -flush says otherwise) or the in-memory
// store (-store=mem, the network and broker alone) — with a fresh name
// server, broker and store per cell.
//
//	go test -run '^$' -bench 'Send' -benchtime=2s ./workloads/netdriver | tee send.txt
//	benchstat -col /mode send.txt
//	benchstat -col /conc send.txt
//	go test -run '^$' -bench 'Send/mode=sync/size=1024/conc=64' -flush=group ./workloads/netdriver
//
// Latency per message (hdrhistogram): sync = send to acknowledgement,
// async = submit to callback, oneway = the frame write; oneway cells also
// wait until the broker stored every message (or stopped storing) before
// stopping the clock and report the messages it never stored as "lost": a
// oneway sender has no back pressure, so a flooded broker drops sends
// (SYSTEM_BUSY, which nobody hears). The broker counts those refusals
// (FlowControl.OnewayRefused*): "refused" and "refused-%" report them.

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/store"
	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/netdriver"
)

var (
	benchStore = flag.String("store", "disk", "BenchmarkSend store: disk (engine/store, mmap) or mem")
	benchFlush = flag.String("flush", "async", "BenchmarkSend flush policy of -store=disk: "+fmt.Sprint(flush.Kinds()))
)

const (
	benchTopic  = "BenchSend"
	benchQueues = 8
)

// cell is one benchmark cell's system: name server, broker, driver.
type cell struct {
	ns  *namesrv.Server
	b   *broker.Broker
	d   *netdriver.Driver
	dir string
}

func startCell(tb testing.TB, batch int) *cell {
	tb.Helper()
	c := &cell{}
	nscfg := namesrv.DefaultConfig()
	nscfg.Remoting.Addr = "127.0.0.1:0"
	nscfg.Logger = quiet
	c.ns = namesrv.New(nscfg)
	if err := c.ns.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	bcfg := broker.DefaultConfig()
	bcfg.ListenAddr = "127.0.0.1:0"
	bcfg.NamesrvAddrs = []string{c.ns.Addr()}
	bcfg.Logger = quiet
	open := broker.WithStore(memstore.New())
	if *benchStore == "disk" {
		dir, err := os.MkdirTemp("", "netdriver-bench-")
		if err != nil {
			tb.Fatal(err)
		}
		c.dir = dir
		scfg := store.DefaultConfig(dir)
		pol, err := flush.ParseKind(*benchFlush)
		if err != nil {
			tb.Fatal(err)
		}
		scfg.CommitLog.Flush = flush.DefaultConfig(pol)
		scfg.CommitLog.SegmentSize = 256 << 20
		scfg.Index = index.Config{MaxHashSlots: 500_000, MaxIndexNum: 2_000_000, MaxQueryNum: 64}
		scfg.CleanInterval = 0
		scfg.Logger = quiet
		open = broker.OpenStore(scfg, bcfg.DelayLevels)
	}
	var err error
	if c.b, err = broker.New(bcfg, open); err != nil {
		tb.Fatal(err)
	}
	if err := c.b.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	dcfg := netdriver.DefaultConfig()
	dcfg.Namesrv = c.ns.Addr()
	dcfg.CreateQueues = benchQueues
	dcfg.Batch = batch
	dcfg.Client.Logger = quiet
	if c.d, err = netdriver.New(dcfg); err != nil {
		tb.Fatal(err)
	}
	if err := c.d.CreateTopic(context.Background(), benchTopic, benchQueues); err != nil {
		tb.Fatal(err)
	}
	return c
}

func (c *cell) close() {
	_ = c.d.Close()
	_ = c.b.Shutdown(context.Background())
	_ = c.ns.Shutdown(context.Background())
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}

// onewayRefused is the broker's count of oneway sends it did not store.
func (c *cell) onewayRefused() uint64 {
	fc := c.b.FlowControl()
	return fc.OnewayRefusedBusy + fc.OnewayRefusedOther + fc.OnewayRejectedByServer
}

// stored is the number of messages in the bench topic.
func (c *cell) stored(tb testing.TB) int64 {
	var n int64
	for q := range int32(benchQueues) {
		off, err := c.d.MaxOffset(benchTopic, q)
		if err != nil {
			tb.Fatal(err)
		}
		n += off
	}
	return n
}

func BenchmarkSend(b *testing.B) {
	for _, mode := range []string{"sync", "async", "oneway"} {
		for _, size := range []int{128, 1024, 4096} {
			for _, conc := range []int{1, 16, 64} {
				runCell(b, fmt.Sprintf("mode=%s/size=%d/conc=%d", mode, size, conc), 0, func(b *testing.B, c *cell) {
					runSend(b, c, mode, size, conc)
				})
			}
		}
	}
}

// BenchmarkSendBatch: conc producers calling Send, grouped by the driver into
// SEND_BATCH_MESSAGE requests of up to batch messages per queue.
func BenchmarkSendBatch(b *testing.B) {
	for _, batch := range []int{16, 64} {
		for _, conc := range []int{64, 256} {
			runCell(b, fmt.Sprintf("size=1024/batch=%d/conc=%d", batch, conc), batch, func(b *testing.B, c *cell) {
				runSend(b, c, "sync", 1024, conc)
			})
		}
	}
}

// BenchmarkSendBatchOf: conc producers, each sending explicit batches of
// batch messages (Driver.SendBatch: one SEND_BATCH_MESSAGE per call, as a
// RocketMQ producer's Send of a []*Message), closed loop. b.N counts
// messages; the latency is per batch. Compare msgs/s with
// BenchmarkSend/mode=sync at the same conc (issue 11's P4: batches of 64):
//
//	go test -run '^$' -bench 'Send/mode=sync/size=1024/conc=64$|SendBatchOf/size=1024/batch=64/conc=64$' ./workloads/netdriver
func BenchmarkSendBatchOf(b *testing.B) {
	for _, batch := range []int{16, 64} {
		for _, conc := range []int{1, 16, 64} {
			runCell(b, fmt.Sprintf("size=1024/batch=%d/conc=%d", batch, conc), 0, func(b *testing.B, c *cell) {
				runSendBatchOf(b, c, 1024, batch, conc)
			})
		}
	}
}

func runSendBatchOf(b *testing.B, c *cell, size, batch, conc int) {
	body := make([]byte, size)
	for i := range body {
		body[i] = byte(i * 7)
	}
	ctx := context.Background()
	hist := hdr.New(1, 60e9, 3)
	var histMu sync.Mutex
	var failures atomic.Int64
	var firstErr atomic.Value
	var next atomic.Int64 // messages claimed
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for p := range conc {
		wg.Go(func() {
			h := hdr.New(1, 60e9, 3)
			ms := make([]*workloads.Message, batch)
			for q := p; ; q++ {
				first := next.Add(int64(batch)) - int64(batch)
				if first >= int64(b.N) {
					break
				}
				n := int(min(int64(batch), int64(b.N)-first))
				for i := range n {
					ms[i] = &workloads.Message{Topic: benchTopic, QueueID: int32(q % benchQueues), Body: body}
				}
				t0 := time.Now()
				if err := c.d.SendBatch(ctx, ms[:n]); err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
				_ = h.RecordValue(time.Since(t0).Nanoseconds())
			}
			histMu.Lock()
			hist.Merge(h)
			histMu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failures.Load(); n > 0 {
		b.Fatalf("%d batches failed, first: %v", n, firstErr.Load())
	}
	reportSends(b, elapsed, hist)
}

// reportSends reports b.N messages over elapsed and hist's percentiles.
func reportSends(b *testing.B, elapsed time.Duration, hist *hdr.Histogram) {
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(hist.ValueAtQuantile(50)), "p50-ns")
	b.ReportMetric(float64(hist.ValueAtQuantile(99)), "p99-ns")
	b.ReportMetric(float64(hist.ValueAtQuantile(99.9)), "p999-ns")
}

// runCell runs one sub-benchmark on a system started on its first run
// (so cells filtered out by -bench start nothing) and stopped after it.
func runCell(b *testing.B, name string, batch int, run func(*testing.B, *cell)) {
	var c *cell
	b.Run(name, func(b *testing.B) {
		if c == nil {
			c = startCell(b, batch)
		}
		run(b, c)
	})
	if c != nil {
		c.close()
	}
}

func runSend(b *testing.B, c *cell, mode string, size, conc int) {
	body := make([]byte, size)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	ctx := context.Background()
	hist := hdr.New(1, 60e9, 3)
	var histMu sync.Mutex
	var failures atomic.Int64
	var firstErr atomic.Value
	fail := func(err error) {
		failures.Add(1)
		firstErr.CompareAndSwap(nil, err)
	}
	before, refusedBefore := int64(0), uint64(0)
	if mode == "oneway" {
		before, refusedBefore = c.stored(b), c.onewayRefused()
	}
	fcBefore := c.b.FlowControl()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	if mode == "async" {
		sem := make(chan struct{}, conc)
		var wg sync.WaitGroup
		for i := range b.N {
			sem <- struct{}{}
			wg.Add(1)
			m := &workloads.Message{Topic: benchTopic, QueueID: int32(i % benchQueues), Body: body}
			t0 := time.Now()
			err := c.d.SendAsync(ctx, m, func(err error) {
				d := time.Since(t0)
				if err != nil {
					fail(err)
				}
				histMu.Lock()
				_ = hist.RecordValue(d.Nanoseconds())
				histMu.Unlock()
				<-sem
				wg.Done()
			})
			if err != nil {
				fail(err)
				<-sem
				wg.Done()
			}
		}
		wg.Wait()
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range conc {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h := hdr.New(1, 60e9, 3)
				for {
					i := next.Add(1) - 1
					if i >= int64(b.N) {
						break
					}
					m := &workloads.Message{Topic: benchTopic, QueueID: int32(i % benchQueues), Body: body}
					t0 := time.Now()
					var err error
					if mode == "oneway" {
						err = c.d.SendOneway(ctx, m)
					} else {
						err = c.d.Send(ctx, m)
					}
					_ = h.RecordValue(time.Since(t0).Nanoseconds())
					if err != nil {
						fail(err)
					}
				}
				histMu.Lock()
				hist.Merge(h)
				histMu.Unlock()
			}()
		}
		wg.Wait()
	}
	if mode == "oneway" {
		// Wait until every message is stored or the count stops growing: a
		// broker refusing oneway sends (SYSTEM_BUSY) cannot tell the client.
		want := before + int64(b.N)
		last, lastChange := c.stored(b), time.Now()
		for last < want && time.Since(lastChange) < time.Second {
			time.Sleep(time.Millisecond)
			if n := c.stored(b); n != last {
				last, lastChange = n, time.Now()
			}
		}
		b.ReportMetric(float64(want-last), "lost")
		// What the broker says it refused (it counts the answers nobody
		// hears); "lost" above beyond it would be messages gone elsewhere.
		refused := c.onewayRefused() - refusedBefore
		b.ReportMetric(float64(refused), "refused")
		b.ReportMetric(100*float64(refused)/float64(b.N), "refused-%")
		fc := c.b.FlowControl()
		b.ReportMetric(float64(fc.OnewayRejectedByServer-fcBefore.OnewayRejectedByServer), "refused-remoting")
		b.ReportMetric(float64(fc.OnewayRefusedBusy-fcBefore.OnewayRefusedBusy), "refused-busy")
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failures.Load(); n*100 > int64(b.N) {
		b.Fatalf("%d of %d sends failed, first: %v", n, b.N, firstErr.Load())
	} else if n > 0 {
		b.ReportMetric(float64(n), "errors")
	}
	reportSends(b, elapsed, hist)
}

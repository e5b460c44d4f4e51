package natsdriver

// Publish benchmarks of the embedded JetStream peer, named key=value for
// benchstat pivots like the engine's (engine/commitlog BenchmarkAppend):
//
//	go test ./workloads/natsdriver -run '^$' -bench NATSPublish -benchtime=2000x -count=5 | tee nats.txt
//	benchstat -col /sync -row /conc nats.txt
//
// sync=always is sync_interval: always (fsync per flush), sync=interval the
// server's 2-minute default. Each op is one Send (a synchronous publish
// waiting for its PubAck), timed into an HDR histogram per goroutine.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brokerlab/brokerlab/workloads"
)

var (
	benchSizes = []int{128, 1024, 4096}
	benchConcs = []int{1, 16, 64}
)

func BenchmarkNATSPublish(b *testing.B) {
	for _, always := range []bool{true, false} {
		for _, size := range benchSizes {
			for _, conc := range benchConcs {
				name := fmt.Sprintf("sync=%s/size=%d/conc=%d", syncName(always), size, conc)
				b.Run(name, func(b *testing.B) { benchPublish(b, always, 0, size, conc) })
			}
		}
	}
}

// BenchmarkNATSPublishAsync is the windowed async mode (nats bench --batch):
// throughput only; the latency columns are per Send, mostly not waiting.
func BenchmarkNATSPublishAsync(b *testing.B) {
	for _, always := range []bool{true, false} {
		for _, window := range []int{100} {
			for _, conc := range []int{1, 16} {
				name := fmt.Sprintf("sync=%s/window=%d/size=1024/conc=%d", syncName(always), window, conc)
				b.Run(name, func(b *testing.B) { benchPublish(b, always, window, 1024, conc) })
			}
		}
	}
}

func syncName(always bool) string {
	if always {
		return "always"
	}
	return "interval"
}

func benchPublish(b *testing.B, always bool, window, size, conc int) {
	cfg := DefaultConfig(b.TempDir())
	cfg.SyncAlways, cfg.AsyncWindow, cfg.Topics = always, window, []string{"bench"}
	d, err := Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	b.SetBytes(int64(size))
	runConc(b, conc, func() error {
		body := make([]byte, size) // Send owns the body
		return d.Send(context.Background(), &workloads.Message{Topic: "bench", Body: body})
	})
	if window > 0 {
		if err := d.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// runConc runs op b.N times over conc goroutines and reports the merged
// latency percentiles.
func runConc(b *testing.B, conc int, op func() error) {
	all := hdrhistogram.New(1, 60e9, 3)
	var (
		mu     sync.Mutex
		next   atomic.Int64
		failed atomic.Pointer[error]
		wg     sync.WaitGroup
	)
	b.ResetTimer()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := hdrhistogram.New(1, 60e9, 3)
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if err := op(); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				_ = h.RecordValue(int64(time.Since(t0)))
			}
			mu.Lock()
			all.Merge(h)
			mu.Unlock()
		}()
	}
	wg.Wait()
	b.StopTimer()
	if p := failed.Load(); p != nil {
		b.Fatal(*p)
	}
	b.ReportMetric(float64(all.ValueAtQuantile(50)), "p50-ns")
	b.ReportMetric(float64(all.ValueAtQuantile(99)), "p99-ns")
	b.ReportMetric(float64(all.ValueAtQuantile(99.9)), "p999-ns")
}

package flush

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var benchFlushSleep = flag.Duration("flush.sleep", 500*time.Microsecond,
	"BenchmarkCommit: how long the fake Flush takes (a device's fdatasync)")
var benchCoalesce = flag.Duration("flush.coalesce", 0, "BenchmarkCommit: Config.CoalesceWait for group and rmqgroup")

// benchLog is a Flusher whose Flush sleeps a fixed time (off CPU, as a
// device flush is).
type benchLog struct {
	wrote, flushed atomic.Int64
	sleep          time.Duration
}

func (l *benchLog) WrittenPos() int64 { return l.wrote.Load() }

func (l *benchLog) Flush() (int64, error) {
	w := l.wrote.Load()
	time.Sleep(l.sleep)
	if w > l.flushed.Load() {
		l.flushed.Store(w)
	}
	return l.flushed.Load(), nil
}

// BenchmarkCommit measures one append + Commit per op under each policy
// with conc closed-loop producers over a fake log whose flush takes
// -flush.sleep. It reports appends/flush (group commit's batch) and
// limit-ns/op, the physical limit flush latency / producers for a policy
// that makes every producer wait for one flush per append.
func BenchmarkCommit(b *testing.B) {
	for _, k := range Kinds() {
		for _, conc := range []int{1, 4, 16, 64} {
			b.Run(fmt.Sprintf("flush=%s/conc=%d", k, conc), func(b *testing.B) {
				l := &benchLog{sleep: *benchFlushSleep}
				cfg := DefaultConfig(k)
				cfg.CoalesceWait = *benchCoalesce
				p, err := New(l, 0, cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				var next atomic.Int64
				var wg sync.WaitGroup
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for g := 0; g < conc; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= int64(b.N) {
							if err := p.Commit(ctx, l.wrote.Add(1024)); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				st := p.Stats()
				if st.Flushes > 0 {
					b.ReportMetric(float64(b.N)/float64(st.Flushes), "appends/flush")
					mean := float64(st.FlushNanos) / float64(st.Flushes)
					b.ReportMetric(mean/float64(conc), "limit-ns/op")
				}
			})
		}
	}
}

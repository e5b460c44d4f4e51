package experiments

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/result"
)

func cellOf(sys, name string, msgs, mb, p99 float64) result.Cell {
	return result.Cell{System: sys, Name: name, MsgPerSec: msgs, MBPerSec: mb, Primary: "service", Ops: 1,
		Quantiles: map[string]result.Quantiles{"service": {P50: p99 / 2, P99: p99, Count: 1}}}
}

// The ratios compare the best configuration of each class, as issue 6 defines them.
func TestRatios(t *testing.T) {
	cells := []result.Cell{
		cellOf("brokerlab", "path=mmap/flush=sync", 1000, 1, 9e6),
		cellOf("brokerlab", "path=mmap/flush=group", 30000, 30, 4e6),
		cellOf("brokerlab", "path=pwrite/flush=group", 20000, 20, 3e6),
		cellOf("brokerlab", "path=mmap/flush=async", 150000, 150, 1e6),
		cellOf("brokerlab", "path=direct/flush=async/size=65536/conc=4", 1000, 90, 1e6),
		cellOf("nats", "path=jetstream/flush=sync", 3000, 3, 8e6),
		cellOf("nats", "path=jetstream/flush=async", 50000, 50, 2e6),
		cellOf("fio", "path=direct/flush=none/size=65536", 1500, 100, 1e6),
	}
	got := map[string]float64{}
	for _, r := range Ratios(cells) {
		got[r.Name] = r.Value
	}
	want := map[string]float64{
		"durable_throughput_vs_nats": 10, "durable_p99_vs_nats": 0.5, "async_throughput_vs_nats": 3,
		"direct_bw_vs_fio": 0.9, "group_vs_sync_throughput": 30,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g < v-1e-9 || g > v+1e-9 {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	var b strings.Builder
	WriteRatios(&b, Ratios(cells))
	if !strings.Contains(b.String(), "RATIO durable_throughput_vs_nats 10.000\n") {
		t.Fatalf("lines:\n%s", b.String())
	}
}

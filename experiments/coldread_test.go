package experiments

import (
	"context"
	"fmt"
	"testing"

	"github.com/brokerlab/brokerlab/engine/iopath"
)

// After a prefill every path starts from the same, cold residency: the
// store is reopened and its files evicted, and the residency at t0 is
// recorded.
func TestPrefillStartsColdOnEveryPath(t *testing.T) {
	for _, k := range iopath.Kinds() {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			e, err := Parse([]byte(fmt.Sprintf(`
name: cold
settle: 1ms
warmup: 50ms
duration: 150ms
interval: 50ms
engine: {path: %s, flush: async, segment_size: 1MiB}
workload: {mode: closed, producers: 1, size: fixed:4096, prefill: 3MiB}
`, k)))
			if err != nil {
				t.Fatal(err)
			}
			o, err := Run(context.Background(), e, Options{OutRoot: t.TempDir(), StoreRoot: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			c := o.Cells[0]
			if c.Error != "" {
				t.Fatal(c.Error)
			}
			frac, ok := c.Extra["resident_fraction_t0"]
			if !ok || c.Extra["backlog_bytes_t0"] < 3<<20 {
				t.Fatalf("no residency at t0: %v", c.Extra)
			}
			// Evicted after the reopen: at most the tail recovery re-read
			// (well under half of a 3 MiB backlog).
			if frac > 0.5 {
				t.Fatalf("%s starts %.0f%% resident: not cold", k, 100*frac)
			}
		})
	}
}

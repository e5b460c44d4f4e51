package experiments

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFio(t *testing.T) {
	out := []byte(`fio: some warning
{"jobs":[{"write":{"iops":2000.5,"bw_bytes":8194048,"total_ios":4001,"runtime":2000,
 "clat_ns":{"mean":12000,"max":90000,"N":4001,"percentile":{"50.000000":11000,"90.000000":15000,"99.000000":40000,"99.900000":80000,"99.990000":90000}}},
 "sync":{"lat_ns":{"mean":400000,"max":2000000,"N":4001,"percentile":{"50.000000":390000,"99.000000":900000}}}}]}`)
	c, err := parseFio(FioCell(FioJob{Direct: true, Sync: "sync", BS: 4096}), out, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if c.MsgPerSec != 2000.5 || c.Ops != 4001 || c.Bytes != 4001*4096 || c.Duration != 2*time.Second {
		t.Fatalf("%+v", c)
	}
	if c.Quantiles["write"].P99 != 40000 || c.Quantiles["sync"].P50 != 390000 {
		t.Fatalf("quantiles %+v", c.Quantiles)
	}
	if c.Name != "path=direct/flush=sync/size=4096/conc=1/ceiling=device" {
		t.Fatalf("name %s", c.Name)
	}
}

// With fio installed (CI installs it), a short real job measures something.
func TestRunFioReal(t *testing.T) {
	if _, err := FioPath(); errors.Is(err, ErrNoFio) {
		t.Skip("fio not installed: the ceiling cannot be measured here (apt-get install fio)")
	}
	c, err := RunFio(context.Background(), t.TempDir(), FioJob{Direct: false, Sync: "group", Every: 4, BS: 4096, Conc: 2}, 300*time.Millisecond, 32<<20)
	if err != nil {
		t.Fatal(err)
	}
	if c.Ops <= 0 || c.MsgPerSec <= 0 || c.Quantiles["sync"].Count == 0 || c.Extra["fsync_every"] != 4 || c.Extra["fio_conc"] != 2 {
		t.Fatalf("%+v", c)
	}
	// Group's pattern syncs every Every writes: about a quarter as many syncs as writes.
	if n, w := c.Quantiles["sync"].Count, c.Ops; n > w/2 {
		t.Fatalf("%d syncs for %d writes with fdatasync every 4", n, w)
	}
}

// The job's fio arguments carry the cell's concurrency and sync pattern.
func TestFioArgs(t *testing.T) {
	args, err := FioJob{Direct: true, Sync: "sync", BS: 4096, Conc: 16}.fioArgs("/d", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--direct=1", "--ioengine=libaio", "--iodepth=16", "--fdatasync=1", "--size=1073741824"} {
		if !slices.Contains(args, want) {
			t.Errorf("direct sync args %v lack %s", args, want)
		}
	}
	args, err = FioJob{Sync: "none", BS: 1024, Conc: 8}.fioArgs("/d", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--ioengine=psync", "--numjobs=8", "--group_reporting=1", "--size=134217728"} {
		if !slices.Contains(args, want) {
			t.Errorf("buffered args %v lack %s", args, want)
		}
	}
	if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--fdatasync") }) {
		t.Errorf("no-sync ceiling syncs: %v", args)
	}
	if _, err := (FioJob{Sync: "group", BS: 1024}).fioArgs("/d", 1<<20); !errors.Is(err, ErrConfig) {
		t.Errorf("group without a batch: %v", err)
	}
	if got := (FioJob{Sync: "none", BS: 1024}).Ceiling(); got != "page-cache" {
		t.Errorf("buffered no-sync ceiling %q", got)
	}
}

// The group ceiling is the envelope of a sweep of fsync-every-N over
// GroupSweep: every point measured, none taken from a brokerlab cell.
func TestGroupCeilingEnvelope(t *testing.T) {
	if _, err := FioPath(); errors.Is(err, ErrNoFio) {
		t.Skip("fio not installed: the ceiling cannot be measured here (apt-get install fio)")
	}
	j := FioJob{Sync: "group", BS: 4096, Conc: 1}
	sweep := GroupSweep[:3] // 1, 2, 4: the whole sweep is the same loop, longer
	c, err := runGroupEnvelope(context.Background(), t.TempDir(), j, sweep, 100*time.Millisecond, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	best := 0.0
	for _, n := range sweep {
		v, ok := c.Extra[fmt.Sprintf("every_%d_iops", n)]
		if !ok || v <= 0 {
			t.Fatalf("every %d not measured: %v", n, c.Extra)
		}
		best = max(best, v)
	}
	if c.MsgPerSec != best || c.Name != j.Name() || c.Extra["envelope_points"] != float64(len(sweep)) {
		t.Fatalf("envelope %v (best point %v), name %s", c.MsgPerSec, best, c.Name)
	}
}

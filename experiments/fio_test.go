package experiments

import (
	"context"
	"errors"
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
	if c.Name != "path=direct/flush=sync/size=4096" {
		t.Fatalf("name %s", c.Name)
	}
}

// With fio installed (CI installs it), a short real job measures something.
func TestRunFioReal(t *testing.T) {
	if _, err := FioPath(); errors.Is(err, ErrNoFio) {
		t.Skip("fio not installed: the ceiling cannot be measured here (apt-get install fio)")
	}
	c, err := RunFio(context.Background(), t.TempDir(), FioJob{Direct: false, Sync: "sync", BS: 4096}, 300*time.Millisecond, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	if c.Ops <= 0 || c.MsgPerSec <= 0 || c.Quantiles["sync"].Count == 0 {
		t.Fatalf("%+v", c)
	}
}

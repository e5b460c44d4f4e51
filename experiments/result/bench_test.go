package result

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestWriteBenchFormat(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteBench(&buf, sampleManifest(), sampleCells()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, line := range []string{
		"experiment: e1-write-paths\n",
		"commit: 0123456789abcdef0123456789abcdef01234567\n",
		"dirty: true\n",
		"kernel: 6.18.44\n",
		"fs: ext4\n",
		"mount-options: rw,relatime\n",
		"vm-dirty-ratio: 20\n",
		"seed: 42\n",
		"Unit p99-ns better=lower\n",
		"system: brokerlab\nmetric: e2e\nBenchmarkProduce/path=mmap/flush=group/size=1024/conc=64 500000 20000 ns/op 51.2 MB/s 50000 ops/s 410000 p50-ns 2100000 p99-ns 7900000 p999-ns\n",
		"system: fio\nmetric: sync\nBenchmarkWrite/bs=4k/sync=fdatasync 2000 2500000 ns/op",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("bench.txt lacks %q:\n%s", line, out)
		}
	}
	if strings.Contains(out, "flush=sync") {
		t.Errorf("failed cell was written:\n%s", out)
	}
	// The second repetition repeats neither system nor metric lines.
	if n := strings.Count(out, "system: brokerlab"); n != 1 {
		t.Errorf("system line written %d times", n)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, _, isConfig := strings.Cut(line, ": ")
		isConfig = isConfig && k != "" && !strings.ContainsAny(k, " \t") && strings.ToLower(k) == k
		if !isConfig && !strings.HasPrefix(line, "Benchmark") && !strings.HasPrefix(line, "Unit ") {
			t.Errorf("line %q is neither a lower-case config line, unit nor benchmark", line)
		}
	}
}

func TestWriteBenchRejectsBadCells(t *testing.T) {
	for name, c := range map[string]Cell{
		"bad name": {Name: "x", Ops: 1, MsgPerSec: 1},
		"bad op":   {Name: "a=1", Op: "Pro duce", Ops: 1, MsgPerSec: 1},
	} {
		if err := WriteBench(&bytes.Buffer{}, Manifest{}, []Cell{c}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A cell with nothing to report is left out, and an empty manifest is fine.
	var buf bytes.Buffer
	if err := WriteBench(&buf, Manifest{}, []Cell{{Name: "a=1"}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "Benchmark") || !strings.Contains(buf.String(), "commit: unknown") {
		t.Errorf("output:\n%s", buf.String())
	}
}

func TestReadBenchRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	in := sampleCells()
	if err := WriteBench(&buf, sampleManifest(), in); err != nil {
		t.Fatal(err)
	}
	cells, cfg, err := ReadBench(&buf, "bench.txt")
	if err != nil {
		t.Fatal(err)
	}
	if cfg["experiment"] != "e1-write-paths" || cfg["fs"] != "ext4" || cfg["system"] != "brokerlab" {
		t.Errorf("config: %v", cfg)
	}
	if len(cells) != 3 {
		t.Fatalf("cells: %+v", cells)
	}
	for i, c := range cells {
		w := in[i]
		if c.Name != w.Name || c.SystemOrDefault() != w.SystemOrDefault() || c.Ops != w.Ops || c.Duration != w.Duration ||
			c.MsgPerSec != w.MsgPerSec || c.MBPerSec != w.MBPerSec || c.Rep != w.Rep || c.Primary != w.Primary {
			t.Errorf("cell %d:\n got %+v\nwant %+v", i, c, w)
		}
		wq, gq := w.Quantiles[w.Primary], c.Quantiles[c.Primary]
		if gq.P50 != wq.P50 || gq.P99 != wq.P99 || gq.P999 != wq.P999 {
			t.Errorf("cell %d quantiles %+v, want %+v", i, gq, wq)
		}
	}
	if cells[0].Op != "Produce" || cells[2].Op != "Write" || cells[0].Params["flush"] != "group" {
		t.Errorf("op/params: %+v", cells[0])
	}
	if cells[0].Bytes != 512000000 {
		t.Errorf("bytes = %d", cells[0].Bytes)
	}
}

func TestReadBenchGoTestOutput(t *testing.T) {
	const out = `goos: linux
goarch: amd64
pkg: github.com/brokerlab/brokerlab/engine/commitlog
cpu: AMD EPYC
BenchmarkAppend/path=mmap/seg=64MiB
BenchmarkAppend/path=mmap/seg=64MiB-2         	  100000	     10000 ns/op	 102.40 MB/s	      3 fsyncs/op
BenchmarkAppend/path=mmap/seg=64MiB-2         	  100000	     12000 ns/op	  85.33 MB/s	      3 fsyncs/op
BenchmarkOther-2 10 5 ns/op
PASS
ok  	github.com/brokerlab/brokerlab/engine/commitlog	3.2s
`
	cells, cfg, err := ReadBench(strings.NewReader(out), "go-test.txt")
	if err != nil {
		t.Fatal(err)
	}
	if cfg["pkg"] != "github.com/brokerlab/brokerlab/engine/commitlog" || cfg["cpu"] != "AMD EPYC" {
		t.Errorf("config: %v", cfg)
	}
	if len(cells) != 2 || cells[0].Name != "path=mmap/seg=64MiB" || cells[1].Rep != 1 || cells[0].Op != "Append" {
		t.Fatalf("cells: %+v", cells)
	}
	if cells[0].Duration != time.Second || cells[0].Extra["fsyncs/op"] != 3 || cells[0].MBPerSec != 102.4 {
		t.Errorf("values: %+v", cells[0])
	}
	if _, _, err := ReadBench(strings.NewReader("BenchmarkX/a=1 10 5 ns/op 7\n"), "bad.txt"); err == nil ||
		!strings.Contains(err.Error(), "bad.txt:1") {
		t.Errorf("malformed line: %v", err)
	}
}

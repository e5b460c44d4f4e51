package result

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// writeHlogGz writes a two-interval log of metric "service" (1 ms and 3 ms
// values) as <stem>.hlog.gz in dir.
func writeHlogGz(t *testing.T, dir, name string) {
	t.Helper()
	var buf bytes.Buffer
	w := hdr.NewHistogramLogWriter(&buf)
	w.OutputLogFormatVersion()
	w.OutputStartTime(1_000_000)
	w.OutputBaseTime(1_000_000)
	w.SetBaseTime(1_000_000)
	w.OutputLegend()
	for i, v := range []int64{1e6, 3e6} {
		h := hdr.New(1, 60e9, 3)
		for range 100 {
			h.RecordValue(v)
		}
		h.SetTag("service")
		h.SetStartTimeMs(1_000_000 + int64(i)*1000)
		h.SetEndTimeMs(1_000_000 + int64(i+1)*1000)
		if err := w.OutputIntervalHistogram(h); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	z := gzip.NewWriter(f)
	z.Write(buf.Bytes())
	z.Close()
	f.Close()
}

// A gzip'd interval log reads back, and the derived .hgrm is in ms.
func TestReadHlogGzAndDeriveHgrmMs(t *testing.T) {
	dir := t.TempDir()
	c := Cell{Name: "path=mmap/flush=group", Rep: 1, Files: CellFiles{Hlog: "path=mmap,flush=group.r1.hlog.gz"}}
	writeHlogGz(t, dir, c.Files.Hlog)
	ivs, err := ReadCellHlog(dir, &c)
	if err != nil || len(ivs) != 2 || ivs[1].StartMs != 1_001_000 {
		t.Fatalf("%d intervals, %v", len(ivs), err)
	}
	if h := MergeHlog(ivs, "service"); h.TotalCount() != 200 || h.Max() < 3e6 {
		t.Fatalf("merged %d, max %d", h.TotalCount(), h.Max())
	}
	// A result that names the plain .hlog still finds the .gz.
	c2 := c
	c2.Files.Hlog = "path=mmap,flush=group.r1.hlog"
	if _, err := ReadCellHlog(dir, &c2); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	paths, err := DeriveHgrm(&Run{Dir: dir, Result: Result{Cells: []Cell{c, {Name: "a=1"}}}}, out)
	if err != nil || len(paths) != 1 || filepath.Base(paths[0]) != "path=mmap,flush=group.r1.service.hgrm" {
		t.Fatalf("paths %v, %v", paths, err)
	}
	b, _ := os.ReadFile(paths[0])
	h, err := ParseHgrm(bytes.NewReader(b), HgrmUnitMs)
	if err != nil {
		t.Fatal(err)
	}
	if h.MaxNs < 2.99e6 || h.MaxNs > 3.01e6 || !strings.Contains(string(b), "3.00") {
		t.Fatalf("max %v ns; .hgrm:\n%s", h.MaxNs, b)
	}
	if _, err := ReadCellHlog(dir, &Cell{Name: "b=2"}); err == nil {
		t.Fatal("missing log read")
	}
}

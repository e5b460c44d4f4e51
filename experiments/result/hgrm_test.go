package result

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func TestParseHgrmFromHdrHistogramGo(t *testing.T) {
	h := hdrhistogram.New(1, 60e9, 3)
	for i := int64(1); i <= 10000; i++ {
		if err := h.RecordValue(i * 1000); err != nil { // 1 µs … 10 ms
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := h.PercentilesPrint(&buf, 5, 1000.0); err != nil { // values printed in µs
		t.Fatal(err)
	}
	got, err := ParseHgrm(&buf, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if got.TotalCount != 10000 {
		t.Errorf("total count %d", got.TotalCount)
	}
	if rel(got.MaxNs, float64(h.Max())) > 1e-3 || rel(got.MeanNs, h.Mean()) > 1e-3 {
		t.Errorf("footer max %v mean %v, want %v %v", got.MaxNs, got.MeanNs, h.Max(), h.Mean())
	}
	last := got.Points[len(got.Points)-1]
	if last.Percentile != 100 {
		t.Errorf("last percentile %v", last.Percentile)
	}
	// The point at or just above p99 is within hdr precision of the true p99.
	for _, p := range got.Points {
		if p.Percentile >= 99 {
			if want := float64(h.ValueAtQuantile(p.Percentile)); rel(p.ValueNs, want) > 2e-3 {
				t.Errorf("p%.4f = %v ns, want ≈ %v", p.Percentile, p.ValueNs, want)
			}
			break
		}
	}
	for i := 1; i < len(got.Points); i++ {
		if got.Points[i].Percentile < got.Points[i-1].Percentile {
			t.Fatalf("points not sorted at %d", i)
		}
	}
}

func rel(a, b float64) float64 {
	if b == 0 {
		return a
	}
	d := (a - b) / b
	if d < 0 {
		return -d
	}
	return d
}

func TestParseHgrmCSVAndErrors(t *testing.T) {
	csv := `"Value","Percentile","TotalCount","1/(1-Percentile)"
1.000,0.000000000000,6,1.00
14.943,0.500000000000,100002,2.00
7659.519,1.000000000000,200000,Infinity
`
	got, err := ParseHgrm(strings.NewReader(csv), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []SpectrumPoint{{0, 1}, {50, 14.943}, {100, 7659.519}}
	if len(got.Points) != 3 {
		t.Fatalf("points %+v", got.Points)
	}
	for i := range want {
		if got.Points[i] != want[i] {
			t.Errorf("point %d = %+v, want %+v", i, got.Points[i], want[i])
		}
	}
	for name, text := range map[string]string{
		"empty":       "",
		"only header": " Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n",
		"three cols":  "1.0 0.5 10\n",
		"not numbers": "a b c d\n",
		"percentile":  "1.0 1.5 10 inf\n",
	} {
		if _, err := ParseHgrm(strings.NewReader(text), 1); !errors.Is(err, ErrBadHgrm) {
			t.Errorf("%s: err = %v, want ErrBadHgrm", name, err)
		}
	}
}

func TestCellSpectrum(t *testing.T) {
	dir := t.TempDir()
	c := sampleCells()[0]
	// Stored spectrum wins.
	pts, err := CellSpectrum(dir, &c, "e2e")
	if err != nil || len(pts) != 3 {
		t.Fatalf("stored: %v %v", pts, err)
	}
	// File named in Files.Hgrm, in µs (HgrmUnitNs 1000).
	c.Spectrum = nil
	hgrm := " Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n     100.000     0.000000       1         1.00\n     2100.000     0.990000       99        100.00\n"
	if err := os.WriteFile(filepath.Join(dir, c.Files.Hgrm["e2e"]), []byte(hgrm), 0o644); err != nil {
		t.Fatal(err)
	}
	pts, err = CellSpectrum(dir, &c, "e2e")
	if err != nil || len(pts) != 2 || pts[1] != (SpectrumPoint{99, 2100000}) {
		t.Fatalf("from file: %v %v", pts, err)
	}
	// Conventional name when Files.Hgrm is empty; missing → ErrNoSpectrum.
	c.Files = CellFiles{}
	if err := os.WriteFile(filepath.Join(dir, HgrmName(c.Name, c.Rep, "append")), []byte(hgrm), 0o644); err != nil {
		t.Fatal(err)
	}
	if pts, err := CellSpectrum(dir, &c, "append"); err != nil || pts[1].ValueNs != 2100 {
		t.Fatalf("conventional name: %v %v", pts, err)
	}
	if _, err := CellSpectrum(dir, &c, "flush"); !errors.Is(err, ErrNoSpectrum) {
		t.Fatalf("missing: %v", err)
	}
	c.Files.Hgrm = map[string]string{"e2e": "../escape.hgrm"}
	if _, err := CellSpectrum(dir, &c, "e2e"); err == nil {
		t.Fatal("path outside the run directory accepted")
	}
}

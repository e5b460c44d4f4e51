package plots

import (
	"bytes"
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/result"
)

func TestServiceVsResponse(t *testing.T) {
	spec := func(scale float64) []result.SpectrumPoint {
		return []result.SpectrumPoint{{Percentile: 50, ValueNs: 1e6 * scale}, {Percentile: 99, ValueNs: 5e6 * scale}, {Percentile: 99.9, ValueNs: 9e6 * scale}}
	}
	closed := result.Cell{Name: "path=mmap/flush=group", Ops: 1, MsgPerSec: 1, Spectrum: map[string][]result.SpectrumPoint{"service": spec(1)}}
	if _, err := ServiceVsResponse([]result.Cell{closed}); !errors.Is(err, ErrNoData) {
		t.Fatalf("closed-loop cell: %v, want ErrNoData", err)
	}
	open := closed
	open.Spectrum = map[string][]result.SpectrumPoint{"service": spec(1), "response": spec(100)}
	f, err := ServiceVsResponse([]result.Cell{open})
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "service-vs-response" || len(f.Panels[0][0].Title.Text) == 0 {
		t.Fatalf("figure %s", f.Name)
	}
	var buf bytes.Buffer
	if err := f.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"service time", "response time"} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Fatalf("SVG lacks %q", want)
		}
	}
}

func TestEndToEnd(t *testing.T) {
	spec := func(scale float64) []result.SpectrumPoint {
		return []result.SpectrumPoint{{Percentile: 50, ValueNs: 1e6 * scale}, {Percentile: 99, ValueNs: 5e6 * scale}, {Percentile: 99.9, ValueNs: 9e6 * scale}}
	}
	c := result.Cell{Name: "path=mmap/flush=group", Ops: 1, MsgPerSec: 1, Spectrum: map[string][]result.SpectrumPoint{"service": spec(1)}}
	if _, err := EndToEnd([]result.Cell{c}); !errors.Is(err, ErrNoData) {
		t.Fatalf("no consumer: %v, want ErrNoData", err)
	}
	c.Spectrum["e2e"] = spec(3)
	f, err := EndToEnd([]result.Cell{c})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"end to end (tailing consumer)", "producer service time", "End-to-end latency"} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Fatalf("SVG lacks %q", want)
		}
	}
}

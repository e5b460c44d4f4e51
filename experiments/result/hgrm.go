package result

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Hgrm is a parsed HdrHistogram percentile distribution (.hgrm), values
// converted to ns.
type Hgrm struct {
	Points     []SpectrumPoint // Percentile in [0,100], ascending
	MeanNs     float64         // from the footer; 0 when absent
	MaxNs      float64
	TotalCount int64
}

// ParseHgrm reads the text that HdrHistogram's outputPercentileDistribution
// (Java) or PercentilesPrint (hdrhistogram-go) writes:
//
//	 Value	Percentile	TotalCount	1/(1-Percentile)
//
//	      1.000     0.000000            6         1.00
//	   7659.519     1.000000       200000          inf
//	#[Mean    =       22.077, StdDeviation   =       53.624]
//	#[Max     =     7659.519, Total count    =       200000]
//
// and its CSV form ("Value","Percentile","TotalCount","1/(1-Percentile)").
// unitNs is how many ns one value unit is (the valueScale given to the
// writer; 0 means 1). The Percentile column is a fraction; the points carry
// it as a percent.
func ParseHgrm(r io.Reader, unitNs float64) (Hgrm, error) {
	if unitNs == 0 {
		unitNs = 1
	}
	var h Hgrm
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		switch {
		case text == "":
			continue
		case strings.HasPrefix(text, "#["):
			parseHgrmFooter(text, unitNs, &h)
			continue
		}
		f := strings.Fields(strings.ReplaceAll(text, ",", " "))
		if len(f) != 4 {
			return Hgrm{}, fmt.Errorf("%w: line %d: %d fields", ErrBadHgrm, line, len(f))
		}
		v, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			if strings.Contains(f[0], "Value") { // header row
				continue
			}
			return Hgrm{}, fmt.Errorf("%w: line %d: %q", ErrBadHgrm, line, text)
		}
		if p < 0 || p > 1 || v < 0 {
			return Hgrm{}, fmt.Errorf("%w: line %d: percentile %v value %v out of range", ErrBadHgrm, line, p, v)
		}
		h.Points = append(h.Points, SpectrumPoint{Percentile: p * 100, ValueNs: v * unitNs})
	}
	if err := sc.Err(); err != nil {
		return Hgrm{}, fmt.Errorf("result: read hgrm: %w", err)
	}
	if len(h.Points) == 0 {
		return Hgrm{}, fmt.Errorf("%w: no data rows", ErrBadHgrm)
	}
	slices.SortStableFunc(h.Points, func(a, b SpectrumPoint) int {
		switch {
		case a.Percentile < b.Percentile:
			return -1
		case a.Percentile > b.Percentile:
			return 1
		}
		return 0
	})
	return h, nil
}

// parseHgrmFooter reads "#[Mean = x, StdDeviation = y]" and
// "#[Max = x, Total count = n]"; anything else is ignored.
func parseHgrmFooter(text string, unitNs float64, h *Hgrm) {
	body := strings.TrimSuffix(strings.TrimPrefix(text, "#["), "]")
	for _, kv := range strings.Split(body, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue
		}
		switch k {
		case "Mean":
			h.MeanNs = x * unitNs
		case "Max":
			h.MaxNs = x * unitNs
		case "Total count":
			h.TotalCount = int64(x)
		}
	}
}

// CellSpectrum returns the percentile spectrum of a cell's metric: the
// stored Cell.Spectrum when present, else the cell's .hgrm file (named in
// Files.Hgrm, or HgrmName by convention) read from runDir. It returns an
// error wrapping ErrNoSpectrum when there is neither.
func CellSpectrum(runDir string, c *Cell, metric string) ([]SpectrumPoint, error) {
	if pts := c.Spectrum[metric]; len(pts) > 0 {
		return pts, nil
	}
	name := c.Files.Hgrm[metric]
	if name == "" {
		name = HgrmName(c.Name, c.Rep, metric)
	}
	if !filepath.IsLocal(name) {
		return nil, fmt.Errorf("result: cell %q: hgrm path %q must be relative to the run directory", c.Name, name)
	}
	f, err := os.Open(filepath.Join(runDir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: cell %q metric %q", ErrNoSpectrum, c.Name, metric)
	}
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	defer f.Close()
	h, err := ParseHgrm(f, c.Files.HgrmUnitNs)
	if err != nil {
		return nil, fmt.Errorf("result: %s: %w", name, err)
	}
	return h.Points, nil
}

package result

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// A cell's interval log (Files.Hlog) is HdrHistogram's .hlog text: one
// compressed histogram per metric (Tag) per reporting interval, values in
// ns. Runs keep it gzip'd (<stem>.hlog.gz); older runs have it plain. The
// .hgrm percentile tables are derived from it (DeriveHgrm), in ms as
// HdrHistogram's tools assume.

// ErrNoHlog is returned when a cell has no interval log.
var ErrNoHlog = errors.New("result: no interval log")

// HgrmUnitMs is the .hgrm value unit written by DeriveHgrm: 1 ms in ns.
const HgrmUnitMs = 1e6

// HlogInterval is one interval of one metric, times in ms since the epoch.
type HlogInterval struct {
	Tag            string
	StartMs, EndMs int64
	Hist           *hdr.Histogram
}

// hlogPath finds a cell's log: Files.Hlog, the conventional name, and each
// with or without ".gz".
func hlogPath(runDir string, c *Cell) (string, error) {
	var names []string
	if c.Files.Hlog != "" {
		names = append(names, c.Files.Hlog)
	}
	names = append(names, HlogName(c.Name, c.Rep)+".gz", HlogName(c.Name, c.Rep))
	for _, n := range slices.Clone(names) {
		if strings.HasSuffix(n, ".gz") {
			names = append(names, strings.TrimSuffix(n, ".gz"))
		} else {
			names = append(names, n+".gz")
		}
	}
	for _, n := range names {
		if !filepath.IsLocal(n) {
			return "", fmt.Errorf("result: cell %q: hlog path %q must be relative to the run directory", c.Name, n)
		}
		p := filepath.Join(runDir, n)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: cell %q rep %d", ErrNoHlog, c.Name, c.Rep)
}

// ReadCellHlog reads every interval of a cell's log.
func ReadCellHlog(runDir string, c *Cell) ([]HlogInterval, error) {
	p, err := hlogPath(runDir, c)
	if err != nil {
		return nil, err
	}
	return ReadHlogFile(p)
}

// ReadHlogFile reads a .hlog or .hlog.gz file.
func ReadHlogFile(path string) ([]HlogInterval, error) {
	f, err := openDecompressed(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNoHlog, path)
	}
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	defer f.Close()
	return ReadHlog(f)
}

// ReadHlog reads .hlog text (the library's reader).
func ReadHlog(r io.Reader) ([]HlogInterval, error) {
	lr := hdr.NewHistogramLogReader(r)
	var out []HlogInterval
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			return out, fmt.Errorf("result: .hlog interval %d: %w", len(out)+1, err)
		}
		if h == nil {
			return out, nil
		}
		out = append(out, HlogInterval{Tag: h.Tag(), StartMs: h.StartTimeMs(), EndMs: h.EndTimeMs(), Hist: h})
	}
}

// MergeHlog merges the intervals tagged tag into one histogram (nil when
// there are none).
func MergeHlog(ivs []HlogInterval, tag string) *hdr.Histogram {
	var out *hdr.Histogram
	for _, iv := range ivs {
		if iv.Tag != tag {
			continue
		}
		if out == nil {
			out = hdr.New(iv.Hist.LowestTrackableValue(), iv.Hist.HighestTrackableValue(), int(iv.Hist.SignificantFigures()))
		}
		out.Merge(iv.Hist)
	}
	return out
}

// HlogTags lists the metrics of a log, sorted.
func HlogTags(ivs []HlogInterval) []string {
	var tags []string
	for _, iv := range ivs {
		if !slices.Contains(tags, iv.Tag) {
			tags = append(tags, iv.Tag)
		}
	}
	slices.Sort(tags)
	return tags
}

// WriteHgrmMs prints h (values in ns) as an .hgrm table in ms, 5 ticks per
// half distance.
func WriteHgrmMs(w io.Writer, h *hdr.Histogram) error {
	if _, err := h.PercentilesPrint(w, 5, HgrmUnitMs); err != nil {
		return fmt.Errorf("result: write hgrm: %w", err)
	}
	return nil
}

// DeriveHgrm writes <stem>.<metric>.hgrm (ms) into outDir for every cell
// of the run that has an interval log, and returns the paths written.
// Cells without a log are skipped.
func DeriveHgrm(run *Run, outDir string) ([]string, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	var paths []string
	for i := range run.Result.Cells {
		c := &run.Result.Cells[i]
		ivs, err := ReadCellHlog(run.Dir, c)
		if errors.Is(err, ErrNoHlog) {
			continue
		}
		if err != nil {
			return paths, err
		}
		for _, tag := range HlogTags(ivs) {
			h := MergeHlog(ivs, tag)
			if h == nil || h.TotalCount() == 0 {
				continue
			}
			var b strings.Builder
			if err := WriteHgrmMs(&b, h); err != nil {
				return paths, err
			}
			p := filepath.Join(outDir, HgrmName(c.Name, c.Rep, tag))
			if err := WriteFileAtomic(p, []byte(b.String()), 0o644); err != nil {
				return paths, err
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}

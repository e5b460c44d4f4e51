package hist

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// WriteHgrm prints h as an .hgrm percentile table (the library's
// PercentilesPrint): values divided by cfg.HgrmScale (ms by default),
// cfg.HgrmTicks ticks per half distance. The output is what the HdrHistogram
// plotter and wrk2 use.
func WriteHgrm(w io.Writer, h *hdr.Histogram, cfg Config) error {
	if cfg.validate() != nil {
		cfg = DefaultConfig()
	}
	if _, err := h.PercentilesPrint(w, cfg.HgrmTicks, cfg.HgrmScale); err != nil {
		return fmt.Errorf("hist: writing .hgrm: %w", err)
	}
	return nil
}

// WriteHgrmFiles writes one <prefix><metric>.hgrm per metric with samples
// into dir (e.g. prefix "latency-" gives latency-service.hgrm) through a
// temporary file and a rename, and returns the paths written.
func (c *Collector) WriteHgrmFiles(dir, prefix string) ([]string, error) {
	var paths []string
	for _, name := range c.Metrics() {
		h := c.metrics[name].cumulative
		if h.TotalCount() == 0 {
			continue
		}
		path := filepath.Join(dir, prefix+name+".hgrm")
		if err := writeFileAtomic(path, func(w io.Writer) error { return WriteHgrm(w, h, c.cfg) }); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("hist: %w", err)
	}
	bw := bufio.NewWriter(f)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("hist: writing %s: %w", path, err)
	}
	return nil
}

// LoggedInterval is one line read back from a .hlog.
type LoggedInterval struct {
	Tag   string
	Start time.Time // absolute, millisecond precision
	End   time.Time
	Hist  *hdr.Histogram
}

// ErrLog is returned for an unreadable .hlog.
var ErrLog = errors.New("hist: bad .hlog")

// ReadLog reads every interval of a .hlog (the library's reader: V2 payloads
// only, StartTime/BaseTime headers honoured).
func ReadLog(r io.Reader) ([]LoggedInterval, error) {
	lr := hdr.NewHistogramLogReader(r)
	var out []LoggedInterval
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			return out, fmt.Errorf("%w: interval %d: %v", ErrLog, len(out)+1, err)
		}
		if h == nil {
			return out, nil
		}
		out = append(out, LoggedInterval{Tag: h.Tag(), Start: time.UnixMilli(h.StartTimeMs()),
			End: time.UnixMilli(h.EndTimeMs()), Hist: h})
	}
}

// MergeLogged merges the intervals tagged tag whose start lies in
// [from, to) (zero times: unbounded) into one histogram of geometry cfg; the
// second result counts values outside cfg's range (dropped). This is the
// core of an hlog2hgrm tool.
func MergeLogged(ivs []LoggedInterval, tag string, from, to time.Time, cfg Config) (*hdr.Histogram, int64) {
	if cfg.validate() != nil {
		cfg = DefaultConfig()
	}
	out := cfg.newHistogram()
	var dropped int64
	for _, iv := range ivs {
		if iv.Tag != tag || (!from.IsZero() && iv.Start.Before(from)) || (!to.IsZero() && !iv.Start.Before(to)) {
			continue
		}
		if d := out.Merge(iv.Hist); d > 0 && dropped < math.MaxInt64-d {
			dropped += d
		}
	}
	return out, dropped
}

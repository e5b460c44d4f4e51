package hist

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Collector merges its Recorders every tick.
type Collector struct {
	cfg Config

	mu        sync.Mutex // guards recorders
	recorders []*recorderCore

	// Reporter-goroutine state.
	metrics      map[string]*metricState
	counters     map[string]int64 // measured totals
	started      bool
	warmup       bool // Auto samples are warm-up samples
	intervalFrom time.Time
	measureFrom  time.Time
	lastTick     time.Time
	takenBuf     []taken

	log         *hdr.HistogramLogWriter
	logStarted  bool
	logErr      error
	hadMeasured bool
}

type metricState struct {
	all        *hdr.Histogram // this interval, both phases (progress line)
	allBytes   int64
	allClamped int64
	meas       *hdr.Histogram // this interval, measured samples only
	measBytes  int64
	measClamp  int64
	cumulative *hdr.Histogram
	bytes      int64
	clamped    int64
}

// NewCollector returns an empty Collector; an invalid cfg is replaced by
// DefaultConfig.
func NewCollector(cfg Config) *Collector {
	if cfg.validate() != nil {
		cfg = DefaultConfig()
	}
	return &Collector{cfg: cfg, metrics: map[string]*metricState{}, counters: map[string]int64{}}
}

// Config returns the geometry in use.
func (c *Collector) Config() Config { return c.cfg }

// NewRecorder returns a Recorder drained by every Tick.
func (c *Collector) NewRecorder() *Recorder {
	r := newRecorder(c.cfg)
	c.mu.Lock()
	c.recorders = append(c.recorders, r.core)
	c.mu.Unlock()
	return r
}

// SetLog makes measured intervals go to w as a .hlog. Call before Start.
func (c *Collector) SetLog(w io.Writer) { c.log = hdr.NewHistogramLogWriter(w) }

// Start begins the first interval at now; measuring starts at measureFrom
// (at or before now: at once). Samples recorded before Start belong to the
// first interval.
func (c *Collector) Start(now, measureFrom time.Time) {
	if measureFrom.Before(now) {
		measureFrom = now
	}
	c.started, c.intervalFrom, c.lastTick, c.measureFrom = true, now, now, measureFrom
	c.warmup = measureFrom.After(now)
}

// MeasureFrom is the end of warm-up.
func (c *Collector) MeasureFrom() time.Time { return c.measureFrom }

// Measuring reports whether Auto samples are measured now.
func (c *Collector) Measuring() bool { return c.started && !c.warmup }

// EndWarmup is Tick at the end of warm-up: it closes the warm-up interval and
// makes Auto samples measured from now on (moving the measuring start to now
// if it was later).
func (c *Collector) EndWarmup(now time.Time) Interval {
	if !c.started {
		c.Start(now, now)
	}
	iv := c.Tick(now)
	if c.warmup {
		c.warmup = false
		if c.measureFrom.After(now) {
			c.measureFrom = now
		}
	}
	return iv
}

// Tick closes the interval ending at now: it drains every Recorder, reports
// all samples, and logs and accumulates the measured ones (Measured samples,
// and Auto samples once warm-up is over). An interval is flagged Warmup when
// it began before the measuring start.
func (c *Collector) Tick(now time.Time) Interval {
	if !c.started {
		c.Start(now, now)
	}
	// A ticker's time is when it fired, which can precede a tick handled
	// just before it (the end of warm-up): intervals never run backwards.
	if now.Before(c.intervalFrom) {
		now = c.intervalFrom
	}
	c.mu.Lock()
	recs := append([]*recorderCore(nil), c.recorders...)
	c.mu.Unlock()

	counters := map[slotKey]int64{}
	for _, r := range recs {
		c.takenBuf = r.swap(c.takenBuf[:0], counters)
		for _, t := range c.takenBuf {
			m := c.metric(t.key.name)
			m.all.Merge(t.h) // same geometry: nothing is dropped
			m.allBytes += t.bytes
			m.allClamped += t.clamped
			if c.measured(t.key.phase) {
				m.meas.Merge(t.h)
				m.measBytes += t.bytes
				m.measClamp += t.clamped
			}
		}
		r.giveBack(c.takenBuf)
	}

	iv := Interval{Start: c.intervalFrom, End: now, Warmup: c.intervalFrom.Before(c.measureFrom),
		Metrics: make(map[string]Snapshot, len(c.metrics)), Counters: map[string]int64{}}
	for k, v := range counters {
		iv.Counters[k.name] += v
		if c.measured(k.phase) {
			c.counters[k.name] += v
		}
	}
	secs := now.Sub(c.intervalFrom).Seconds()
	logFrom := c.intervalFrom
	if logFrom.Before(c.measureFrom) {
		logFrom = c.measureFrom
	}
	// An interval that ends before measuring starts keeps its Measured
	// samples for the next one, so the .hlog never holds a line stamped
	// before its BaseTime and always sums to the cumulative histogram.
	carry := !now.After(c.measureFrom)
	for _, name := range c.Metrics() {
		m := c.metrics[name]
		s := SnapshotOf(name, m.all, m.allBytes, secs)
		s.Clamped = m.allClamped
		iv.Metrics[name] = s
		m.all.Reset()
		m.allBytes, m.allClamped = 0, 0
		if carry {
			continue
		}
		c.logInterval(name, m.meas, logFrom, now)
		m.cumulative.Merge(m.meas)
		m.bytes += m.measBytes
		m.clamped += m.measClamp
		m.meas.Reset()
		m.measBytes, m.measClamp = 0, 0
	}
	if !carry {
		c.hadMeasured = true
	}
	if c.warmup && !now.Before(c.measureFrom) {
		c.warmup = false
	}
	c.intervalFrom, c.lastTick = now, now
	return iv
}

func (c *Collector) measured(p Phase) bool {
	return p == Measured || (p == Auto && !c.warmup)
}

func (c *Collector) metric(name string) *metricState {
	m := c.metrics[name]
	if m == nil {
		m = &metricState{all: c.cfg.newHistogram(), meas: c.cfg.newHistogram(), cumulative: c.cfg.newHistogram()}
		c.metrics[name] = m
	}
	return m
}

// Metrics lists the metric names seen so far, sorted.
func (c *Collector) Metrics() []string {
	names := make([]string, 0, len(c.metrics))
	for n := range c.metrics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (c *Collector) logInterval(name string, h *hdr.Histogram, from, to time.Time) {
	if c.log == nil || c.logErr != nil {
		return
	}
	if !c.logStarted {
		c.logStarted = true
		startMs := c.measureFrom.UnixMilli()
		baseMs := startMs - startMs%1000
		c.log.SetBaseTime(baseMs)
		for _, f := range []func() error{
			c.log.OutputLogFormatVersion,
			func() error { return c.log.OutputStartTime(startMs) },
			func() error { return c.log.OutputBaseTime(baseMs) },
			func() error { return c.log.OutputComment("[values in ns; Interval_Max in ms; Tag = metric]") },
			c.log.OutputLegend,
		} {
			if err := f(); err != nil {
				c.logErr = fmt.Errorf("hist: writing .hlog header: %w", err)
				return
			}
		}
	}
	h.SetTag(name) // after any Reset, which clears tag and times
	h.SetStartTimeMs(from.UnixMilli())
	h.SetEndTimeMs(to.UnixMilli())
	if err := c.log.OutputIntervalHistogram(h); err != nil {
		c.logErr = fmt.Errorf("hist: writing .hlog interval: %w", err)
	}
}

// LogErr returns the first .hlog write error (logging stops after it).
func (c *Collector) LogErr() error { return c.logErr }

// Summary returns the measured totals: one Snapshot per metric over
// [measuring start, last tick], and the counters.
func (c *Collector) Summary() Summary {
	s := Summary{Start: c.measureFrom, End: c.lastTick, Metrics: map[string]Snapshot{}, Counters: map[string]int64{}}
	if !c.hadMeasured || s.End.Before(s.Start) {
		s.End = s.Start
	}
	secs := s.End.Sub(s.Start).Seconds()
	for name, m := range c.metrics {
		snap := SnapshotOf(name, m.cumulative, m.bytes, secs)
		snap.Clamped = m.clamped
		s.Metrics[name] = snap
	}
	for k, v := range c.counters {
		s.Counters[k] = v
	}
	return s
}

// Histogram returns a copy of metric's cumulative measured histogram (nil if
// the metric was never recorded).
func (c *Collector) Histogram(metric string) *hdr.Histogram {
	m := c.metrics[metric]
	if m == nil {
		return nil
	}
	return m.cumulative.Clone()
}

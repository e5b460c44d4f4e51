package hist

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Phase says which part of a run a sample belongs to.
type Phase uint8

// The phases. Auto samples take the Collector's phase at the tick that drains
// them (samples in flight at the boundary land where they are drained);
// generators that know a sample's intended time classify it exactly with
// Recorder.In.
const (
	Auto Phase = iota
	Warmup
	Measured
)

// PhaseOf classifies an event at t against the end of warm-up.
func PhaseOf(t, measureFrom time.Time) Phase {
	if t.Before(measureFrom) {
		return Warmup
	}
	return Measured
}

// A Recorder collects samples between two ticks of its Collector. The views
// returned by In share its storage.
type Recorder struct {
	core  *recorderCore
	phase Phase
	views *[3]*Recorder
}

type recorderCore struct {
	cfg Config

	mu       sync.Mutex
	slots    map[slotKey]*slot
	counters map[slotKey]int64
}

type slotKey struct {
	phase Phase
	name  string
}

type slot struct {
	active  *hdr.Histogram
	spare   *hdr.Histogram // reset, handed in at the next swap; nil until the first
	bytes   int64
	clamped int64
}

func newRecorder(cfg Config) *Recorder {
	core := &recorderCore{cfg: cfg, slots: map[slotKey]*slot{}, counters: map[slotKey]int64{}}
	views := new([3]*Recorder)
	for p := range views {
		views[p] = &Recorder{core: core, phase: Phase(p), views: views}
	}
	return views[Auto]
}

// In returns the view of r whose samples and counters belong to phase p.
func (r *Recorder) In(p Phase) *Recorder {
	if p > Measured {
		p = Auto
	}
	return r.views[p]
}

// Record adds one latency sample to metric.
func (r *Recorder) Record(metric string, d time.Duration) { r.record(metric, int64(d), 0, 0) }

// RecordSized adds one sample and counts bytes for the metric's MB/s.
func (r *Recorder) RecordSized(metric string, d time.Duration, bytes int) {
	r.record(metric, int64(d), int64(bytes), 0)
}

// RecordCorrected adds one sample with hdrhistogram's coordinated-omission
// back-fill for a closed loop expected to issue one request every interval
// (RecordCorrectedValue). Prefer intended-time latencies; this exists for the
// measurement-honesty comparison.
func (r *Recorder) RecordCorrected(metric string, d, interval time.Duration) {
	r.record(metric, int64(d), 0, int64(interval))
}

// Add adds n to a counter.
func (r *Recorder) Add(counter string, n int64) {
	c := r.core
	c.mu.Lock()
	c.counters[slotKey{r.phase, MetricName(counter)}] += n
	c.mu.Unlock()
}

func (r *Recorder) record(metric string, v, bytes, interval int64) {
	clamped := false
	if v < 0 {
		v = 0
	}
	c := r.core
	if v > c.cfg.Highest {
		v, clamped = c.cfg.Highest, true
	}
	c.mu.Lock()
	k := slotKey{r.phase, metric}
	s := c.slots[k]
	if s == nil {
		canon := slotKey{r.phase, MetricName(metric)}
		if s = c.slots[canon]; s == nil {
			s = &slot{active: c.cfg.newHistogram()}
			c.slots[canon] = s
		}
		if canon != k {
			c.slots[k] = s // alias: fast path for the caller's spelling
		}
	}
	if interval > 0 {
		// Back-filled values are below v, hence in range.
		_ = s.active.RecordCorrectedValue(v, interval)
	} else {
		_ = s.active.RecordValue(v)
	}
	s.bytes += bytes
	if clamped {
		s.clamped++
	}
	c.mu.Unlock()
}

// taken is what a swap hands to the reporter.
type taken struct {
	key     slotKey
	h       *hdr.Histogram
	bytes   int64
	clamped int64
}

// swap exchanges every active histogram for a reset spare and returns the
// filled ones and the counters.
func (c *recorderCore) swap(out []taken, counters map[slotKey]int64) []taken {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, s := range c.slots {
		if MetricName(k.name) != k.name {
			continue // alias of a canonical slot
		}
		spare := s.spare
		if spare == nil {
			spare = c.cfg.newHistogram()
		}
		out = append(out, taken{key: k, h: s.active, bytes: s.bytes, clamped: s.clamped})
		s.active, s.spare, s.bytes, s.clamped = spare, nil, 0, 0
	}
	for k, v := range c.counters {
		counters[k] += v
		delete(c.counters, k)
	}
	return out
}

// giveBack returns reset histograms as spares.
func (c *recorderCore) giveBack(ts []taken) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range ts {
		t.h.Reset()
		if s := c.slots[t.key]; s != nil && s.spare == nil {
			s.spare = t.h
		}
	}
}

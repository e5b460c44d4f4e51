package pagemodel

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrInput marks an input the model cannot use.
var ErrInput = errors.New("pagemodel: bad input")

// DefaultFlushInterval is the async flush period when Input leaves it 0
// (RocketMQ's flushIntervalCommitLog).
const DefaultFlushInterval = 500 * time.Millisecond

// Input is what the model predicts from: the workload's append rate, the
// store's layout, write path and flush policy, the page-cache budget and
// the kernel's writeback settings.
type Input struct {
	// AppendBps is W, the bytes appended to the log per second (message
	// rate × bytes per stored record), > 0.
	AppendBps float64 `json:"append_bps"`
	// SegmentSize is S, bytes per segment file, > 0.
	SegmentSize int64 `json:"segment_size"`
	// Path is the write path: mmap, pwrite, pool (buffered), direct
	// (O_DIRECT) or uncached (RWF_DONTCACHE).
	Path string `json:"path"`
	// Flush is sync, group, rmqgroup (each append waits for its flush),
	// async (the store flushes every FlushInterval) or none (only the
	// kernel writes back).
	Flush         string        `json:"flush"`
	FlushInterval time.Duration `json:"flush_interval"`
	// Budget is the memory cgroup's limit (0: none); AnonBytes the
	// anonymous memory charged to it beside the page cache.
	Budget    int64 `json:"budget"`
	AnonBytes int64 `json:"anon_bytes"`
	// Retain: segments wholly more than Retain behind the log's head are
	// deleted (0 keeps all).
	Retain int64 `json:"retain"`
	// DropInterval > 0: the store's pages are dropped (fadvise DONTNEED)
	// this often.
	DropInterval time.Duration `json:"drop_interval"`
	// DeviceBps is D, the rate writeback reaches the device; 0 means
	// unknown, taken as keeping up with any W.
	DeviceBps float64 `json:"device_bps"`
	Kernel    Kernel  `json:"kernel"`
	// Horizon and Step: the prediction's span from the first append and
	// its sampling step.
	Horizon time.Duration `json:"horizon"`
	Step    time.Duration `json:"step"`
}

// Segment is one segment's predicted resident and dirty bytes at each of
// the Prediction's times (-1 when the segment does not exist then).
type Segment struct {
	Name     string  `json:"name"` // the start offset, 20 digits (the store's file name)
	Start    int64   `json:"start"`
	Resident []int64 `json:"resident"`
	Dirty    []int64 `json:"dirty"`
}

// Prediction is the model's answer. Times are seconds from the first
// append; onsets are -1 when they do not happen.
type Prediction struct {
	Input    Input     `json:"input"`
	T        []float64 `json:"t"`
	Resident []int64   `json:"resident"` // bytes, summed over segments
	Dirty    []int64   `json:"dirty"`
	Segments []Segment `json:"segments"`
	// BackgroundAt is when the kernel's flusher starts writing the store's
	// pages back (dirty crosses Background, or the first pages expire);
	// ThrottleAt when appends are throttled (dirty reaches ThrottleLevel).
	BackgroundAt float64 `json:"background_at"`
	ThrottleAt   float64 `json:"throttle_at"`
	// The levels the onsets are computed from, in bytes.
	Dirtyable     int64    `json:"dirtyable"`
	Background    int64    `json:"background"`
	Hard          int64    `json:"hard"`
	ThrottleLevel int64    `json:"throttle_level"`
	ResidentCap   int64    `json:"resident_cap"`
	Notes         []string `json:"notes,omitempty"`
}

// model holds the derived constants of one Input; state evaluates it.
type model struct {
	in                          Input
	w, d                        float64 // append and device rates, bytes/s
	s                           float64
	buffered, waits             bool
	tEngine, tCross, tExp, tOn  float64 // onsets, s (+Inf: never)
	bg, hard, thLevel, steady   float64
	setpoint, residentCap, wAft float64
	tThrottle, tBackground      float64
}

var inf = math.Inf(1)

// Predict evaluates the model (see the package documentation for its
// equations).
func Predict(in Input) (Prediction, error) {
	m, err := newModel(in)
	if err != nil {
		return Prediction{}, err
	}
	p := Prediction{Input: m.in, BackgroundAt: never(m.tBackground), ThrottleAt: never(m.tThrottle),
		Background: int64(m.bg), Hard: int64(m.hard), ThrottleLevel: int64(m.thLevel), ResidentCap: int64(m.residentCap)}
	p.Dirtyable = m.dirtyable()
	p.Notes = m.notes()
	n := int(m.in.Horizon / m.in.Step)
	if time.Duration(n)*m.in.Step < m.in.Horizon {
		n++ // the last sample is at the horizon
	}
	segIdx := map[int64]int{}
	for i := 0; i <= n; i++ {
		t := min(time.Duration(i)*m.in.Step, m.in.Horizon).Seconds()
		head, res, dirty := m.state(t)
		p.T = append(p.T, t)
		var totR, totD int64
		for k := int64(0); float64(k)*m.s < head; k++ {
			lo, hi := float64(k)*m.s, float64(k+1)*m.s
			j, ok := segIdx[k]
			if !ok {
				j = len(p.Segments)
				segIdx[k] = j
				p.Segments = append(p.Segments, Segment{Name: fmt.Sprintf("%020d", int64(lo)), Start: int64(lo),
					Resident: fill(i, -1), Dirty: fill(i, -1)})
			}
			sg := &p.Segments[j]
			if m.in.Retain > 0 && hi <= head-float64(m.in.Retain) {
				sg.Resident, sg.Dirty = append(sg.Resident, -1), append(sg.Dirty, -1)
				continue
			}
			r, d := int64(overlap(head-res, head, lo, hi)), int64(overlap(head-dirty, head, lo, hi))
			sg.Resident, sg.Dirty = append(sg.Resident, r), append(sg.Dirty, d)
			totR, totD = totR+r, totD+d
		}
		for j := range p.Segments {
			for len(p.Segments[j].Resident) < i+1 {
				p.Segments[j].Resident = append(p.Segments[j].Resident, -1)
				p.Segments[j].Dirty = append(p.Segments[j].Dirty, -1)
			}
		}
		p.Resident, p.Dirty = append(p.Resident, totR), append(p.Dirty, totD)
	}
	return p, nil
}

func newModel(in Input) (*model, error) {
	if !(in.AppendBps > 0) || in.SegmentSize <= 0 {
		return nil, fmt.Errorf("%w: append rate %v B/s and segment size %d must be positive", ErrInput, in.AppendBps, in.SegmentSize)
	}
	if in.DeviceBps < 0 || in.Budget < 0 || in.Retain < 0 || in.Budget > 0 && in.AnonBytes >= in.Budget {
		return nil, fmt.Errorf("%w: device rate %v, budget %d (anonymous %d), retain %d", ErrInput, in.DeviceBps, in.Budget, in.AnonBytes, in.Retain)
	}
	if in.Kernel.Dirtyable <= 0 {
		return nil, fmt.Errorf("%w: no dirtyable memory in the kernel settings", ErrInput)
	}
	if in.Horizon <= 0 {
		in.Horizon = time.Minute
	}
	if in.Step <= 0 {
		in.Step = time.Second
	}
	if in.Flush == "async" && in.FlushInterval <= 0 {
		in.FlushInterval = DefaultFlushInterval
	}
	m := &model{in: in, w: in.AppendBps, d: in.DeviceBps, s: float64(in.SegmentSize)}
	switch in.Path {
	case "mmap", "pwrite", "pool":
		m.buffered = true
	case "uncached", "direct":
	default:
		return nil, fmt.Errorf("%w: path %q (want mmap, pwrite, pool, direct or uncached)", ErrInput, in.Path)
	}
	switch in.Flush {
	case "sync", "group", "rmqgroup":
		m.waits, m.tEngine = true, 0
	case "async":
		m.tEngine = in.FlushInterval.Seconds()
	case "none":
		m.tEngine = inf
	default:
		return nil, fmt.Errorf("%w: flush %q (want sync, group, rmqgroup, async or none)", ErrInput, in.Flush)
	}
	if in.Path == "uncached" {
		m.tEngine = 0 // RWF_DONTCACHE starts writeback of the range at each write
	}
	bg, hard := in.Kernel.Thresholds(m.dirtyable())
	m.bg, m.hard = float64(bg), float64(hard)
	freerun := (m.bg + m.hard) / 2
	m.thLevel, m.setpoint = freerun, (freerun+m.hard)/2
	m.residentCap = float64(in.Kernel.Dirtyable)
	if in.Budget > 0 {
		cache := float64(in.Budget - in.AnonBytes)
		m.residentCap = math.Min(m.residentCap, cache)
		if !in.Kernel.CgroupWriteback && cache < m.thLevel {
			// cgroup v1: the global limits exceed what the cgroup may cache;
			// its reclaim meets dirty pages and waits for their writeback.
			m.thLevel, m.setpoint = cache, cache
		}
	}
	if in.DropInterval > 0 {
		m.residentCap = math.Min(m.residentCap, m.w*in.DropInterval.Seconds()/2)
	}
	m.tCross = m.bg / m.w
	m.tExp = inf
	if p := in.Kernel.Period.Seconds(); p > 0 {
		m.tExp = math.Ceil(in.Kernel.Expire.Seconds()/p) * p
	}
	m.tOn = math.Min(m.tEngine, math.Min(m.tCross, m.tExp))
	m.steady = m.steadyDirty()
	m.tThrottle, m.tBackground = m.onsets()
	m.wAft = m.w
	if m.d > 0 && m.d < m.w {
		m.wAft = m.d
	}
	return m, nil
}

// dirtyable is the memory the dirty ratios apply to: the machine's, or
// with per-cgroup writeback the budget's page cache.
func (m *model) dirtyable() int64 {
	if m.in.Budget > 0 && m.in.Kernel.CgroupWriteback {
		return min(m.in.Kernel.Dirtyable, m.in.Budget-m.in.AnonBytes)
	}
	return m.in.Kernel.Dirtyable
}

// keepsUp reports whether writeback keeps up with appends (D unknown or
// D >= W).
func (m *model) keepsUp() bool { return m.d == 0 || m.d >= m.w }

// steadyDirty is the dirty level once writeback runs and keeps up.
func (m *model) steadyDirty() float64 {
	switch {
	case m.in.Path == "direct" || m.waits || m.in.Path == "uncached":
		return 0
	case m.in.Flush == "async":
		return math.Min(m.w*m.in.FlushInterval.Seconds()/2, m.bg)
	}
	return math.Min(m.bg, m.w*(m.in.Kernel.Expire.Seconds()+m.in.Kernel.Period.Seconds()/2))
}

// unthrottled is the dirty bytes at t ignoring throttling: W·t until
// writeback starts at tOn, then the steady level when writeback keeps
// up, or growth at W - D from W·tOn when it does not.
func (m *model) unthrottled(t float64) float64 {
	if m.in.Path == "direct" || m.waits {
		return 0
	}
	if t < m.tOn {
		return m.w * t
	}
	if m.keepsUp() {
		return m.steady
	}
	return m.w*m.tOn + (m.w-m.d)*(t-m.tOn)
}

// reach is the first time the unthrottled dirty bytes reach level
// (+Inf: never).
func (m *model) reach(level float64) float64 {
	if m.in.Path == "direct" || m.waits || level <= 0 {
		return inf
	}
	if t := level / m.w; t <= m.tOn {
		return t
	}
	if m.keepsUp() {
		return inf
	}
	return m.tOn + (level-m.w*m.tOn)/(m.w-m.d)
}

// onsets: throttling when the dirty bytes reach the throttle level; the
// kernel's background writeback when they cross the background limit, or
// at the first expiry when nothing else wrote the pages back before it.
func (m *model) onsets() (throttle, background float64) {
	throttle = m.reach(m.thLevel)
	background = m.reach(m.bg)
	if m.tExp < m.tEngine && m.tExp < background && m.in.Path != "direct" && !m.waits {
		background = m.tExp
	}
	if background > throttle && m.thLevel < m.bg {
		background = inf // held below the background limit by the budget's reclaim
	}
	return throttle, background
}

// state is the log's head, the resident and the dirty bytes at t.
func (m *model) state(t float64) (head, resident, dirty float64) {
	if t <= m.tThrottle {
		head, dirty = m.w*t, m.unthrottled(t)
	} else {
		head, dirty = m.w*m.tThrottle+m.wAft*(t-m.tThrottle), m.setpoint
	}
	switch m.in.Path {
	case "direct":
		return head, 0, 0
	case "uncached":
		return head, dirty, dirty // dropped once written back
	}
	return head, math.Min(head, math.Max(m.residentCap, dirty)), math.Min(head, dirty)
}

func (m *model) notes() []string {
	var n []string
	if m.in.DeviceBps == 0 {
		n = append(n, "device write rate unknown: writeback taken to keep up with appends (no growth of dirty pages past the background limit)")
	}
	if m.waits {
		n = append(n, "appends wait for their flush: dirty pages stay near 0 and the flush policy, not the kernel, limits the rate")
	}
	if m.in.Budget > 0 && !m.in.Kernel.CgroupWriteback {
		n = append(n, "cgroup v1: dirty limits are global; the budget bounds the cache by reclaim only")
	}
	switch m.in.Path {
	case "direct":
		n = append(n, "direct: O_DIRECT bypasses the page cache (its block cache is anonymous memory)")
	case "uncached":
		n = append(n, "uncached: pages are dropped once written back; writeback latency taken as 0")
	case "pool":
		n = append(n, "pool: the commit interval's lag before data reaches the page cache is ignored")
	}
	return n
}

func never(t float64) float64 {
	if math.IsInf(t, 1) {
		return -1
	}
	return t
}

func fill(n int, v int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// overlap is the length of [a, b) ∩ [lo, hi).
func overlap(a, b, lo, hi float64) float64 {
	return math.Max(0, math.Min(b, hi)-math.Max(a, lo))
}

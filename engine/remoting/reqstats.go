package remoting

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// LatencyBounds are the upper bounds of the buckets RequestStats sorts
// durations into: RocketMQ's rpc latency buckets (1, 3, 5, 7, 10, 100 ms,
// 1, 2, 3 s) with finer ones below a millisecond and coarser ones beyond,
// so a fast broker's sub-millisecond requests are told apart and a held
// pull (long polling) still lands in a bucket. A duration above the last
// bound is counted in the overflow bucket only.
var LatencyBounds = [...]time.Duration{
	10 * time.Microsecond, 25 * time.Microsecond, 50 * time.Microsecond,
	100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 3 * time.Millisecond, 5 * time.Millisecond, 7 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second,
	10 * time.Second, 30 * time.Second, 60 * time.Second,
}

// LatencyHist is a snapshot of one latency histogram. Buckets[i] counts the
// durations d with LatencyBounds[i-1] < d <= LatencyBounds[i] (not
// cumulative); Buckets[len(LatencyBounds)] counts those above the last bound.
type LatencyHist struct {
	Count   uint64
	Sum     time.Duration
	Buckets [len(LatencyBounds) + 1]uint64
}

// latencyHist is LatencyHist's live, lock-free form.
type latencyHist struct {
	count, sum atomic.Uint64
	buckets    [len(LatencyBounds) + 1]atomic.Uint64
}

func (h *latencyHist) observe(d time.Duration) {
	if d < 0 {
		d = 0
	}
	i := sort.Search(len(LatencyBounds), func(i int) bool { return d <= LatencyBounds[i] })
	h.buckets[i].Add(1)
	h.sum.Add(uint64(d))
	h.count.Add(1)
}

// snapshot reads the counters. Under concurrent observations Count may
// differ from the buckets' total by the observations in flight.
func (h *latencyHist) snapshot() LatencyHist {
	var s LatencyHist
	for i := range h.buckets {
		s.Buckets[i] = h.buckets[i].Load()
	}
	s.Sum = time.Duration(h.sum.Load())
	s.Count = h.count.Load()
	return s
}

// RequestLatency is the latency histogram of the requests of one code
// answered with one response code: from the first byte of the request's
// frame to the answer's write to the socket (Timings.FrameStart to
// Written), so queueing in executors, send queues and long polling count.
type RequestLatency struct {
	Code, RespCode int32
	LatencyHist
}

// StoreStages are histograms of the store's stages of the requests whose
// processor stamped them (Timings.LockWait, LockHold, FlushWait; sends to
// a store that measures them): the wait for the queue and append locks,
// the append lock's hold, and the wait for the flush policy.
type StoreStages struct {
	LockWait, LockHold, FlushWait LatencyHist
}

type codePair struct{ code, resp int32 }

// RequestStats is an Observer that keeps a latency histogram per (request
// code, response code) and histograms of the store stages. Observe is
// lock-free after a pair's first answer (a sync.Map load and a few atomic
// adds); snapshots may be taken at any time, concurrently with Observe.
// Add it to a server with AddObserver (before Start).
type RequestStats struct {
	pairs                         sync.Map // codePair → *latencyHist
	lockWait, lockHold, flushWait latencyHist
}

// NewRequestStats returns empty request statistics.
func NewRequestStats() *RequestStats { return &RequestStats{} }

// Observe records o (the Observer interface). Answers without a complete
// start and end (never the case for a server's own requests) are skipped.
func (r *RequestStats) Observe(_ *Conn, o *Observation) {
	t := &o.Timings
	if t.FrameStart == 0 || t.Written == 0 {
		return
	}
	key := codePair{o.Code, o.RespCode}
	h, ok := r.pairs.Load(key)
	if !ok {
		h, _ = r.pairs.LoadOrStore(key, new(latencyHist))
	}
	h.(*latencyHist).observe(time.Duration(t.Written - t.FrameStart))
	if t.LockHold > 0 {
		r.lockWait.observe(time.Duration(t.LockWait))
		r.lockHold.observe(time.Duration(t.LockHold))
		r.flushWait.observe(time.Duration(t.FlushWait))
	}
}

// Latencies returns a snapshot of every (code, response code) histogram,
// sorted by code then response code.
func (r *RequestStats) Latencies() []RequestLatency {
	var out []RequestLatency
	r.pairs.Range(func(k, v any) bool {
		p := k.(codePair)
		out = append(out, RequestLatency{Code: p.code, RespCode: p.resp, LatencyHist: v.(*latencyHist).snapshot()})
		return true
	})
	slices.SortFunc(out, func(a, b RequestLatency) int {
		if a.Code != b.Code {
			return int(a.Code) - int(b.Code)
		}
		return int(a.RespCode) - int(b.RespCode)
	})
	return out
}

// StoreStages returns a snapshot of the store-stage histograms.
func (r *RequestStats) StoreStages() StoreStages {
	return StoreStages{LockWait: r.lockWait.snapshot(), LockHold: r.lockHold.snapshot(), FlushWait: r.flushWait.snapshot()}
}

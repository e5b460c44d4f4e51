package broker

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Stage names a part of a send's time in the broker, in request order.
// Over the network the stages partition FrameStart → Written exactly:
//
//	frame_read   length word read → whole frame read
//	decode       frame read → header decoded (dispatched)
//	queue_wait   dispatched → taken by a send worker (the remoting executor
//	             and the broker's send queue)
//	process      the worker's own work outside the store's locks and flush
//	             wait (header parsing, checks, response building, store work
//	             before and after the locks)
//	lock_wait    the put waiting for the queue's stripe lock and the commit
//	             log's append lock
//	lock_hold    the append under the lock (under sync: with its flush)
//	flush_wait   waiting for the flush policy after the lock (group policies)
//	reply_write  response handed to the writer → written to the socket
//
// total is the whole of it. An in-process put (RecordPut) has only
// process, lock_wait, lock_hold, flush_wait and total.
type Stage int

// The stages.
const (
	StageFrameRead Stage = iota
	StageDecode
	StageQueueWait
	StageProcess
	StageLockWait
	StageLockHold
	StageFlushWait
	StageReplyWrite
	StageTotal
	numStages
)

var stageNames = [numStages]string{"frame_read", "decode", "queue_wait", "process", "lock_wait", "lock_hold",
	"flush_wait", "reply_write", "total"}

// String is the stage's name as in results ("lock_wait").
func (s Stage) String() string {
	if s < 0 || s >= numStages {
		return "unknown"
	}
	return stageNames[s]
}

// AllStages lists the stages in request order, total last.
func AllStages() []Stage {
	out := make([]Stage, numStages)
	for i := range out {
		out[i] = Stage(i)
	}
	return out
}

// Histogram bounds of the stage recorder: 1 ns to 60 s, 3 significant digits.
const (
	stageLowestNs  = 1
	stageHighestNs = int64(60 * time.Second)
	stageSigFigs   = 3
)

// StageRecorder keeps one HDR histogram (ns) per Stage of every send the
// broker answered: it is a remoting.Observer installed by
// Broker.RecordStages, and RecordPut records in-process puts. Safe for
// concurrent use; recording allocates nothing.
type StageRecorder struct {
	mu         sync.Mutex
	from       int64 // Nanotime: sends that started before it are not recorded (MeasureFrom)
	h          [numStages]*hdr.Histogram
	incomplete int64 // observed sends without every instant (refused before a worker ran them)
	clamped    int64 // values above 60 s, recorded as 60 s
}

// NewStageRecorder returns an empty recorder.
func NewStageRecorder() *StageRecorder {
	r := &StageRecorder{}
	for i := range r.h {
		r.h[i] = hdr.New(stageLowestNs, stageHighestNs, stageSigFigs)
	}
	return r
}

// isSendCode reports the request codes whose stages are recorded.
func isSendCode(code int32) bool {
	return code == protocol.ReqSendMessage || code == protocol.ReqSendMessageV2 || code == protocol.ReqSendBatchMessage
}

// Observe records the stages of an answered send (other codes are
// ignored). It implements remoting.Observer.
func (r *StageRecorder) Observe(_ *remoting.Conn, o *remoting.Observation) {
	if !isSendCode(o.Code) {
		return
	}
	t := &o.Timings
	if !t.Complete() {
		r.mu.Lock()
		if t.FrameStart >= r.from {
			r.incomplete++
		}
		r.mu.Unlock()
		return
	}
	var v [numStages]int64
	v[StageFrameRead] = t.FrameRead - t.FrameStart
	v[StageDecode] = t.Decoded - t.FrameRead
	v[StageQueueWait] = t.Dequeued - t.Decoded
	v[StageLockWait], v[StageLockHold], v[StageFlushWait] = t.LockWait, t.LockHold, t.FlushWait
	v[StageProcess] = t.Replied - t.Dequeued - t.LockWait - t.LockHold - t.FlushWait
	v[StageReplyWrite] = t.Written - t.Replied
	v[StageTotal] = t.Written - t.FrameStart
	r.record(t.FrameStart, &v)
}

// RecordPut records an in-process put that began at start: its store
// stages and its whole duration (process is the rest).
func (r *StageRecorder) RecordPut(start time.Time, lockWait, lockHold, flushWait, total time.Duration) {
	var v [numStages]int64
	for i := range v {
		v[i] = -1 // not a stage of an in-process put
	}
	v[StageLockWait], v[StageLockHold], v[StageFlushWait] = int64(lockWait), int64(lockHold), int64(flushWait)
	v[StageProcess] = int64(total - lockWait - lockHold - flushWait)
	v[StageTotal] = int64(total)
	r.record(remoting.NanotimeOf(start), &v)
}

// record adds the stage values of one request that started at start
// (Nanotime) unless it started before the measured phase; a negative value
// marks a stage the request does not have (a clock step can make process
// slightly negative too: it is recorded as 0 then, since total is exact).
func (r *StageRecorder) record(start int64, v *[numStages]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if start < r.from {
		return
	}
	for i, x := range v {
		if x < 0 {
			if Stage(i) != StageProcess || v[StageTotal] < 0 {
				continue
			}
			x = 0
		}
		if x > stageHighestNs {
			x = stageHighestNs
			r.clamped++
		}
		_ = r.h[i].RecordValue(x) // within bounds: cannot fail
	}
}

// StageSnapshot is a copy of a recorder's histograms.
type StageSnapshot struct {
	// Hist holds one histogram per stage with at least one value, by name.
	Hist map[string]*hdr.Histogram
	// Incomplete counts sends answered without running (refused while
	// queued: SYSTEM_BUSY); Clamped values above 60 s.
	Incomplete, Clamped int64
}

// Snapshot copies the histograms.
func (r *StageRecorder) Snapshot() StageSnapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := StageSnapshot{Hist: make(map[string]*hdr.Histogram), Incomplete: r.incomplete, Clamped: r.clamped}
	for i, h := range r.h {
		if h.TotalCount() > 0 {
			s.Hist[stageNames[i]] = hdr.Import(h.Export())
		}
	}
	return s
}

// MeasureFrom empties the recorder and from then on records only sends
// that started at or after t: the end of a warm-up, given before it ends,
// so the breakdown covers exactly the sends a load generator measures
// however late the caller runs. A send started before t and answered
// after it is left out, like one the generator counts as warm-up.
func (r *StageRecorder) MeasureFrom(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.h {
		h.Reset()
	}
	r.incomplete, r.clamped = 0, 0
	r.from = remoting.NanotimeOf(t)
}

package gen

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/hist"
)

// Env is the shared frame of one run.
type Env struct {
	Col           *hist.Collector
	Start         time.Time       // load starts; open-loop schedules count from here
	MeasureFrom   time.Time       // end of warm-up (== Start without warm-up)
	End           time.Time       // producers stop issuing at End; zero: unbounded
	ProducersDone <-chan struct{} // closed when every producer has returned (nil: never)

	acks *ackTally // set by Run: what the producers had acknowledged when they returned
}

// ackTally is the producers' acknowledged messages per queue, filled once
// every producer has returned and before ProducersDone is closed (so a
// reader that saw ProducersDone closed reads it without a lock). byQ is nil
// when a producer does not report its counts.
type ackTally struct {
	byQ map[workloads.QueueRef]int64
}

// statsReporter is a Producer that counts its acknowledgements
// (ClosedLoop, OpenLoop).
type statsReporter interface{ Stats() ProducerStats }

func tallyAcks(producers []Producer) map[workloads.QueueRef]int64 {
	byQ := map[workloads.QueueRef]int64{}
	for _, p := range producers {
		sr, ok := p.(statsReporter)
		if !ok {
			return nil
		}
		for q, n := range sr.Stats().AckedByQueue {
			byQ[q] += n
		}
	}
	return byQ
}

// ackedIn returns how many messages the producers had acknowledged on q
// when they returned; ok is false before ProducersDone is closed or when
// unknown.
func (e Env) ackedIn(q workloads.QueueRef) (n int64, ok bool) {
	if e.acks == nil || !closed(e.ProducersDone) || e.acks.byQ == nil {
		return 0, false
	}
	return e.acks.byQ[q], true
}

func (e Env) pastEnd(t time.Time) bool { return !e.End.IsZero() && !t.Before(e.End) }

// at expresses t (a time.Now reading) in the run's clock: Start's wall time
// plus the monotonic time elapsed since Start. Header times are wall times
// that the consumers compare with other readings (born, consumed, the end of
// warm-up), and time.Now reads the wall and the monotonic clock one after
// the other: a thread descheduled between the two reads, common on a loaded
// machine, gets a wall time microseconds to milliseconds early, and a wall
// clock step does worse. In the run's clock two readings differ exactly as
// their monotonic parts do, so header arithmetic agrees with the generators'
// own (monotonic) comparisons. The result keeps t's monotonic reading.
func (e Env) at(t time.Time) time.Time {
	if e.Start.IsZero() {
		return t
	}
	return e.Start.Add(t.Sub(e.Start))
}

// ErrTooManyErrors is returned by a producer whose send errors exceed
// MaxErrors.
var ErrTooManyErrors = errors.New("gen: too many send errors")

// ProducerStats counts a producer's messages over the whole run (warm-up
// included; the Collector's Summary has the measured figures).
type ProducerStats struct {
	Issued       int64                        `json:"issued"`
	Acked        int64                        `json:"acked"`
	Errors       int64                        `json:"errors"`
	Bytes        int64                        `json:"bytes"` // acknowledged body bytes
	AckedByQueue map[workloads.QueueRef]int64 `json:"-"`
}

func (s *ProducerStats) add(o ProducerStats) {
	s.Issued += o.Issued
	s.Acked += o.Acked
	s.Errors += o.Errors
	s.Bytes += o.Bytes
	addByQueue(&s.AckedByQueue, o.AckedByQueue)
}

// addByQueue adds the per-queue counts of src to *dst, making *dst first if
// it is nil.
func addByQueue(dst *map[workloads.QueueRef]int64, src map[workloads.QueueRef]int64) {
	if *dst == nil {
		*dst = map[workloads.QueueRef]int64{}
	}
	for q, n := range src {
		(*dst)[q] += n
	}
}

// statsBox is a mutex-guarded ProducerStats merged from workers.
type statsBox struct {
	mu sync.Mutex
	s  ProducerStats
}

func (b *statsBox) merge(o ProducerStats) {
	b.mu.Lock()
	b.s.add(o)
	b.mu.Unlock()
}

func (b *statsBox) get() ProducerStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out ProducerStats
	out.add(b.s)
	return out
}

// recorders returns n recorders shared round-robin by workers: at most one
// per P, so concurrent workers rarely contend and memory stays bounded.
func recorders(col *hist.Collector, workers int) []*hist.Recorder {
	n := min(workers, runtime.GOMAXPROCS(0))
	out := make([]*hist.Recorder, max(n, 1))
	for i := range out {
		out[i] = col.NewRecorder()
	}
	return out
}

// sleepUntil waits for t with a reusable timer; false if ctx ended first.
func sleepUntil(ctx context.Context, tm *time.Timer, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm.Reset(d)
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		tm.Stop()
		return false
	}
}

// errLimit counts errors against a limit and cancels the run once.
type errLimit struct {
	max    int64
	mu     sync.Mutex
	n      int64
	err    error
	cancel context.CancelFunc
}

func (l *errLimit) hit() {
	if l.max <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	if l.n > l.max && l.err == nil {
		l.err = ErrTooManyErrors
		l.cancel()
	}
}

func (l *errLimit) result() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// sendAccounted sends m (stamped at actual) and accounts for it in st and
// r: an error is counted (and checked against the error limit) and its
// latency recorded as failed, an acknowledgement counted and its service
// time recorded. stop reports that
// ctx ended during the send.
//
// A failed send is never dropped: it is counted by code and enters the
// latency record under MetricServiceFailed at max(elapsed, timeout) (see
// failure.go); the caller records its own failed metrics likewise.
func sendAccounted(ctx context.Context, drv workloads.Driver, m *workloads.Message, actual time.Time, st *ProducerStats, r *hist.Recorder, limit *errLimit, timeout time.Duration) (ack time.Time, acked, stop bool) {
	st.Issued++
	err := drv.Send(ctx, m)
	ack = time.Now()
	if err != nil {
		if ctx.Err() != nil {
			return ack, false, true
		}
		st.Errors++
		r.Add(CounterSendErrors, 1)
		r.Add(CounterSendFailedPrefix+FailureCode(err), 1)
		r.Record(MetricServiceFailed, failedLatency(ack.Sub(actual), timeout))
		limit.hit()
		return ack, false, false
	}
	st.Acked++
	st.Bytes += int64(len(m.Body))
	st.AckedByQueue[workloads.QueueRef{Topic: m.Topic, QueueID: m.QueueID}]++
	r.RecordSized(MetricService, ack.Sub(actual), len(m.Body))
	return ack, true, false
}

// worker is one producer goroutine's own state: its recorder (shared per
// CPU), message builder, timer and stats (merged into total when it ends).
type worker struct {
	rec *hist.Recorder
	b   *Builder
	tm  *time.Timer
	st  ProducerStats
}

func newWorker(f *Factory, recs []*hist.Recorder, w int) *worker {
	tm := time.NewTimer(time.Hour)
	tm.Stop()
	return &worker{rec: recs[w%len(recs)], b: f.NewBuilder(), tm: tm,
		st: ProducerStats{AckedByQueue: map[workloads.QueueRef]int64{}}}
}

// runWorkers runs send on n producer goroutines, each with its own worker,
// merges each worker's stats into total when its send returns, and returns
// when all have.
func runWorkers(n int, f *Factory, recs []*hist.Recorder, total *statsBox, send func(wk *worker)) {
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			wk := newWorker(f, recs, w)
			defer func() { total.merge(wk.st) }()
			send(wk)
		})
	}
	wg.Wait()
}

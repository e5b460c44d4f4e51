package gen

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/hist"
)

// ClosedLoopConfig configures a ClosedLoop producer.
type ClosedLoopConfig struct {
	Producers int           // concurrent senders (1)
	ThinkTime time.Duration // pause after each ack (0)
	Count     int64         // messages to send after warm-up; 0: bounded by the run's window
	MaxErrors int64         // abort with ErrTooManyErrors past this many send errors; 0: never
	// SendTimeout is the least a failed send counts for in the latency
	// record (0: DefaultSendTimeout).
	SendTimeout time.Duration
	// CorrectedInterval > 0 also records "service_corrected" with
	// hdrhistogram's RecordCorrectedValue(v, CorrectedInterval): the after-the-
	// fact coordinated-omission correction, for comparison with an open loop.
	CorrectedInterval time.Duration
	Message           MessageConfig
}

// DefaultClosedLoopConfig is one producer, no think time.
func DefaultClosedLoopConfig() ClosedLoopConfig {
	return ClosedLoopConfig{Producers: 1, Message: DefaultMessageConfig()}
}

// ClosedLoop is a fixed-concurrency producer (see the package doc).
type ClosedLoop struct {
	cfg     ClosedLoopConfig
	drv     workloads.Driver
	factory *Factory
	stats   statsBox
}

// NewClosedLoop validates cfg.
func NewClosedLoop(cfg ClosedLoopConfig, drv workloads.Driver) (*ClosedLoop, error) {
	if cfg.Producers <= 0 || cfg.Count < 0 || cfg.ThinkTime < 0 {
		return nil, fmt.Errorf("%w: closed loop producers %d, count %d, think time %v", ErrConfig, cfg.Producers, cfg.Count, cfg.ThinkTime)
	}
	f, err := NewFactory(cfg.Message)
	if err != nil {
		return nil, err
	}
	return &ClosedLoop{cfg: cfg, drv: drv, factory: f}, nil
}

// Stats returns the counts so far.
func (p *ClosedLoop) Stats() ProducerStats { return p.stats.get() }

// Run sends until env.End, Count messages were issued after warm-up, or ctx
// ends. Cancellation is not an error.
func (p *ClosedLoop) Run(ctx context.Context, env Env) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	limit := &errLimit{max: p.cfg.MaxErrors, cancel: cancel}
	recs := recorders(env.Col, p.cfg.Producers)
	var seq, measured atomic.Int64

	runWorkers(p.cfg.Producers, p.factory, recs, &p.stats, func(wk *worker) {
		rec, b, tm := wk.rec, wk.b, wk.tm
		st := &wk.st
		for ctx.Err() == nil {
			m := b.Message(uint64(seq.Add(1) - 1))
			actual := env.at(time.Now()) // the header's born time: see Env.at
			if env.pastEnd(actual) {
				return
			}
			if p.cfg.Count > 0 && !actual.Before(env.MeasureFrom) && measured.Add(1) > p.cfg.Count {
				return
			}
			r := rec.In(hist.PhaseOf(actual, env.MeasureFrom))
			Stamp(m.Body, actual, 0)
			ack, acked, stop := sendAccounted(ctx, p.drv, m, actual, st, r, limit, p.cfg.SendTimeout)
			if stop {
				return
			}
			if !acked {
				continue
			}
			if p.cfg.CorrectedInterval > 0 {
				r.RecordCorrected(MetricServiceCorrected, ack.Sub(actual), p.cfg.CorrectedInterval)
			}
			if p.cfg.ThinkTime > 0 && !sleepUntil(ctx, tm, ack.Add(p.cfg.ThinkTime)) {
				return
			}
		}
	})
	return limit.result()
}

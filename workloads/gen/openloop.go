package gen

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/hist"
)

// OpenLoopConfig configures an OpenLoop producer.
type OpenLoopConfig struct {
	Rate      float64 // msg/s over all workers (> 0)
	Arrival   Arrival // uniform (default) or poisson
	Workers   int     // goroutines sharing the schedule (64)
	Count     int64   // messages to send after warm-up; 0: bounded by the run's window
	MaxErrors int64   // abort with ErrTooManyErrors past this many send errors; 0: never
	// SendTimeout is the least a failed send counts for in the latency
	// record (0: DefaultSendTimeout).
	SendTimeout time.Duration
	Message     MessageConfig
}

// DefaultOpenLoopConfig is 1,000 msg/s uniform over 64 workers.
func DefaultOpenLoopConfig() OpenLoopConfig {
	return OpenLoopConfig{Rate: 1000, Arrival: Uniform, Workers: 64, Message: DefaultMessageConfig()}
}

// OpenLoop is a constant-rate producer (see the package doc).
type OpenLoop struct {
	cfg     OpenLoopConfig
	drv     workloads.Driver
	factory *Factory
	stats   statsBox
}

// NewOpenLoop validates cfg.
func NewOpenLoop(cfg OpenLoopConfig, drv workloads.Driver) (*OpenLoop, error) {
	if _, err := NewSchedule(cfg.Arrival, cfg.Rate, 0); err != nil {
		return nil, err
	}
	if cfg.Workers <= 0 || cfg.Count < 0 {
		return nil, fmt.Errorf("%w: open loop workers %d, count %d", ErrConfig, cfg.Workers, cfg.Count)
	}
	f, err := NewFactory(cfg.Message)
	if err != nil {
		return nil, err
	}
	return &OpenLoop{cfg: cfg, drv: drv, factory: f}, nil
}

// Stats returns the counts so far.
func (p *OpenLoop) Stats() ProducerStats { return p.stats.get() }

// openSchedule hands out (seq, intended time) to the workers in order.
type openSchedule struct {
	mu       sync.Mutex
	sched    *Schedule
	env      Env
	count    int64
	measured int64
	seq      uint64
	done     bool
}

func (s *openSchedule) next() (seq uint64, intended time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return 0, time.Time{}, false
	}
	intended = s.env.Start.Add(s.sched.Next())
	if s.env.pastEnd(intended) {
		s.done = true
		return 0, time.Time{}, false
	}
	if !intended.Before(s.env.MeasureFrom) {
		if s.count > 0 && s.measured >= s.count {
			s.done = true
			return 0, time.Time{}, false
		}
		s.measured++
	}
	seq = s.seq
	s.seq++
	return seq, intended, true
}

// Run sends until the schedule passes env.End, Count messages were issued
// after warm-up, or ctx ends. Cancellation is not an error.
func (p *OpenLoop) Run(ctx context.Context, env Env) error {
	sched, err := NewSchedule(p.cfg.Arrival, p.cfg.Rate, p.cfg.Message.Seed)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sch := &openSchedule{sched: sched, env: env, count: p.cfg.Count}
	limit := &errLimit{max: p.cfg.MaxErrors, cancel: cancel}
	recs := recorders(env.Col, p.cfg.Workers)

	runWorkers(p.cfg.Workers, p.factory, recs, &p.stats, func(wk *worker) {
		rec, b, tm := wk.rec, wk.b, wk.tm
		st := &wk.st
		for {
			seq, intended, ok := sch.next()
			if !ok {
				return
			}
			m := b.Message(seq) // built before the wait: not part of the send delay
			if !sleepUntil(ctx, tm, intended) {
				return
			}
			actual := env.at(time.Now())
			delay := max(actual.Sub(intended), 0)
			r := rec.In(hist.PhaseOf(intended, env.MeasureFrom))
			stampIntended(m.Body, intended, delay)
			ack, acked, stop := sendAccounted(ctx, p.drv, m, actual, st, r, limit, p.cfg.SendTimeout)
			if stop {
				return
			}
			if !acked {
				r.Record(MetricResponseFailed, failedLatency(ack.Sub(intended), p.cfg.SendTimeout))
				continue
			}
			r.Record(MetricResponse, ack.Sub(intended))
			r.Record(MetricSendDelay, delay)
		}
	})
	return limit.result()
}

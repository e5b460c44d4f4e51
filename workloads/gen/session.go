package gen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/workloads/hist"
)

// Producer is a load source run by Run (OpenLoop, ClosedLoop).
type Producer interface {
	Run(ctx context.Context, env Env) error
}

// Consumer is a reader run by Run (TailConsumer, LagConsumer). Prepare runs
// before any producer starts.
type Consumer interface {
	Prepare(ctx context.Context) error
	Run(ctx context.Context, env Env) error
}

// RunConfig frames one run.
type RunConfig struct {
	Warmup   time.Duration // reported, not measured (0)
	Duration time.Duration // measured time after warm-up; 0: until producers' Counts or ctx
	Interval time.Duration // reporting interval (1 s)
	Drain    time.Duration // after the producers stop, how long consumers may take to reach the end (5 s)
	// OnInterval, if set, is called from Run's goroutine with every closed
	// interval (warm-up ones flagged), e.g. for the progress line.
	OnInterval func(hist.Interval)
	// OnStart, if set, is called once with the run's Env before any
	// producer or consumer starts: its MeasureFrom is the exact end of
	// warm-up, for recorders outside the collector that must split the
	// phases the same way.
	OnStart func(Env)
}

// DefaultRunConfig is 1 s intervals, 5 s drain, no warm-up, unbounded.
func DefaultRunConfig() RunConfig {
	return RunConfig{Interval: time.Second, Drain: 5 * time.Second}
}

// Run statuses.
const (
	StatusOK          = "ok"
	StatusInterrupted = "interrupted" // ctx ended first; results cover the time run
	StatusError       = "error"       // a producer or consumer failed
)

// Result is what Run measured.
type Result struct {
	Status      string          `json:"status"`
	Error       string          `json:"error,omitempty"`
	Started     time.Time       `json:"started"`
	MeasureFrom time.Time       `json:"measure_from"`
	Ended       time.Time       `json:"ended"`
	Summary     hist.Summary    `json:"summary"`
	Intervals   []hist.Interval `json:"intervals"`
}

// Run prepares the consumers, starts them and the producers together, ticks
// col every Interval (ending warm-up at Start+Warmup), stops the producers
// at the window's end (or their Count, or ctx), lets the consumers drain for
// up to Drain, and closes the last interval. Without producers it runs the
// consumers until the window ends or they return. The returned error is the
// first part's error (Result.Status says the same); ctx cancellation is not
// an error.
func Run(ctx context.Context, cfg RunConfig, col *hist.Collector, producers []Producer, consumers []Consumer) (Result, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Warmup < 0 || cfg.Duration < 0 || cfg.Drain < 0 {
		return Result{}, fmt.Errorf("%w: negative warm-up, duration or drain", ErrConfig)
	}
	if len(producers) == 0 && len(consumers) == 0 {
		return Result{}, fmt.Errorf("%w: nothing to run", ErrConfig)
	}
	for _, c := range consumers {
		if err := c.Prepare(ctx); err != nil {
			return Result{Status: StatusError, Error: err.Error()}, err
		}
	}

	start := time.Now()
	env := Env{Col: col, Start: start, MeasureFrom: start.Add(cfg.Warmup)}
	if cfg.Duration > 0 {
		env.End = env.MeasureFrom.Add(cfg.Duration)
	}
	prodDone := make(chan struct{})
	acks := &ackTally{} // filled before prodDone is closed
	if len(producers) > 0 {
		env.ProducersDone = prodDone
		env.acks = acks
	}
	col.Start(start, env.MeasureFrom)
	if cfg.OnStart != nil {
		cfg.OnStart(env)
	}

	var (
		errMu    sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		if err == nil {
			return
		}
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
	}
	pctx, pcancel := context.WithCancel(ctx)
	cctx, ccancel := context.WithCancel(ctx)
	defer pcancel()
	defer ccancel()

	var pwg, cwg sync.WaitGroup
	for _, p := range producers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			if err := p.Run(pctx, env); err != nil {
				fail(err)
				pcancel()
				ccancel()
			}
		}()
	}
	go func() {
		pwg.Wait()
		acks.byQ = tallyAcks(producers)
		close(prodDone)
	}()
	consDone := make(chan struct{})
	for _, c := range consumers {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			if err := c.Run(cctx, env); err != nil {
				fail(err)
				pcancel()
				ccancel()
			}
		}()
	}
	go func() { cwg.Wait(); close(consDone) }()

	res := Result{Started: start, MeasureFrom: env.MeasureFrom}
	emit := func(iv hist.Interval) {
		res.Intervals = append(res.Intervals, iv)
		if cfg.OnInterval != nil {
			cfg.OnInterval(iv)
		}
	}
	ticker := time.NewTicker(cfg.Interval)
	defer ticker.Stop()
	var warmupC <-chan time.Time
	if cfg.Warmup > 0 {
		wt := time.NewTimer(cfg.Warmup)
		defer wt.Stop()
		warmupC = wt.C
	}
	var endC <-chan time.Time // window end, for consumer-only runs
	if len(producers) == 0 && !env.End.IsZero() {
		et := time.NewTimer(time.Until(env.End))
		defer et.Stop()
		endC = et.C
	}
	var drainC <-chan time.Time
	pDone, cDone := (<-chan struct{})(prodDone), (<-chan struct{})(consDone)
	producersFinished := len(producers) == 0
	consumersFinished := len(consumers) == 0
	interrupted := false
	ctxDone := ctx.Done()

	for !(producersFinished && consumersFinished) {
		select {
		case now := <-ticker.C:
			emit(col.Tick(now))
		case now := <-warmupC:
			warmupC = nil
			emit(col.EndWarmup(now))
			ticker.Reset(cfg.Interval) // intervals aligned on the measuring start
		case <-endC:
			endC = nil
			ccancel()
		case <-pDone:
			pDone, producersFinished = nil, true
			if !consumersFinished {
				dt := time.NewTimer(cfg.Drain)
				defer dt.Stop()
				drainC = dt.C
			}
		case <-drainC:
			drainC = nil
			ccancel()
		case <-cDone:
			cDone, consumersFinished = nil, true
		case <-ctxDone:
			ctxDone, interrupted = nil, true
			pcancel()
			ccancel()
		}
	}
	now := time.Now()
	if warmupC != nil {
		emit(col.EndWarmup(now)) // ended during warm-up: nothing measured
	} else {
		emit(col.Tick(now))
	}
	res.Ended = now
	res.Summary = col.Summary()
	switch {
	case firstErr != nil:
		res.Status, res.Error = StatusError, firstErr.Error()
	case interrupted || ctx.Err() != nil:
		res.Status = StatusInterrupted
	default:
		res.Status = StatusOK
	}
	if firstErr != nil && errors.Is(firstErr, context.Canceled) && ctx.Err() != nil {
		res.Status, res.Error, firstErr = StatusInterrupted, "", nil
	}
	return res, firstErr
}

package experiments

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// Plan is what Run will do with an experiment and its options: the
// resolved config (overrides and minimums applied), the cells of
// brokerlab and NATS in declaration order with their own measured
// durations, and the fio jobs.
type Plan struct {
	Exp   Experiment
	All   []Cell // every declared cell, fio's included (the pairings' selectors)
	Cells []Cell
	Fio   []FioJob
}

// NewPlan resolves e with opt's overrides (--quick, --reference,
// --duration, --reps; a replay takes e as recorded) and validates it.
func NewPlan(e *Experiment, opt Options) (Plan, error) {
	var pl Plan
	exp := *e
	switch {
	case opt.Replay && (opt.Quick || opt.Reference || opt.Duration > 0 || opt.Repetitions > 0):
		return pl, fmt.Errorf("%w: a replay reruns the recorded config: no --quick, --reference, --duration or --reps", ErrConfig)
	case opt.Quick && opt.Reference:
		return pl, fmt.Errorf("%w: --quick and --reference exclude each other", ErrConfig)
	case opt.Replay:
	default:
		exp.Mode = ""
		if opt.Quick {
			exp.ApplyQuick()
		}
		if opt.Duration > 0 {
			exp.Duration = Duration(opt.Duration)
		}
		if opt.Repetitions > 0 {
			exp.Repetitions = opt.Repetitions
		}
		if opt.Reference {
			exp.ApplyReference() // after the overrides: the minimums hold
		}
	}
	if err := exp.Validate(); err != nil {
		return pl, err
	}
	all, err := exp.AllCells()
	if err != nil {
		return pl, err
	}
	cellDurations(&exp, all)
	pairDurations(exp.Pairings, all)
	if err := exp.validatePairingsOn(all); err != nil {
		return pl, err
	}
	var cells []Cell
	for _, c := range all {
		if c.System != result.SystemFio {
			cells = append(cells, c)
		}
	}
	pl = Plan{Exp: exp, All: all, Cells: cells}
	if slices.Contains(exp.Peers, "fio") {
		pl.Fio = fioPlan(cells)
	}
	return pl, nil
}

// PeerDuration is the measured time of each fio job.
func (pl Plan) PeerDuration() time.Duration {
	if pl.Exp.PeerDuration > 0 {
		return pl.Exp.PeerDuration.D()
	}
	return pl.Exp.Duration.D()
}

// Estimate is the planned wall time: every repetition runs each cell's
// warm-up, measured time and settle pause, and each fio job. Setup
// (prefill, file systems, child processes) and the drain come on top.
func (pl Plan) Estimate() time.Duration {
	perRep := time.Duration(len(pl.Fio)) * pl.PeerDuration()
	for _, c := range pl.Cells {
		perRep += pl.Exp.Warmup.D() + c.Exp.Duration.D() + pl.Exp.Settle.D()
	}
	return time.Duration(pl.Exp.Repetitions) * perRep
}

// WritePlan prints the plan: the resolved run, one line per cell with its
// measured time, the fio jobs and the estimate.
func WritePlan(w io.Writer, pl Plan) {
	e := &pl.Exp
	mode := e.Mode
	if mode == "" {
		mode = "default"
	}
	fmt.Fprintf(w, "%s (%s): %d cells + %d fio jobs × %d repetitions, %v warm-up, %v settle, seed %d\n",
		e.Name, mode, len(pl.Cells), len(pl.Fio), e.Repetitions, e.Warmup.D(), e.Settle.D(), e.Seed)
	for _, c := range pl.Cells {
		sys := c.System
		if sys == "" {
			sys = "brokerlab"
		}
		fmt.Fprintf(w, "  %-9s %-64s %v measured\n", sys, c.Name, c.Exp.Duration.D())
	}
	for _, j := range pl.Fio {
		fmt.Fprintf(w, "  fio       %-64s %v measured\n", j.Name(), pl.PeerDuration())
	}
	fmt.Fprintf(w, "estimate: %v (cells, fio and settle pauses; setup comes on top)\n", pl.Estimate().Round(time.Second))
}

// pairDurations gives both cells of every pairing the longer of their
// measured durations (to a fixed point, as cells may be in several
// pairings), so a pairing never divides a cell measured for 5 minutes by one
// measured for 1 (reference runs lengthen the async cells).
func pairDurations(pairs []Pairing, all []Cell) {
	for changed := true; changed; {
		changed = false
		for _, p := range pairs {
			num, err1 := selectOne(p, "numerator", p.Num, all)
			den, err2 := selectOne(p, "denominator", p.Den, all)
			if err1 != nil || err2 != nil || num.System == result.SystemFio || den.System == result.SystemFio {
				continue
			}
			d := max(num.Exp.Duration, den.Exp.Duration)
			if num.Exp.Duration != d || den.Exp.Duration != d {
				num.Exp.Duration, den.Exp.Duration = d, d
				changed = true
			}
		}
	}
}

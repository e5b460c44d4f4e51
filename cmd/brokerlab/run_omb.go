package main

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"github.com/brokerlab/brokerlab/experiments"
	"github.com/brokerlab/brokerlab/experiments/omb"
)

// runFunc runs a loaded experiment (experiments.Run, or an OMB workload's
// run with its rate search).
type runFunc func(ctx context.Context, exp *experiments.Experiment, opt experiments.Options) (experiments.Outcome, error)

// ombFlags are the run command's OMB workload options.
type ombFlags struct {
	backlog   string
	transport string
}

func addOMBFlags(f *pflag.FlagSet, of *ombFlags) {
	f.StringVar(&of.backlog, "omb-backlog", "", "OMB workload: build this backlog (e.g. 64MiB) instead of consumerBacklogSizeGB")
	f.StringVar(&of.transport, "omb-transport", "loopback", "OMB workload: the embedded broker's transport (loopback: over the protocol on 127.0.0.1; inproc: the store in process)")
}

// loadRunnable loads path: an OMB workload file (detected by its keys,
// experiments/omb) mapped onto an experiment and run by omb.Run, or a
// brokerlab experiment run by experiments.Run.
func loadRunnable(path string, of *ombFlags, quick bool) (*experiments.Experiment, runFunc, error) {
	if !omb.IsWorkloadFile(path) {
		exp, err := experiments.Load(path)
		return exp, experiments.Run, err
	}
	w, err := omb.Load(path)
	if err != nil {
		return nil, nil, err
	}
	mo := omb.MapOptions{Transport: of.transport}
	if of.backlog != "" {
		s, err := experiments.ParseSize(of.backlog)
		if err != nil {
			return nil, nil, err
		}
		mo.Backlog = int64(s)
	}
	name := omb.ExperimentName(path)
	exp, err := w.Experiment(name, mo)
	if err != nil {
		return nil, nil, err
	}
	search := omb.DefaultSearch()
	if quick {
		search.TrialWarmup, search.TrialDuration, search.MaxTrials = 500*time.Millisecond, 2*time.Second, 8
	}
	run := func(ctx context.Context, _ *experiments.Experiment, opt experiments.Options) (experiments.Outcome, error) {
		return omb.Run(ctx, w, name, omb.RunOptions{Options: opt, Map: mo, Search: search})
	}
	return exp, run, nil
}

package omb

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/brokerlab/brokerlab/experiments"
	"github.com/brokerlab/brokerlab/experiments/result"
	"github.com/brokerlab/brokerlab/workloads/gen"
)

// SearchFile records the rate search of a producerRate 0 run in its run
// directory: the rule, every probe and the rate measured.
const SearchFile = "omb-ratesearch.json"

// RunOptions are a workload run's options.
type RunOptions struct {
	// Options are the runner's (results root, --quick, --duration,
	// --namesrv, ...); OMB is set from the workload.
	experiments.Options
	Map MapOptions
	// Search configures producerRate 0 (zero value: DefaultSearch).
	Search SearchConfig
}

// Run runs workload w as experiment name: for producerRate 0 the rate
// search first (its probes in a temporary results root), then the
// measured run, whose directory gets result.json, the OMB result and, after
// a search, SearchFile.
func Run(ctx context.Context, w *Workload, name string, ro RunOptions) (experiments.Outcome, error) {
	var out experiments.Outcome
	hdr := w.Header(name)
	ro.OMB = &hdr
	var search *SearchResult
	if w.ProducerRate == 0 {
		cfg := ro.Search
		if cfg.Start == 0 {
			cfg = DefaultSearch()
		}
		s, err := Search(ctx, cfg, experimentProber(w, name, ro, cfg))
		if err != nil {
			return out, fmt.Errorf("omb: rate search: %w", err)
		}
		search = &s
		ro.Map.Rate = s.Rate
		progressf(ro.Progress, "omb: maximum sustainable rate %.0f msg/s after %d probes (converged %v); measuring it\n",
			s.Rate, len(s.Trials), s.Converged)
	}
	exp, err := w.Experiment(name, ro.Map)
	if err != nil {
		return out, err
	}
	out, err = experiments.Run(ctx, exp, ro.Options)
	if err != nil || search == nil {
		return out, err
	}
	b, err := json.MarshalIndent(search, "", "  ")
	if err != nil {
		return out, err
	}
	return out, result.WriteFileAtomic(filepath.Join(out.RunDir, SearchFile), append(b, '\n'), 0o644)
}

func progressf(w interface{ Write([]byte) (int, error) }, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// experimentProber probes a rate with a short run of the mapped experiment
// (its results in a temporary root, removed afterwards).
func experimentProber(w *Workload, name string, ro RunOptions, cfg SearchConfig) Prober {
	return func(ctx context.Context, rate float64) (Trial, error) {
		mo := ro.Map
		mo.Rate = rate
		exp, err := w.Experiment(name+"-probe", mo)
		if err != nil {
			return Trial{}, err
		}
		exp.Warmup = experiments.Duration(cfg.TrialWarmup)
		exp.Duration = experiments.Duration(cfg.TrialDuration)
		exp.Quick = nil
		if ro.Quick {
			exp.Settle = experiments.Duration(100 * time.Millisecond)
		}
		root, err := os.MkdirTemp("", "brokerlab-omb-probe-")
		if err != nil {
			return Trial{}, err
		}
		defer os.RemoveAll(root)
		opt := ro.Options
		opt.OutRoot, opt.Quick, opt.Reference, opt.Duration, opt.Repetitions = root, false, false, 0, 0
		opt.Progress, opt.Command = nil, nil
		o, err := experiments.Run(ctx, exp, opt)
		if err != nil {
			return Trial{}, err
		}
		if len(o.Cells) == 0 {
			return Trial{}, fmt.Errorf("omb: probe at %.0f msg/s measured nothing (%s)", rate, o.Status)
		}
		t, err := measureTrial(o.RunDir, &o.Cells[0], exp, w.SubscriptionsPerTopic)
		if err != nil {
			return t, err
		}
		t.Rate = rate
		progressf(ro.Progress, "omb: probe %6.0f msg/s: published %6.0f msg/s, backlog growth %d, errors %d, sustained %v\n",
			rate, t.PublishRate, t.BacklogGrowth, t.Errors, cfg.Sustained(t))
		return t, nil
	}
}

// measureTrial reads a probe's cell: the messages acknowledged and
// received in the intervals of the producing window (the drain after it
// excluded, where consumers catch up whatever they owe) and failed sends;
// a failed cell counts as a failed send.
func measureTrial(runDir string, c *result.Cell, exp *experiments.Experiment, subs int) (Trial, error) {
	var t Trial
	if c.Error != "" {
		t.Errors = 1 // a probe that failed did not sustain its rate
		return t, nil
	}
	ivs, err := result.ReadCellHlog(runDir, c)
	if err != nil {
		return t, err
	}
	var from, last time.Time
	for _, iv := range ivs {
		if s := time.UnixMilli(iv.StartMs); from.IsZero() || s.Before(from) {
			from = s
		}
	}
	windowEnd := from.Add(exp.Duration.D() - exp.Interval.D()/2)
	var received int64
	for _, iv := range ivs {
		if !time.UnixMilli(iv.StartMs).Before(windowEnd) {
			continue
		}
		switch iv.Tag {
		case gen.MetricService:
			t.Published += iv.Hist.TotalCount()
		case gen.MetricE2E:
			received += iv.Hist.TotalCount()
		}
		if e := time.UnixMilli(iv.EndMs); e.After(last) {
			last = e
		}
	}
	if secs := last.Sub(from).Seconds(); secs > 0 {
		t.PublishRate = float64(t.Published) / secs
	}
	t.Deliveries = t.Published * int64(subs)
	t.BacklogGrowth = t.Deliveries - received
	for _, p := range c.Series {
		t.Errors += int64(p.Extra["send_errors"])
	}
	return t, nil
}

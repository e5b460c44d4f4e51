package omb

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNoSustainableRate is returned when no probed rate was sustained.
var ErrNoSustainableRate = errors.New("omb: no sustainable rate found")

// SearchConfig is the maximum-rate search of producerRate 0.
//
// The rule (OMB's RateController raises the rate while the publish rate
// keeps up and the consumers' backlog does not grow; brokerlab probes
// fixed rates instead of adjusting one run, so each probe is a clean
// open-loop measurement): a rate r is sustained when, over a probe of
// TrialDuration at r,
//
//   - no send failed,
//   - the acknowledged publish rate is at least KeepUp × r, and
//   - the consumers' backlog grew by at most max(BacklogLimit,
//     BacklogFraction × messages to deliver) (OMB: 1000 messages).
//
// From Start the rate doubles while sustained (or halves until sustained
// when Start is not); then the bracket [highest sustained, lowest not] is
// bisected until its width is within Resolution of its lower end or
// MaxTrials probes ran. The result is the highest sustained rate, which
// the measured run then offers for testDurationMinutes.
type SearchConfig struct {
	Start           float64       // first rate, msg/s (OMB starts at 10,000)
	MinRate         float64       // give up below this rate (1 msg/s)
	KeepUp          float64       // (0.95)
	BacklogLimit    int64         // messages (1000, OMB's RECEIVE_BACKLOG_LIMIT)
	BacklogFraction float64       // (0.01)
	Resolution      float64       // (0.05)
	MaxTrials       int           // (16)
	TrialDuration   time.Duration // measured time of each probe (5 s)
	TrialWarmup     time.Duration // warm-up of each probe (1 s)
}

// DefaultSearch is the configuration above with its defaults.
func DefaultSearch() SearchConfig {
	return SearchConfig{Start: 10000, MinRate: 1, KeepUp: 0.95, BacklogLimit: 1000, BacklogFraction: 0.01,
		Resolution: 0.05, MaxTrials: 16, TrialDuration: 5 * time.Second, TrialWarmup: time.Second}
}

// Trial is one probe: the offered rate and what was measured at it.
type Trial struct {
	Rate          float64 `json:"rate"`           // offered, msg/s
	PublishRate   float64 `json:"publish_rate"`   // acknowledged, msg/s
	Published     int64   `json:"published"`      // acknowledged messages
	Deliveries    int64   `json:"deliveries"`     // published × subscriptions
	BacklogGrowth int64   `json:"backlog_growth"` // deliveries − received over the probe
	Errors        int64   `json:"errors"`         // failed sends
	Sustained     bool    `json:"sustained"`
	RunDir        string  `json:"run_dir,omitempty"`
}

// Sustained applies the rule to a measured probe.
func (c SearchConfig) Sustained(t Trial) bool {
	limit := max(c.BacklogLimit, int64(c.BacklogFraction*float64(t.Deliveries)))
	return t.Errors == 0 && t.PublishRate >= c.KeepUp*t.Rate && t.BacklogGrowth <= limit
}

// SearchResult is the outcome of a search.
type SearchResult struct {
	Rate      float64 `json:"rate"`      // highest sustained rate, msg/s
	Converged bool    `json:"converged"` // bracket within Resolution
	Rule      string  `json:"rule"`
	Trials    []Trial `json:"trials"`
}

// Prober measures one probe at rate.
type Prober func(ctx context.Context, rate float64) (Trial, error)

// Search finds the highest sustained rate by the rule of SearchConfig.
func Search(ctx context.Context, cfg SearchConfig, probe Prober) (SearchResult, error) {
	res := SearchResult{Rule: cfg.Rule()}
	try := func(r float64) (bool, error) {
		t, err := probe(ctx, r)
		if err != nil {
			return false, err
		}
		t.Rate = r
		t.Sustained = cfg.Sustained(t)
		res.Trials = append(res.Trials, t)
		return t.Sustained, nil
	}
	var lo, hi float64 // highest sustained, lowest not (0: none yet)
	r := cfg.Start
	for len(res.Trials) < cfg.MaxTrials && ctx.Err() == nil {
		ok, err := try(r)
		if err != nil {
			return res, err
		}
		if ok {
			lo = r
			if hi > 0 {
				break
			}
			r *= 2
			continue
		}
		hi = r
		if lo > 0 {
			break
		}
		if r /= 2; r < cfg.MinRate {
			break
		}
	}
	for lo > 0 && hi > 0 && (hi-lo) > cfg.Resolution*lo && len(res.Trials) < cfg.MaxTrials && ctx.Err() == nil {
		mid := (lo + hi) / 2
		ok, err := try(mid)
		if err != nil {
			return res, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	res.Rate = lo
	res.Converged = lo > 0 && hi > 0 && (hi-lo) <= cfg.Resolution*lo
	if lo == 0 {
		return res, fmt.Errorf("%w after %d probes from %.0f msg/s", ErrNoSustainableRate, len(res.Trials), cfg.Start)
	}
	return res, ctx.Err()
}

// Rule states the search rule in words (recorded beside the run).
func (c SearchConfig) Rule() string {
	return fmt.Sprintf("a rate r is sustained when a %v open-loop probe at r (after %v warm-up) has no failed send, "+
		"an acknowledged rate >= %.2f*r and a consumer backlog growth <= max(%d, %.2f*deliveries); "+
		"from %.0f msg/s the rate doubles while sustained (halves until sustained), then the bracket is bisected "+
		"to within %.0f%% or %d probes; the highest sustained rate is measured",
		c.TrialDuration, c.TrialWarmup, c.KeepUp, c.BacklogLimit, c.BacklogFraction, c.Start, 100*c.Resolution, c.MaxTrials)
}

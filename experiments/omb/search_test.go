package omb

import (
	"context"
	"errors"
	"testing"
)

// syntheticBroker acknowledges up to pubCap msg/s and delivers up to
// consCap msg/s; a probe of secs seconds at rate r measures what it would.
func syntheticBroker(pubCap, consCap, secs float64) Prober {
	return func(_ context.Context, r float64) (Trial, error) {
		pub := min(r, pubCap)
		recv := min(pub, consCap)
		published := int64(pub * secs)
		return Trial{PublishRate: pub, Published: published, Deliveries: published,
			BacklogGrowth: published - int64(recv*secs)}, nil
	}
}

func TestSearchFindsSaturation(t *testing.T) {
	cfg := DefaultSearch()
	for _, tc := range []struct {
		name            string
		pubCap, consCap float64
		start           float64
		want            float64 // the saturation point
	}{
		{"publish-bound above start", 37000, 1e9, 10000, 37000},
		{"publish-bound below start", 3000, 1e9, 10000, 3000},
		{"consumer-bound", 1e9, 22000, 10000, 22000},
		{"exactly the start", 10000, 1e9, 10000, 10000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.Start = tc.start
			res, err := Search(context.Background(), c, syntheticBroker(tc.pubCap, tc.consCap, 5))
			if err != nil {
				t.Fatal(err)
			}
			// The found rate is sustained, so at most about the saturation
			// point (within the keep-up and backlog slack), and within the
			// resolution of it.
			hi := tc.want / c.KeepUp
			if res.Rate > hi || res.Rate < tc.want*(1-2*c.Resolution) {
				t.Fatalf("rate %.0f, saturation %.0f; trials %+v", res.Rate, tc.want, res.Trials)
			}
			if !res.Converged || len(res.Trials) > c.MaxTrials {
				t.Fatalf("converged %v after %d trials", res.Converged, len(res.Trials))
			}
			for _, tr := range res.Trials {
				if tr.Rate > hi && tr.Sustained {
					t.Fatalf("a rate above saturation judged sustained: %+v", tr)
				}
			}
		})
	}
}

func TestSustainedRule(t *testing.T) {
	c := DefaultSearch()
	ok := Trial{Rate: 1000, PublishRate: 960, Published: 4800, Deliveries: 4800, BacklogGrowth: 900}
	if !c.Sustained(ok) {
		t.Fatalf("%+v not sustained", ok)
	}
	for name, tr := range map[string]Trial{
		"slow publish":  {Rate: 1000, PublishRate: 940, Published: 4700, Deliveries: 4700},
		"backlog grows": {Rate: 1000, PublishRate: 1000, Published: 5000, Deliveries: 5000, BacklogGrowth: 1001},
		"send errors":   {Rate: 1000, PublishRate: 1000, Published: 5000, Deliveries: 5000, Errors: 1},
	} {
		if c.Sustained(tr) {
			t.Errorf("%s: %+v judged sustained", name, tr)
		}
	}
	big := Trial{Rate: 1e6, PublishRate: 1e6, Published: 5e6, Deliveries: 5e6, BacklogGrowth: 40000}
	if !c.Sustained(big) {
		t.Error("backlog growth under 1% of deliveries judged unsustained")
	}
}

func TestSearchNothingSustained(t *testing.T) {
	_, err := Search(context.Background(), DefaultSearch(), syntheticBroker(0, 0, 5))
	if !errors.Is(err, ErrNoSustainableRate) {
		t.Fatalf("err %v, want ErrNoSustainableRate", err)
	}
	probeErr := errors.New("probe failed")
	_, err = Search(context.Background(), DefaultSearch(), func(context.Context, float64) (Trial, error) { return Trial{}, probeErr })
	if !errors.Is(err, probeErr) {
		t.Fatalf("err %v, want the probe's", err)
	}
}

package gen

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/fakedriver"
)

// dispatchLag is a Source whose queue shows nothing (empty pulls) until
// MaxOffset has been asked twice, the tail consumer's Prepare and its
// end-of-run read, and answers both with 0: a store whose dispatch trails
// the acknowledged sends past the producers' end.
type dispatchLag struct {
	workloads.Source
	asks atomic.Int32
}

func (s *dispatchLag) MaxOffset(topic string, queueID int32) (int64, error) {
	if s.asks.Add(1) <= 2 {
		return 0, nil
	}
	return s.Source.MaxOffset(topic, queueID)
}

func (s *dispatchLag) Pull(ctx context.Context, topic string, queueID int32, offset int64, max int) ([][]byte, int64, error) {
	if s.asks.Load() < 2 {
		return nil, offset, nil
	}
	return s.Source.Pull(ctx, topic, queueID, offset, max)
}

// TestTailConsumerWaitsForAcknowledged: when the queue's max offset read
// after the producers returned is behind what they had acknowledged, the
// tail consumer keeps reading until it has every acknowledged message
// instead of stopping at that max offset with none of them.
func TestTailConsumerWaitsForAcknowledged(t *testing.T) {
	t.Parallel()
	d := fakedriver.New(fakedriver.DefaultConfig())
	cfg := DefaultOpenLoopConfig()
	cfg.Rate, cfg.Workers, cfg.Count = 4000, 2, 200
	p := openLoop(t, cfg, d)
	src := &dispatchLag{Source: d}
	c, err := NewTailConsumer(DefaultConsumerConfig(), src)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := run(t, context.Background(), DefaultRunConfig(), []Producer{p}, []Consumer{c})
	if res.Status != StatusOK {
		t.Fatalf("status %s (%s)", res.Status, res.Error)
	}
	ps, cs := p.Stats(), c.Stats()
	if ps.Acked != 200 || cs.Unique != ps.Acked {
		t.Fatalf("acknowledged %d, consumed %d unique", ps.Acked, cs.Unique)
	}
	if src.asks.Load() < 2 {
		t.Fatalf("MaxOffset asked %d times: the lag was never shown to the consumer", src.asks.Load())
	}
	if e2e := res.Summary.Metrics[MetricE2E]; e2e.Count != 200 {
		t.Fatalf("e2e samples %d, want 200", e2e.Count)
	}
}

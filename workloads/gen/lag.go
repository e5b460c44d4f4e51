package gen

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/workloads"
)

// LagConfig configures a LagConsumer.
type LagConfig struct {
	ConsumerConfig
	// Start this many messages behind each queue's end, or (when
	// BehindBytes > 0) this many body bytes behind: exact with a
	// workloads.ByteLocator source, otherwise estimated from the mean body
	// size of the last EstimateWindow messages.
	BehindMessages int64
	BehindBytes    int64
	EstimateWindow int // (256)
	// KeepTailing continues as a TailConsumer after catching up (recording
	// e2e); otherwise the consumer returns once caught up.
	KeepTailing bool
}

// DefaultLagConfig is 1,000,000 messages behind, batches of 256, stop when
// caught up.
func DefaultLagConfig() LagConfig {
	c := DefaultConsumerConfig()
	c.PullBatch = 256
	return LagConfig{ConsumerConfig: c, BehindMessages: 1_000_000, EstimateWindow: 256}
}

// CatchUp is the result of reading the backlog: from the start offsets to the
// queues' ends as of Prepare.
type CatchUp struct {
	Backlog   int64         `json:"backlog_msgs"` // messages between start and target, all queues
	Messages  int64         `json:"messages"`
	Bytes     int64         `json:"bytes"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	MsgPerSec float64       `json:"msgs_per_sec"`
	MBps      float64       `json:"mb_per_sec"` // 1e6 bytes/s
	Done      bool          `json:"done"`       // every queue reached its target
}

// LagConsumer reads a backlog and measures the catch-up.
type LagConsumer struct {
	cfg     LagConfig
	src     workloads.Source
	starts  []int64
	targets []int64

	mu      sync.Mutex
	stats   ConsumerStats
	catchUp CatchUp
}

// NewLagConsumer validates cfg.
func NewLagConsumer(cfg LagConfig, src workloads.Source) (*LagConsumer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.BehindMessages < 0 || cfg.BehindBytes < 0 {
		return nil, fmt.Errorf("%w: lag consumer: negative distance behind", ErrConfig)
	}
	if cfg.EstimateWindow <= 0 {
		cfg.EstimateWindow = 256
	}
	return &LagConsumer{cfg: cfg, src: src}, nil
}

// Prepare fixes each queue's start offset and catch-up target (its end now).
// Only the first call has an effect.
func (c *LagConsumer) Prepare(ctx context.Context) error {
	if c.starts != nil {
		return nil
	}
	c.starts = make([]int64, len(c.cfg.Queues))
	c.targets = make([]int64, len(c.cfg.Queues))
	for i, q := range c.cfg.Queues {
		end, err := c.src.MaxOffset(q.Topic, q.QueueID)
		if err != nil {
			return fmt.Errorf("gen: lag consumer: max offset of %s/%d: %w", q.Topic, q.QueueID, err)
		}
		start := end - c.cfg.BehindMessages
		if c.cfg.BehindBytes > 0 {
			if start, err = c.bytesBehind(ctx, q, end); err != nil {
				return err
			}
		}
		c.starts[i], c.targets[i] = max(start, 0), end
	}
	return nil
}

func (c *LagConsumer) bytesBehind(ctx context.Context, q workloads.QueueRef, end int64) (int64, error) {
	if bl, ok := c.src.(workloads.ByteLocator); ok {
		off, err := bl.OffsetBytesBehind(q.Topic, q.QueueID, c.cfg.BehindBytes)
		if err != nil {
			return 0, fmt.Errorf("gen: lag consumer: bytes behind %s/%d: %w", q.Topic, q.QueueID, err)
		}
		return off, nil
	}
	from := max(end-int64(c.cfg.EstimateWindow), 0)
	bodies, _, err := c.src.Pull(ctx, q.Topic, q.QueueID, from, c.cfg.EstimateWindow)
	if err != nil {
		return 0, fmt.Errorf("gen: lag consumer: sampling sizes of %s/%d: %w", q.Topic, q.QueueID, err)
	}
	if len(bodies) == 0 {
		return end, nil
	}
	var sum int64
	for _, b := range bodies {
		sum += int64(len(b))
	}
	mean := max(sum/int64(len(bodies)), 1)
	return end - c.cfg.BehindBytes/mean, nil
}

// Run reads every queue from its start to its target, then returns (or
// tails, with KeepTailing). Catch-up reads record "pull" (latency and bytes
// per Pull) and the catchup_msgs counter, not e2e.
func (c *LagConsumer) Run(ctx context.Context, env Env) error {
	if c.starts == nil {
		if err := c.Prepare(ctx); err != nil {
			return err
		}
	}
	begin := time.Now()
	var backlog int64
	for i := range c.starts {
		backlog += c.targets[i] - c.starts[i]
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		msgs    int64
		bytes   int64
		reached int
		lastAt  time.Time
	)
	for i, q := range c.cfg.Queues {
		r := &queueReader{src: c.src, cfg: &c.cfg.ConsumerConfig, q: q, rec: env.Col.NewRecorder(), offset: c.starts[i], tracker: NewSeqTracker()}
		target := c.targets[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			var m, b int64
			for r.offset < target && ctx.Err() == nil {
				n, nb, err := r.pull(ctx, env, false)
				if err != nil || n == 0 {
					// The backlog exists, so an empty pull is a transient
					// (or an error already counted): back off a poll.
					tm := time.NewTimer(r.cfg.PollInterval)
					select {
					case <-tm.C:
					case <-ctx.Done():
						tm.Stop()
					}
					continue
				}
				m, b = m+int64(n), b+nb
				r.rec.Add(CounterCatchUp, int64(n))
			}
			mu.Lock()
			msgs, bytes = msgs+m, bytes+b
			if r.offset >= target {
				reached++
				lastAt = time.Now()
			}
			mu.Unlock()
			if c.cfg.KeepTailing {
				r.tail(ctx, env)
			}
			c.mu.Lock()
			addConsumerStats(&c.stats, r.finish())
			c.mu.Unlock()
		}()
	}
	wg.Wait()
	// Elapsed runs to the moment the last queue reached its target (or, when
	// the catch-up did not finish, to the moment the readers stopped).
	cu := CatchUp{Backlog: backlog, Messages: msgs, Bytes: bytes, Done: reached == len(c.cfg.Queues)}
	end := lastAt
	if !cu.Done || end.IsZero() {
		end = time.Now()
	}
	cu.Elapsed = end.Sub(begin)
	if s := cu.Elapsed.Seconds(); s > 0 {
		cu.MsgPerSec = float64(cu.Messages) / s
		cu.MBps = float64(cu.Bytes) / 1e6 / s
	}
	c.mu.Lock()
	c.catchUp = cu
	c.mu.Unlock()
	return nil
}

// CatchUp returns the catch-up result (after Run).
func (c *LagConsumer) CatchUp() CatchUp {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.catchUp
}

// Stats returns the delivery counts (after Run).
func (c *LagConsumer) Stats() ConsumerStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out ConsumerStats
	addConsumerStats(&out, c.stats)
	return out
}

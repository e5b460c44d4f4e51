package gen

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/hist"
)

// ConsumerConfig is shared by both consumers.
type ConsumerConfig struct {
	Queues       []workloads.QueueRef // queues to read, one goroutine each
	PullBatch    int                  // max messages per Pull (32)
	PollInterval time.Duration        // sleep after an empty Pull (1 ms)
}

// DefaultConsumerConfig reads queue 0 of "bench".
func DefaultConsumerConfig() ConsumerConfig {
	return ConsumerConfig{Queues: []workloads.QueueRef{{Topic: "bench"}}, PullBatch: 32, PollInterval: time.Millisecond}
}

func (c *ConsumerConfig) validate() error {
	if len(c.Queues) == 0 || c.PullBatch <= 0 || c.PollInterval < 0 {
		return fmt.Errorf("%w: consumer needs queues, a positive pull batch and poll interval", ErrConfig)
	}
	return nil
}

// ConsumerStats counts a consumer's deliveries over the whole run.
type ConsumerStats struct {
	Messages   int64 `json:"messages"` // delivered, duplicates included
	Bytes      int64 `json:"bytes"`
	Unique     int64 `json:"unique"`
	Duplicates int64 `json:"duplicates"`
	Foreign    int64 `json:"foreign"` // bodies without a generated header
	PullErrors int64 `json:"pull_errors"`
	// UniqueByQueue is Unique per queue: compare with the producers'
	// AckedByQueue (Missing) when the consumer started before them.
	UniqueByQueue map[workloads.QueueRef]int64 `json:"-"`
}

// Missing returns, per queue, acknowledged messages never consumed:
// meaningful when the tailing consumer was prepared before the producers
// started and drained after they stopped.
func Missing(p ProducerStats, c ConsumerStats) map[workloads.QueueRef]int64 {
	out := map[workloads.QueueRef]int64{}
	for q, u := range c.UniqueByQueue {
		if d := p.AckedByQueue[q] - u; d > 0 {
			out[q] = d
		}
	}
	return out
}

// queueReader is one queue's consuming loop state.
type queueReader struct {
	src     workloads.Source
	cfg     *ConsumerConfig
	q       workloads.QueueRef
	rec     *hist.Recorder
	offset  int64
	tracker *SeqTracker
	st      ConsumerStats
}

// pull reads one batch; it returns the number of bodies and their bytes.
// e2e selects recording of end-to-end latencies.
func (r *queueReader) pull(ctx context.Context, env Env, e2e bool) (n int, bytes int64, err error) {
	t := time.Now()
	bodies, next, err := r.src.Pull(ctx, r.q.Topic, r.q.QueueID, r.offset, r.cfg.PullBatch)
	done := time.Now()
	if err != nil {
		if ctx.Err() == nil {
			r.st.PullErrors++
			r.rec.Add(CounterPullErrors, 1)
		}
		return 0, 0, err
	}
	r.offset = next
	if len(bodies) == 0 {
		return 0, 0, nil
	}
	now := env.at(done).UnixNano() // the producers' clock: see Env.at
	for _, b := range bodies {
		bytes += int64(len(b))
		h, herr := workloads.DecodeHeader(b)
		if herr != nil {
			r.st.Foreign++
			r.rec.Add(CounterForeign, 1)
			continue
		}
		if r.tracker.Observe(h.Stream, h.Seq) {
			r.rec.Add(CounterDuplicates, 1)
		}
		if e2e {
			pr := r.rec.In(hist.PhaseOf(time.Unix(0, h.Intended()), env.MeasureFrom))
			pr.RecordSized(MetricE2E, time.Duration(now-h.Born), len(b))
			pr.Record(MetricE2EIntended, time.Duration(now-h.Intended()))
		}
	}
	r.rec.RecordSized(MetricPull, done.Sub(t), int(bytes))
	r.st.Messages += int64(len(bodies))
	r.st.Bytes += bytes
	return len(bodies), bytes, nil
}

// tail follows the queue until ctx ends or, once the producers are done, the
// queue's end is reached: the max offset read after the producers returned
// and, where the producers report their acknowledgements, every message
// acknowledged on this queue. The max offset alone is not the end: it is
// what the store has dispatched, which trails acknowledged sends (by the
// reput interval, or by much more on a loaded machine or under async
// flush); stopping there would drop the last messages' e2e samples and
// hide a lost message.
func (r *queueReader) tail(ctx context.Context, env Env) {
	tm := time.NewTimer(time.Hour)
	tm.Stop()
	final := int64(-1)
	for ctx.Err() == nil {
		n, _, err := r.pull(ctx, env, true)
		if err == nil && n > 0 {
			continue
		}
		if final < 0 && closed(env.ProducersDone) {
			if m, err := r.src.MaxOffset(r.q.Topic, r.q.QueueID); err == nil {
				final = m
			}
		}
		if final >= 0 && r.offset >= final {
			if want, ok := env.ackedIn(r.q); !ok || r.tracker.Unique() >= want {
				return
			}
		}
		if !sleepUntil(ctx, tm, time.Now().Add(r.cfg.PollInterval)) {
			return
		}
	}
}

func closed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (r *queueReader) finish() ConsumerStats {
	r.st.Unique, r.st.Duplicates = r.tracker.Unique(), r.tracker.Duplicates()
	r.st.UniqueByQueue = map[workloads.QueueRef]int64{r.q: r.st.Unique}
	return r.st
}

func addConsumerStats(a *ConsumerStats, b ConsumerStats) {
	a.Messages += b.Messages
	a.Bytes += b.Bytes
	a.Unique += b.Unique
	a.Duplicates += b.Duplicates
	a.Foreign += b.Foreign
	a.PullErrors += b.PullErrors
	addByQueue(&a.UniqueByQueue, b.UniqueByQueue)
}

// TailConsumer follows each queue from its end at Prepare time.
type TailConsumer struct {
	cfg    ConsumerConfig
	src    workloads.Source
	starts []int64

	mu    sync.Mutex
	stats ConsumerStats
}

// NewTailConsumer validates cfg.
func NewTailConsumer(cfg ConsumerConfig, src workloads.Source) (*TailConsumer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &TailConsumer{cfg: cfg, src: src}, nil
}

// Prepare reads the queues' current ends: consumption starts there. Only
// the first call has an effect.
func (c *TailConsumer) Prepare(ctx context.Context) error {
	if c.starts != nil {
		return nil
	}
	c.starts = make([]int64, len(c.cfg.Queues))
	for i, q := range c.cfg.Queues {
		m, err := c.src.MaxOffset(q.Topic, q.QueueID)
		if err != nil {
			return fmt.Errorf("gen: tail consumer: max offset of %s/%d: %w", q.Topic, q.QueueID, err)
		}
		c.starts[i] = m
	}
	return nil
}

// Run consumes until ctx ends or, after env.ProducersDone, every queue is
// read to its end.
func (c *TailConsumer) Run(ctx context.Context, env Env) error {
	if c.starts == nil {
		if err := c.Prepare(ctx); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	for i, q := range c.cfg.Queues {
		r := &queueReader{src: c.src, cfg: &c.cfg, q: q, rec: env.Col.NewRecorder(), offset: c.starts[i], tracker: NewSeqTracker()}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.tail(ctx, env)
			c.mu.Lock()
			addConsumerStats(&c.stats, r.finish())
			c.mu.Unlock()
		}()
	}
	wg.Wait()
	return nil
}

// Stats returns the counts (complete once Run has returned).
func (c *TailConsumer) Stats() ConsumerStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out ConsumerStats
	addConsumerStats(&out, c.stats)
	return out
}

package omb

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/brokerlab/brokerlab/experiments"
	"github.com/brokerlab/brokerlab/experiments/ombresult"
)

// GiB is OMB's backlog unit (consumerBacklogSizeGB × 1024³ bytes).
const GiB = 1 << 30

// MinWorkers is the least number of open-loop workers sharing the
// schedule: OMB's producers send asynchronously with many sends in
// flight; brokerlab's workers each wait for their ack, so one per OMB
// producer would fall behind the schedule (publish delay) long before the
// broker does.
const MinWorkers = 64

// Quick durations (brokerlab run --quick): a functional check.
const (
	QuickWarmup   = time.Second
	QuickDuration = 10 * time.Second
)

// MapOptions adjust the mapping of a workload onto an experiment.
type MapOptions struct {
	// Transport of the embedded broker: "loopback" (default: a broker on
	// 127.0.0.1 reached over brokerlab's remoting protocol, as OMB's
	// clients reach theirs) or "inproc" (the store in process, no
	// protocol). Ignored with --namesrv.
	Transport string
	// Backlog, when > 0, replaces consumerBacklogSizeGB × 1 GiB (bytes),
	// for machines without the disk for OMB's sizes, and tests.
	Backlog int64
	// Rate, when > 0, replaces producerRate (the rate search sets it).
	Rate float64
}

// Experiment maps w onto a brokerlab experiment named name:
//
//   - warmupDurationMinutes / testDurationMinutes → warmup / duration
//     (--quick: 1 s / 10 s; --duration overrides the measured time);
//   - topics × partitionsPerTopic → topics × queues; messageSize → fixed
//     body size (brokerlab's bodies are seeded random bytes cut from a
//     block, so payloadFile is not read and useRandomizedPayloads /
//     randomBytesRatio / randomizedPayloadPoolSize do not change the work:
//     brokerlab does not compress);
//   - producerRate → an open loop at that rate with a uniform schedule
//     (OMB's UniformRateLimiter), max(64, producersPerTopic × topics)
//     workers sharing it;
//   - keyDistributor → the queue choice: NO_KEY and KEY_ROUND_ROBIN
//     round-robin, RANDOM_NANO uniform;
//   - subscriptionsPerTopic → tailing consumers, each reading every queue
//     of every topic (one reader per queue, so consumerPerSubscription's
//     parallelism is there already; it is kept in the OMB result header);
//   - consumerBacklogSizeGB > 0 → the backlog is written before the
//     measured phase with no consumer reading (a prefill, then the store's
//     files dropped from the page cache when the broker is embedded), then
//     one lagging consumer per subscription drains it from its start and
//     keeps tailing, while the producers publish at producerRate; no
//     warm-up, so the whole drain is measured. backlogDrainRatio is not
//     used: the catch-up is recorded when the backlog is fully read.
//
// producerRate 0 maps to the search's starting rate; Run searches first.
func (w *Workload) Experiment(name string, mo MapOptions) (*experiments.Experiment, error) {
	rate := float64(w.ProducerRate)
	if mo.Rate > 0 {
		rate = mo.Rate
	}
	if rate <= 0 {
		rate = DefaultSearch().Start
	}
	transport := mo.Transport
	if transport == "" {
		transport = "loopback"
	}
	choice := "roundrobin"
	if w.KeyDistributor == KeyRandomNano {
		choice = "uniform"
	}
	wl := map[string]any{
		"mode": "open", "rate": rate, "schedule": "uniform",
		"producers": max(MinWorkers, w.ProducersPerTopic*w.Topics),
		"size":      fmt.Sprintf("fixed:%d", w.MessageSize),
		"topics":    w.Topics, "queues": w.PartitionsPerTopic, "queue_choice": choice,
	}
	warmup := time.Duration(w.WarmupMinutes()) * time.Minute
	quickWarmup := QuickWarmup
	if backlog := w.BacklogBytes(mo); backlog > 0 {
		wl["prefill"] = backlog
		wl["lagging"] = w.SubscriptionsPerTopic
		wl["lag_bytes"] = backlog
		wl["lag_tail"] = true
		warmup, quickWarmup = 0, 0
	} else {
		wl["tailing"] = w.SubscriptionsPerTopic
	}
	doc := map[string]any{
		"name":        name,
		"description": fmt.Sprintf("OpenMessaging Benchmark workload %q", w.Name),
		"warmup":      warmup.String(),
		"duration":    (time.Duration(w.TestDurationMinutes) * time.Minute).String(),
		"repetitions": 1,
		"engine":      map[string]any{"transport": transport},
		"workload":    wl,
		"quick":       map[string]any{"warmup": quickWarmup.String(), "duration": QuickDuration.String()},
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWorkload, err)
	}
	exp, err := experiments.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%w: mapped experiment: %w", ErrWorkload, err)
	}
	return exp, nil
}

// BacklogBytes is the backlog to build: mo.Backlog when set, else
// consumerBacklogSizeGB GiB.
func (w *Workload) BacklogBytes(mo MapOptions) int64 {
	if w.ConsumerBacklogSizeGB <= 0 {
		return 0
	}
	if mo.Backlog > 0 {
		return mo.Backlog
	}
	return w.ConsumerBacklogSizeGB * GiB
}

// Header is the OMB result header of a run of w: its own fields, so the
// result sits beside OMB's runs of the same workload.
func (w *Workload) Header(fallbackName string) ombresult.Meta {
	name := w.Name
	if name == "" {
		name = fallbackName
	}
	return ombresult.Meta{Workload: name, MessageSize: int64(w.MessageSize), Topics: w.Topics,
		Partitions: w.PartitionsPerTopic, ProducersPerTopic: w.ProducersPerTopic,
		ConsumersPerTopic: w.ConsumerPerSubscription, Subscriptions: w.SubscriptionsPerTopic}
}

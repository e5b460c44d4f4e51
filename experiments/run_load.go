package experiments

import (
	"context"
	"fmt"

	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/gen"
	"github.com/brokerlab/brokerlab/workloads/randvar"
)

// buildLoad makes the producers and consumers of a cell and names the
// primary latency metric: response time from the intended send for an open
// loop, service time for a closed loop.
func buildLoad(exp Experiment, sys system) ([]gen.Producer, []gen.Consumer, []*gen.LagConsumer, string, error) {
	w := exp.Workload
	mc, err := messageConfig(exp)
	if err != nil {
		return nil, nil, nil, "", err
	}
	var producers []gen.Producer
	primary := gen.MetricService
	switch w.Mode {
	case "open":
		oc := gen.DefaultOpenLoopConfig()
		oc.Rate = w.Rate
		oc.Arrival = gen.Arrival(w.Schedule)
		oc.Workers = w.Producers
		oc.Message = mc
		p, err := gen.NewOpenLoop(oc, sys.Driver())
		if err != nil {
			return nil, nil, nil, "", err
		}
		producers = append(producers, p)
		primary = gen.MetricResponse
	default:
		cc := gen.DefaultClosedLoopConfig()
		cc.Producers = w.Producers
		cc.Message = mc
		p, err := gen.NewClosedLoop(cc, sys.Driver())
		if err != nil {
			return nil, nil, nil, "", err
		}
		producers = append(producers, p)
	}
	var consumers []gen.Consumer
	var lags []*gen.LagConsumer
	src := sys.Source()
	if (w.Tailing > 0 || w.Lagging > 0) && src == nil {
		return nil, nil, nil, "", fmt.Errorf("%w: this engine configuration cannot serve consumers", ErrConfig)
	}
	queues := allQueues(exp)
	for i := 0; i < w.Tailing; i++ {
		cc := gen.DefaultConsumerConfig()
		cc.Queues = queues
		c, err := gen.NewTailConsumer(cc, src)
		if err != nil {
			return nil, nil, nil, "", err
		}
		consumers = append(consumers, c)
	}
	for i := 0; i < w.Lagging; i++ {
		lc := gen.DefaultLagConfig()
		lc.Queues = queues
		lc.BehindBytes = int64(w.LagBytes)
		lc.KeepTailing = w.LagTail
		c, err := gen.NewLagConsumer(lc, src)
		if err != nil {
			return nil, nil, nil, "", err
		}
		consumers = append(consumers, c)
		lags = append(lags, c)
	}
	return producers, consumers, lags, primary, nil
}

func topicNames(exp Experiment) []string {
	names := make([]string, exp.Workload.Topics)
	for i := range names {
		names[i] = fmt.Sprintf("bench-%d", i)
	}
	return names
}

func allQueues(exp Experiment) []workloads.QueueRef {
	var qs []workloads.QueueRef
	for _, t := range topicNames(exp) {
		for q := 0; q < exp.Workload.Queues; q++ {
			qs = append(qs, workloads.QueueRef{Topic: t, QueueID: int32(q)})
		}
	}
	return qs
}

func messageConfig(exp Experiment) (gen.MessageConfig, error) {
	w := exp.Workload
	mc := gen.DefaultMessageConfig()
	mc.Seed = uint64(exp.Seed)
	var err error
	if mc.Size, err = randvar.ParseVar(w.Size); err != nil {
		return mc, fmt.Errorf("%w: workload.size: %w", ErrConfig, err)
	}
	mc.Topics = topicNames(exp)
	if mc.Topic, err = randvar.ParseVar(fmt.Sprintf("roundrobin:0-%d", w.Topics-1)); err != nil {
		return mc, err
	}
	qspec := fmt.Sprintf("%s:0-%d", w.QueueChoice, w.Queues-1)
	if w.QueueChoice == "zipf" {
		qspec = fmt.Sprintf("zipf:0-%d", w.Queues-1)
	}
	if mc.Queue, err = randvar.ParseVar(qspec); err != nil {
		return mc, fmt.Errorf("%w: queue choice: %w", ErrConfig, err)
	}
	if mc.Key, err = randvar.ParseVar("uniform:0-1000000"); err != nil {
		return mc, err
	}
	return mc, nil
}

// prefill writes Workload.Prefill bytes before the measured run (cold-read
// experiments need a backlog).
func prefill(ctx context.Context, exp Experiment, sys system) error {
	mc, err := messageConfig(exp)
	if err != nil {
		return err
	}
	fac, err := gen.NewFactory(mc)
	if err != nil {
		return err
	}
	b := fac.NewBuilder()
	var written int64
	for seq := uint64(0); written < int64(exp.Workload.Prefill); seq++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m := b.Message(seq)
		if err := sys.Driver().Send(ctx, m); err != nil {
			return err
		}
		written += int64(len(m.Body))
	}
	return nil
}

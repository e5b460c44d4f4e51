package natsdriver

import (
	"context"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/gen"
	"github.com/brokerlab/brokerlab/workloads/hist"
	"github.com/brokerlab/brokerlab/workloads/randvar"
)

// The generators drive the driver: a closed loop of 4 producers over 2
// topics x 2 queues for 300 ms, with a tailing consumer that must see every
// acknowledged message.
func TestGeneratorsDriveNATS(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig(t.TempDir())
	cfg.Topics, cfg.Queues = []string{"g0", "g1"}, 2
	d := open(t, cfg)
	defer d.Close()

	pc := gen.DefaultClosedLoopConfig()
	pc.Producers = 4
	pc.Message.Topics = cfg.Topics
	uni, err := randvar.NewUniform(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	pc.Message.Topic, pc.Message.Queue = randvar.NewVar(uni), randvar.NewVar(uni)
	p, err := gen.NewClosedLoop(pc, d)
	if err != nil {
		t.Fatal(err)
	}
	cc := gen.DefaultConsumerConfig()
	cc.Queues = nil
	for _, topic := range cfg.Topics {
		for q := range int32(2) {
			cc.Queues = append(cc.Queues, workloads.QueueRef{Topic: topic, QueueID: q})
		}
	}
	c, err := gen.NewTailConsumer(cc, d)
	if err != nil {
		t.Fatal(err)
	}
	rc := gen.DefaultRunConfig()
	rc.Duration = 300 * time.Millisecond
	col := hist.NewCollector(hist.DefaultConfig())
	res, err := gen.Run(context.Background(), rc, col, []gen.Producer{p}, []gen.Consumer{c})
	if err != nil || res.Status != gen.StatusOK {
		t.Fatalf("run: %s %s %v", res.Status, res.Error, err)
	}
	ps, cs := p.Stats(), c.Stats()
	svc := res.Summary.Metrics[gen.MetricService]
	t.Logf("producers %+v\nservice %v", ps, svc)
	if ps.Errors != 0 || ps.Acked == 0 || res.Summary.Counters[gen.CounterSendErrors] != 0 {
		t.Fatalf("producer stats %+v, counters %v", ps, res.Summary.Counters)
	}
	if len(ps.AckedByQueue) != 4 {
		t.Fatalf("acked by queue %v: want all 4 queues used", ps.AckedByQueue)
	}
	if svc.Count != ps.Acked {
		t.Fatalf("service samples %d, acked %d", svc.Count, ps.Acked)
	}
	if miss := gen.Missing(ps, cs); len(miss) != 0 || cs.Duplicates != 0 || cs.PullErrors != 0 || cs.Unique != ps.Acked {
		t.Fatalf("consumer %+v, missing %v", cs, miss)
	}
	if st := d.Stats(); st.Acks != ps.Acked || st.Errors != 0 {
		t.Fatalf("driver stats %+v, producers acked %d", st, ps.Acked)
	}
}

package gen

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/fakedriver"
	"github.com/brokerlab/brokerlab/workloads/hist"
)

func run(t *testing.T, ctx context.Context, cfg RunConfig, ps []Producer, cs []Consumer) (Result, *hist.Collector) {
	t.Helper()
	col := hist.NewCollector(hist.DefaultConfig())
	res, err := Run(ctx, cfg, col, ps, cs)
	if err != nil {
		t.Fatal(err)
	}
	return res, col
}

func openLoop(t *testing.T, cfg OpenLoopConfig, d workloads.Driver) *OpenLoop {
	t.Helper()
	p, err := NewOpenLoop(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Not parallel: it runs alone, before the parallel tests, so the rate is not
// disturbed by them.
func TestOpenLoopAchievesTargetRate(t *testing.T) {
	d := fakedriver.New(fakedriver.Config{})
	cfg := DefaultOpenLoopConfig()
	cfg.Rate, cfg.Workers = 2000, 8
	p := openLoop(t, cfg, d)
	rc := DefaultRunConfig()
	rc.Duration = 2 * time.Second
	res, _ := run(t, context.Background(), rc, []Producer{p}, nil)
	if res.Status != StatusOK {
		t.Fatalf("status %s %s", res.Status, res.Error)
	}
	s := res.Summary.Metrics[MetricService]
	// An open loop issues its schedule whatever the system (or a loaded CI
	// machine) does: 2 s at 2,000 msg/s is 4,000 intended sends. How late
	// they went out is the send delay, measured, not asserted.
	if math.Abs(float64(s.Count)-4000) > 40 {
		t.Fatalf("sent %d messages, want the 4000 the schedule intends", s.Count)
	}
	if s.Bytes != s.Count*1024 || math.Abs(s.MBps-s.Rate*1024/1e6) > 0.01 {
		t.Fatalf("bytes %d MB/s %.3f", s.Bytes, s.MBps)
	}
	st := p.Stats()
	if st.Acked != st.Issued || st.Errors != 0 || st.AckedByQueue[workloads.QueueRef{Topic: "bench"}] != st.Acked {
		t.Fatalf("stats %+v", st)
	}
	if len(res.Intervals) < 2 {
		t.Fatalf("%d intervals for a 2 s run at 1 s", len(res.Intervals))
	}
}

// An injected stall shows up in response latency (from the intended send
// time) and in send delay, but hardly in service latency: coordinated
// omission, demonstrated.
func TestOpenLoopStallShowsInResponseNotService(t *testing.T) {
	t.Parallel()
	const stall = 300 * time.Millisecond
	d := fakedriver.New(fakedriver.Config{Stalls: []fakedriver.Stall{{AtSend: 300, For: stall}}})
	cfg := DefaultOpenLoopConfig()
	cfg.Rate, cfg.Workers = 1000, 4
	rc := DefaultRunConfig()
	rc.Duration = 1500 * time.Millisecond
	res, _ := run(t, context.Background(), rc, []Producer{openLoop(t, cfg, d)}, nil)
	svc, rsp, dly := res.Summary.Metrics[MetricService], res.Summary.Metrics[MetricResponse], res.Summary.Metrics[MetricSendDelay]
	t.Logf("service %v\nresponse %v\nsend delay %v", svc, rsp, dly)
	if svc.Count != rsp.Count || svc.Count < 1000 {
		t.Fatalf("counts: service %d response %d", svc.Count, rsp.Count)
	}
	// ~300 of ~1500 messages fell due during the stall: they wait in the
	// response time. Only the (at most 4) sends in flight saw it as service time.
	if rsp.P99 < int64(stall/2) || rsp.Max < int64(stall*8/10) {
		t.Fatalf("response p99 %s max %s: the stall is missing", hist.FormatNs(rsp.P99), hist.FormatNs(rsp.Max))
	}
	if dly.P99 < int64(stall/3) {
		t.Fatalf("send delay p99 %s: the schedule slipped less than the stall", hist.FormatNs(dly.P99))
	}
	if svc.P99 > rsp.P99/3 {
		t.Fatalf("service p99 %s: the stall leaked into most service times", hist.FormatNs(svc.P99))
	}
	if svc.Max < int64(stall*8/10) {
		t.Fatalf("service max %s: the in-flight sends must have waited out the stall", hist.FormatNs(svc.Max))
	}
}

func TestClosedLoopConcurrency(t *testing.T) {
	t.Parallel()
	d := fakedriver.New(fakedriver.Config{ServiceTime: 20 * time.Millisecond})
	cfg := DefaultClosedLoopConfig()
	cfg.Producers = 8
	p, err := NewClosedLoop(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	rc := DefaultRunConfig()
	rc.Duration = 300 * time.Millisecond
	res, _ := run(t, context.Background(), rc, []Producer{p}, nil)
	if got := d.MaxInFlight(); got != 8 {
		t.Fatalf("max in flight %d, want exactly the 8 producers", got)
	}
	svc := res.Summary.Metrics[MetricService]
	if svc.Count == 0 || svc.Min < int64(20*time.Millisecond) {
		t.Fatalf("service %+v", svc)
	}
	if _, ok := res.Summary.Metrics[MetricResponse]; ok {
		t.Fatal("a closed loop has no intended send time: no response metric")
	}
}

func TestClosedLoopCountAndThinkTime(t *testing.T) {
	t.Parallel()
	d := fakedriver.New(fakedriver.Config{})
	cfg := DefaultClosedLoopConfig()
	cfg.Producers, cfg.Count, cfg.ThinkTime, cfg.CorrectedInterval = 4, 50, time.Millisecond, time.Millisecond
	p, _ := NewClosedLoop(cfg, d)
	res, _ := run(t, context.Background(), DefaultRunConfig(), []Producer{p}, nil)
	if st := p.Stats(); st.Issued != 50 || st.Acked != 50 {
		t.Fatalf("stats %+v, want exactly 50", st)
	}
	if n := res.Summary.Metrics[MetricService].Count; n != 50 {
		t.Fatalf("measured %d", n)
	}
	if n := res.Summary.Metrics[MetricServiceCorrected].Count; n < 50 {
		t.Fatalf("corrected count %d", n)
	}
}

func TestOpenLoopCountBound(t *testing.T) {
	t.Parallel()
	d := fakedriver.New(fakedriver.Config{})
	cfg := DefaultOpenLoopConfig()
	cfg.Rate, cfg.Count = 5000, 100
	p := openLoop(t, cfg, d)
	res, _ := run(t, context.Background(), DefaultRunConfig(), []Producer{p}, nil)
	if st := p.Stats(); st.Issued != 100 || d.Acked() != 100 || res.Summary.Metrics[MetricService].Count != 100 {
		t.Fatalf("stats %+v, fake acked %d", st, d.Acked())
	}
}

func TestWarmupExcludedFromSummary(t *testing.T) {
	t.Parallel()
	d := fakedriver.New(fakedriver.Config{})
	cfg := DefaultOpenLoopConfig()
	cfg.Rate, cfg.Workers, cfg.Count = 1000, 4, 200
	p := openLoop(t, cfg, d)
	rc := DefaultRunConfig()
	rc.Warmup, rc.Interval = 300*time.Millisecond, 100*time.Millisecond
	res, _ := run(t, context.Background(), rc, []Producer{p}, nil)
	warm := 0
	for _, iv := range res.Intervals {
		if iv.Warmup {
			warm++
		}
	}
	if warm == 0 || !res.Intervals[0].Warmup {
		t.Fatalf("%d of %d intervals flagged warm-up; the first one must be", warm, len(res.Intervals))
	}
	// Count bounds the messages due after warm-up, and each sample is
	// classified by its intended send time: exactly 200 are measured, while
	// ~300 more went out during warm-up.
	measured := res.Summary.Metrics[MetricService].Count
	if st := p.Stats(); st.Acked < 400 || measured != 200 {
		t.Fatalf("acked %d in total, %d measured; want ~500 and exactly 200", st.Acked, measured)
	}
	if !res.Summary.Start.Equal(res.MeasureFrom) {
		t.Fatalf("summary starts %v, warm-up ends %v", res.Summary.Start, res.MeasureFrom)
	}
}

func TestTailConsumerEndToEnd(t *testing.T) {
	t.Parallel()
	d := fakedriver.New(fakedriver.DefaultConfig())
	cfg := DefaultOpenLoopConfig()
	cfg.Rate, cfg.Workers, cfg.Count = 4000, 8, 1000
	cfg.Message.Queue = mustVar(t, "uniform:0-3")
	cfg.Message.Size = mustVar(t, "uniform:100-2000")
	p := openLoop(t, cfg, d)
	cc := DefaultConsumerConfig()
	cc.Queues = nil
	for q := int32(0); q < 4; q++ {
		cc.Queues = append(cc.Queues, workloads.QueueRef{Topic: "bench", QueueID: q})
	}
	c, err := NewTailConsumer(cc, d)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := run(t, context.Background(), DefaultRunConfig(), []Producer{p}, []Consumer{c})
	ps, cs := p.Stats(), c.Stats()
	if cs.Unique != ps.Acked || cs.Duplicates != 0 || cs.Foreign != 0 || cs.Bytes != ps.Bytes {
		t.Fatalf("producer %+v consumer %+v", ps, cs)
	}
	if m := Missing(ps, cs); len(m) != 0 {
		t.Fatalf("missing %v", m)
	}
	e2e := res.Summary.Metrics[MetricE2E]
	if e2e.Count != 1000 || e2e.Min < 0 || e2e.Max > int64(5*time.Second) {
		t.Fatalf("e2e %+v", e2e)
	}
	if ei := res.Summary.Metrics[MetricE2EIntended]; ei.Count != 1000 || ei.P50 < e2e.P50 {
		t.Fatalf("e2e from intended %v must be >= e2e %v", ei, e2e)
	}
}

func TestTailConsumerCountsDuplicatesAndForeign(t *testing.T) {
	t.Parallel()
	d := fakedriver.New(fakedriver.DefaultConfig())
	c, _ := NewTailConsumer(DefaultConsumerConfig(), d)
	if err := c.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	f, _ := NewFactory(DefaultMessageConfig())
	m := f.NewBuilder().Message(5)
	Stamp(m.Body, time.Now(), 0)
	for _, body := range [][]byte{m.Body, m.Body, []byte("short")} {
		if err := d.Send(context.Background(), &workloads.Message{Topic: "bench", Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	// Interrupted after 2 s (the consumers' 5 s drain would end the run
	// first otherwise): time for the three messages also on a loaded
	// machine. Stats are complete only once Run returns, so the test
	// cannot stop at the third message instead.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, col := run(t, ctx, DefaultRunConfig(), nil, []Consumer{c})
	if res.Status != StatusInterrupted {
		t.Fatalf("status %s", res.Status)
	}
	st := c.Stats()
	if st.Messages != 3 || st.Unique != 1 || st.Duplicates != 1 || st.Foreign != 1 {
		t.Fatalf("stats %+v", st)
	}
	if s := col.Summary(); s.Counters[CounterDuplicates] != 1 || s.Counters[CounterForeign] != 1 {
		t.Fatalf("counters %v", s.Counters)
	}
}

// hideLocator strips the ByteLocator extension so the estimate path runs.
type hideLocator struct{ workloads.Source }

func TestLagConsumerCatchUp(t *testing.T) {
	t.Parallel()
	d := fakedriver.New(fakedriver.DefaultConfig())
	cfg := DefaultClosedLoopConfig()
	cfg.Producers, cfg.Count = 4, 1000 // 1,000 messages of 1 KiB
	p, _ := NewClosedLoop(cfg, d)
	run(t, context.Background(), DefaultRunConfig(), []Producer{p}, nil)

	for _, tc := range []struct {
		name   string
		src    workloads.Source
		lc     func(*LagConfig)
		msgs   int64
		approx bool
	}{
		{"messages", d, func(c *LagConfig) { c.BehindMessages = 400 }, 400, false},
		{"bytes-exact", d, func(c *LagConfig) { c.BehindBytes = 250 * 1024 }, 250, false},
		{"bytes-estimated", hideLocator{d}, func(c *LagConfig) { c.BehindBytes = 250 * 1024 }, 250, true},
		{"more-than-exists", d, func(c *LagConfig) { c.BehindMessages = 5000 }, 1000, false},
	} {
		lc := DefaultLagConfig()
		lc.PullBatch = 64
		tc.lc(&lc)
		c, err := NewLagConsumer(lc, tc.src)
		if err != nil {
			t.Fatal(err)
		}
		res, _ := run(t, context.Background(), DefaultRunConfig(), nil, []Consumer{c})
		cu := c.CatchUp()
		if !cu.Done || cu.Messages != tc.msgs || cu.Backlog != tc.msgs || cu.Bytes != tc.msgs*1024 {
			t.Fatalf("%s: catch-up %+v, want %d messages", tc.name, cu, tc.msgs)
		}
		if cu.Elapsed <= 0 || cu.MsgPerSec <= 0 || cu.MBps <= 0 {
			t.Fatalf("%s: rates %+v", tc.name, cu)
		}
		if res.Summary.Counters[CounterCatchUp] != tc.msgs || res.Summary.Metrics[MetricPull].Bytes != tc.msgs*1024 {
			t.Fatalf("%s: summary %+v", tc.name, res.Summary)
		}
		if _, ok := res.Summary.Metrics[MetricE2E]; ok {
			t.Fatalf("%s: catch-up reads must not record e2e", tc.name)
		}
	}
}

func TestInterruptStillReports(t *testing.T) {
	t.Parallel()
	d := fakedriver.New(fakedriver.Config{})
	cfg := DefaultOpenLoopConfig()
	cfg.Rate = 2000
	// Interrupt once 50 sends were acknowledged (not after a fixed time: on
	// a loaded machine the workers may not have sent anything yet). Every
	// acknowledged send is recorded, interrupted or not.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acked := make(chan int64, 1)
	go func() {
		defer cancel()
		deadline := time.Now().Add(30 * time.Second)
		for d.Acked() < 50 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		acked <- d.Acked()
	}()
	res, err := Run(ctx, DefaultRunConfig(), hist.NewCollector(hist.DefaultConfig()), []Producer{openLoop(t, cfg, d)}, nil)
	if err != nil || res.Status != StatusInterrupted {
		t.Fatalf("err %v status %s", err, res.Status)
	}
	n := <-acked
	if n < 50 {
		t.Fatalf("only %d sends acknowledged in 30 s", n)
	}
	if got := res.Summary.Metrics[MetricService].Count; got < n || res.Ended.Before(res.Started) {
		t.Fatalf("interrupted run lost its results: %d service samples, %d acknowledged before the interrupt: %+v", got, n, res.Summary)
	}
}

func TestTooManyErrorsAborts(t *testing.T) {
	t.Parallel()
	d := fakedriver.New(fakedriver.Config{})
	d.SetError(errors.New("broker says no"))
	cfg := DefaultOpenLoopConfig()
	cfg.Rate, cfg.MaxErrors = 5000, 10
	rc := DefaultRunConfig()
	rc.Duration = 10 * time.Second
	res, err := Run(context.Background(), rc, hist.NewCollector(hist.DefaultConfig()), []Producer{openLoop(t, cfg, d)}, nil)
	if !errors.Is(err, ErrTooManyErrors) || res.Status != StatusError {
		t.Fatalf("err %v status %s", err, res.Status)
	}
	if n := res.Summary.Counters[CounterSendErrors]; n < 11 {
		t.Fatalf("send_errors %d", n)
	}
	if res.Ended.Sub(res.Started) > 5*time.Second {
		t.Fatal("the run did not stop at the error limit")
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	d := fakedriver.New(fakedriver.Config{})
	bad := DefaultOpenLoopConfig()
	bad.Rate = 0
	if _, err := NewOpenLoop(bad, d); !errors.Is(err, ErrConfig) {
		t.Fatalf("rate 0: %v", err)
	}
	bad = DefaultOpenLoopConfig()
	bad.Workers = 0
	if _, err := NewOpenLoop(bad, d); !errors.Is(err, ErrConfig) {
		t.Fatalf("0 workers: %v", err)
	}
	if _, err := NewClosedLoop(ClosedLoopConfig{}, d); !errors.Is(err, ErrConfig) {
		t.Fatalf("0 producers: %v", err)
	}
	if _, err := NewTailConsumer(ConsumerConfig{}, d); !errors.Is(err, ErrConfig) {
		t.Fatalf("no queues: %v", err)
	}
	if _, err := Run(context.Background(), DefaultRunConfig(), hist.NewCollector(hist.DefaultConfig()), nil, nil); !errors.Is(err, ErrConfig) {
		t.Fatalf("empty run: %v", err)
	}
	mc := DefaultMessageConfig()
	mc.Topics = []string{""}
	if _, err := NewFactory(mc); !errors.Is(err, ErrConfig) {
		t.Fatalf("empty topic: %v", err)
	}
}

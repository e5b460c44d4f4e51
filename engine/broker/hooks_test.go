package broker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// stageTolerance bounds how late a reply's Written instant may be stamped
// after the client already read it (the writer descheduled after writev).
// Generous: under -race on a loaded 2-core machine a goroutine can wait
// long for a CPU; the bound still catches a stamp on the wrong clock.
const stageTolerance = 2 * time.Second

// hookLog records every hook call.
type hookLog struct {
	mu            sync.Mutex
	before, after []broker.SendContext
	consumed      []broker.ConsumeContext
}

func (h *hookLog) SendBefore(sc *broker.SendContext) {
	h.mu.Lock()
	h.before = append(h.before, *sc)
	h.mu.Unlock()
}

func (h *hookLog) SendAfter(sc *broker.SendContext) {
	h.mu.Lock()
	h.after = append(h.after, *sc)
	h.mu.Unlock()
}

func (h *hookLog) ConsumeAfter(cc *broker.ConsumeContext) {
	h.mu.Lock()
	h.consumed = append(h.consumed, *cc)
	h.mu.Unlock()
}

// timingLog keeps each observed request's Timings by opaque.
type timingLog struct {
	mu sync.Mutex
	by map[int32]remoting.Observation
}

func (l *timingLog) Observe(_ *remoting.Conn, o *remoting.Observation) {
	l.mu.Lock()
	l.by[o.Opaque] = *o
	l.mu.Unlock()
}

func (l *timingLog) get(opaque int32) (remoting.Observation, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, ok := l.by[opaque]
	return o, ok
}

// TestSendHooksAndStageBreakdown: over a real store under every flush
// policy, the send hooks run once before and once after each send with its
// topic, group, queue and status; the consume hook sees the pull; every
// stage histogram counts each send once; and each send's stages partition
// its broker time, which fits in the client's round trip.
func TestSendHooksAndStageBreakdown(t *testing.T) {
	for _, pol := range flush.Kinds() {
		t.Run("flush="+string(pol), func(t *testing.T) {
			ns := startNamesrv(t)
			cfg := testConfig()
			cfg.NamesrvAddrs = []string{ns.Addr()}
			b, err := broker.New(cfg, broker.OpenStore(smallStoreConfig(t.TempDir(), pol), cfg.DelayLevels))
			if err != nil {
				t.Fatal(err)
			}
			hooks := &hookLog{}
			timings := &timingLog{by: make(map[int32]remoting.Observation)}
			b.AddSendHook(hooks)
			b.AddConsumeHook(hooks)
			b.AddObserver(timings)
			rec := b.RecordStages()
			if err := b.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
			client, _ := newClient(t)
			e := &env{t: t, ns: ns, b: b, client: client}
			e.createTopic("Hooked", 2)

			const producers, each = 4, 8
			type sent struct {
				opaque int32
				rtt    time.Duration
				queue  int32
			}
			var mu sync.Mutex
			var all []sent
			var wg sync.WaitGroup
			for p := range producers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range each {
						req := remoting.NewRequest(protocol.ReqSendMessageV2, sendHeader("Hooked", int32(p%2), "").ExtFields(true))
						req.Body = []byte("stage breakdown body")
						ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
						start := time.Now()
						resp, err := client.InvokeSync(ctx, b.Addr(), req)
						rtt := time.Since(start)
						cancel()
						if err != nil || resp.Code != protocol.RespSuccess {
							t.Errorf("send: %v %v", err, resp)
							return
						}
						mu.Lock()
						all = append(all, sent{req.Opaque, rtt, int32(p % 2)})
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			const n = producers * each
			if len(all) != n {
				t.Fatalf("%d sends succeeded, want %d", len(all), n)
			}
			eventually(t, "every reply observed", func() bool {
				for _, s := range all {
					if _, ok := timings.get(s.opaque); !ok {
						return false
					}
				}
				return true
			})

			waitsAfterLock := pol != flush.Sync && pol != flush.Async
			for _, s := range all {
				o, _ := timings.get(s.opaque)
				tm := o.Timings
				if !tm.Complete() {
					t.Fatalf("incomplete timings %+v", tm)
				}
				stages := []int64{tm.FrameRead - tm.FrameStart, tm.Decoded - tm.FrameRead, tm.Dequeued - tm.Decoded,
					tm.Replied - tm.Dequeued - tm.LockWait - tm.LockHold - tm.FlushWait,
					tm.LockWait, tm.LockHold, tm.FlushWait, tm.Written - tm.Replied}
				var sum int64
				for i, v := range stages {
					if v < 0 {
						t.Fatalf("stage %d negative: %+v", i, tm)
					}
					sum += v
				}
				if sum != int64(tm.Total()) {
					t.Fatalf("stages sum to %v, total %v", time.Duration(sum), tm.Total())
				}
				if time.Duration(tm.Replied-tm.FrameStart) > s.rtt || tm.Total() > s.rtt+stageTolerance {
					t.Fatalf("broker time %v (to reply %v) exceeds the round trip %v", tm.Total(),
						time.Duration(tm.Replied-tm.FrameStart), s.rtt)
				}
				if tm.LockHold <= 0 {
					t.Fatalf("no lock hold reported: %+v", tm)
				}
				if waitsAfterLock != (tm.FlushWait > 0) {
					t.Fatalf("flush wait %v under %s", time.Duration(tm.FlushWait), pol)
				}
			}

			// The recorder is told after the timing log, on the writer.
			eventually(t, "every send recorded", func() bool {
				h := rec.Snapshot().Hist[broker.StageTotal.String()]
				return h != nil && h.TotalCount() == n
			})
			snap := rec.Snapshot()
			for _, st := range broker.AllStages() {
				h := snap.Hist[st.String()]
				if h == nil || h.TotalCount() != n {
					t.Fatalf("stage %s: histogram %v, want %d values", st, h, n)
				}
			}
			if snap.Incomplete != 0 {
				t.Fatalf("%d incomplete sends", snap.Incomplete)
			}

			hooks.mu.Lock()
			before, after := hooks.before, hooks.after
			hooks.mu.Unlock()
			if len(before) != n || len(after) != n {
				t.Fatalf("hooks ran %d before and %d after, want %d each", len(before), len(after), n)
			}
			offsets := map[int32]map[int64]bool{0: {}, 1: {}}
			for i := range after {
				bf, af := before[i], after[i]
				if bf.Topic != "Hooked" || bf.ProducerGroup != "pg" || bf.Bytes != len("stage breakdown body") || bf.Status != 0 {
					t.Fatalf("before hook saw %+v", bf)
				}
				if af.Topic != "Hooked" || af.Status != protocol.RespSuccess || af.Msgs != 1 || af.Stages.LockHold <= 0 || af.Remote == nil {
					t.Fatalf("after hook saw %+v", af)
				}
				offsets[af.QueueID][af.QueueOffset] = true
			}
			if len(offsets[0])+len(offsets[1]) != n {
				t.Fatalf("after hooks saw queue offsets %v, want %d distinct", offsets, n)
			}

			eventually(t, "queue 1 dispatched", func() bool {
				return b.Store().MaxOffset("Hooked", 1) == int64(len(offsets[1]))
			})
			resp := e.pull("cg", "Hooked", 1, 0, 64)
			wantCode(t, "pull", resp, protocol.RespSuccess)
			hooks.mu.Lock()
			consumed := hooks.consumed
			hooks.mu.Unlock()
			if len(consumed) != 1 {
				t.Fatalf("consume hook ran %d times", len(consumed))
			}
			if c := consumed[0]; c.ConsumerGroup != "cg" || c.Topic != "Hooked" || c.QueueID != 1 ||
				c.Msgs != len(offsets[1]) || c.Status != protocol.RespSuccess || c.Bytes != len(resp.Body) {
				t.Fatalf("consume hook saw %+v (want %d messages)", c, len(offsets[1]))
			}
		})
	}
}

// TestSendHooksSkipRefusedHeader: a send whose header cannot be read runs
// no hooks, and an unhooked broker answers sends as before.
func TestSendHooksSkipRefusedHeader(t *testing.T) {
	e := startEnv(t, nil) // no hooks: the nil SendContext path
	e.createTopic("Plain", 1)
	e.mustSend("Plain", 0, "x", "")

	ns := startNamesrv(t)
	cfg := testConfig()
	cfg.NamesrvAddrs = []string{ns.Addr()}
	b, err := broker.New(cfg, broker.WithStore(e.store))
	if err != nil {
		t.Fatal(err)
	}
	hooks := &hookLog{}
	b.AddSendHook(hooks)
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	resp := callWith(t, e.client, b.Addr(), protocol.ReqSendMessageV2, remoting.ExtFields{"b": "Plain"}, []byte("x"))
	if resp.Code == protocol.RespSuccess {
		t.Fatalf("a send without a producer group succeeded")
	}
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	if len(hooks.before)+len(hooks.after) != 0 {
		t.Fatalf("hooks ran for a refused header: %+v %+v", hooks.before, hooks.after)
	}
}

// TestStagesCountQueuedRefusalsAsIncomplete: a send answered SYSTEM_BUSY by
// the fast-failure sweep while it waited for a send worker is counted as
// incomplete, not recorded with its queue wait as processing; the send that
// ran is recorded.
func TestStagesCountQueuedRefusalsAsIncomplete(t *testing.T) {
	e := &env{t: t, ns: startNamesrv(t), store: memstore.New()}
	cfg := testConfig()
	cfg.NamesrvAddrs = []string{e.ns.Addr()}
	cfg.SendWorkers = 1
	cfg.SendQueueMaxWait = 30 * time.Millisecond
	b, err := broker.New(cfg, broker.WithStore(e.store))
	if err != nil {
		t.Fatal(err)
	}
	rec := b.RecordStages()
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	e.b = b
	e.client, e.pushes = newClient(t)
	e.createTopic("T", 1)
	entered, release := blockPuts(e)
	first := e.asyncSend("T", "slow")
	<-entered // the only worker is stuck in the store
	wantCode(t, "queued send", <-e.asyncSend("T", "queued"), protocol.RespSystemBusy)
	release()
	wantCode(t, "blocked send", <-first, protocol.RespSuccess)
	eventually(t, "both sends observed", func() bool {
		s := rec.Snapshot()
		h := s.Hist[broker.StageTotal.String()]
		return s.Incomplete == 1 && h != nil && h.TotalCount() == 1
	})
}

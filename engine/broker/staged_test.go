package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// TestStagedPutsShareGroupCommits: with a single send worker and many
// producers waiting under group commit, the worker appends and hands each
// wait for the flush on (asyncPutMessage), so one flush serves many sends.
// A worker that waited itself would let every flush serve exactly one.
// Every send is answered SUCCESS and stored, and Shutdown waits for the
// waits it handed on.
func TestStagedPutsShareGroupCommits(t *testing.T) {
	ns := startNamesrv(t)
	cfg := testConfig()
	cfg.NamesrvAddrs = []string{ns.Addr()}
	cfg.SendWorkers = 1
	b, err := broker.New(cfg, broker.OpenStore(smallStoreConfig(t.TempDir(), flush.Group), cfg.DelayLevels))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	e := &env{t: t, ns: ns, b: b}
	e.client, e.pushes = newClient(t)
	const topic, queues, producers, each = "Staged", 4, 32, 20
	e.createTopic(topic, queues)
	es, ok := b.Store().(broker.EngineStore)
	if !ok {
		t.Fatal("the broker's store is not an engine/store")
	}
	s := es.EngineStore()
	before := s.Stats().Flush.Flushes

	var wg sync.WaitGroup
	errs := make(chan string, producers)
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				if resp := e.send(topic, int32(p%queues), fmt.Sprintf("p%d-%d", p, i), ""); resp.Code != protocol.RespSuccess {
					errs <- fmt.Sprintf("producer %d send %d: %v", p, i, resp)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if t.Failed() {
		t.FailNow()
	}
	const total = producers * each
	// Answered sends are in the commit log; their consume-queue units are
	// built by the background dispatch, so wait for it to reach them all
	// (and not beyond).
	stored := func() (n int64) {
		for q := range int32(queues) {
			n += b.Store().MaxOffset(topic, q)
		}
		return n
	}
	eventually(t, "every answered send dispatched", func() bool { return stored() >= total })
	if n := stored(); n != total {
		t.Fatalf("stored %d messages, sent %d", n, total)
	}
	flushes := s.Stats().Flush.Flushes - before
	if flushes == 0 || flushes*2 > total {
		t.Fatalf("%d flushes for %d sends through one send worker: the group commit did not serve several sends", flushes, total)
	}
	t.Logf("%d sends, %d flushes (%.1f sends per flush) through one send worker", total, flushes, float64(total)/float64(flushes))
}

// TestOnewayRefusalsCounted: a oneway send is never answered, so the
// broker counts the ones it did not store: SYSTEM_BUSY from flow control
// as busy, any other refusal as other; stored oneway sends and answered
// (two-way) refusals count nothing.
func TestOnewayRefusalsCounted(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	oneway := func(topic string) {
		t.Helper()
		req := remoting.NewRequest(protocol.ReqSendMessageV2, sendHeader(topic, 0, "").ExtFields(true))
		req.Body = []byte("x")
		if err := e.client.InvokeOneway(context.Background(), e.b.Addr(), req); err != nil {
			t.Fatal(err)
		}
	}
	oneway("T")
	eventually(t, "the oneway send stored", func() bool { return e.b.Store().MaxOffset("T", 0) == 1 })

	e.store.SetOSPageCacheBusy(true)
	wantCode(t, "two-way send while busy", e.send("T", 0, "x", ""), protocol.RespSystemBusy)
	oneway("T")
	oneway("T")
	eventually(t, "two busy refusals counted", func() bool { return e.b.FlowControl().OnewayRefusedBusy == 2 })
	e.store.SetOSPageCacheBusy(false)

	oneway(protocol.ScheduleTopic) // NO_PERMISSION
	eventually(t, "the forbidden topic's refusal counted", func() bool { return e.b.FlowControl().OnewayRefusedOther == 1 })
	e.mustSend("T", 0, "y", "") // a later answered send: the counters stand
	if fc := e.b.FlowControl(); fc.OnewayRefusedBusy != 2 || fc.OnewayRefusedOther != 1 || e.b.Store().MaxOffset("T", 0) != 2 {
		t.Fatalf("flow control %+v, stored %d", fc, e.b.Store().MaxOffset("T", 0))
	}
}

package broker_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

// smallStoreConfig is an engine/store config with small files.
func smallStoreConfig(dir string, pol flush.Kind) store.Config {
	cfg := store.DefaultConfig(dir)
	cfg.CommitLog.Flush = flush.DefaultConfig(pol)
	cfg.CommitLog.Flush.Interval = 5 * time.Millisecond
	cfg.CommitLog.SegmentSize = 1 << 20
	cfg.ConsumeQueue = consumequeue.Config{UnitsPerFile: 1024}
	cfg.Index = index.Config{MaxHashSlots: 1024, MaxIndexNum: 4096, MaxQueryNum: 64}
	cfg.ReadCacheBytes = 1 << 20
	cfg.CleanInterval = 0
	cfg.Logger = quiet
	return cfg
}

// startRealEnv is startEnv over engine/store in dir (e.store stays nil).
func startRealEnv(t *testing.T, dir string, pol flush.Kind, ns string) *env {
	t.Helper()
	e := &env{t: t}
	cfg := testConfig()
	cfg.NamesrvAddrs = []string{ns}
	b, err := broker.New(cfg, broker.OpenStore(smallStoreConfig(dir, pol), cfg.DelayLevels))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	e.b = b
	e.client, e.pushes = newClient(t)
	return e
}

func TestRealStore(t *testing.T) {
	for _, pol := range flush.Kinds() {
		t.Run("flush="+string(pol), func(t *testing.T) {
			ns := startNamesrv(t)
			dir := t.TempDir()
			e := startRealEnv(t, dir, pol, ns.Addr())
			e.ns = ns
			e.createTopic("T", 2)

			// Long polling is woken by the store's dispatcher.
			ch := e.asyncPull(pullExt("g", "T", 1, 0, 32, protocol.PullFlagSuspend, 20000))
			eventually(t, "the pull to be held", func() bool { return e.b.HeldPulls() == 1 })
			first := e.mustSend("T", 1, "one", props(record.PropertyKeys, "key1"))
			resp := <-ch
			wantCode(t, "woken pull", resp, protocol.RespSuccess)
			if recs := decodeAll(t, resp.Body); len(recs) != 1 || string(recs[0].Body) != "one" {
				t.Fatalf("woken pull: %v", recs)
			}

			var batch []byte
			for _, b := range []string{"two", "three"} {
				batch = record.AppendBatchItem(batch, record.BatchItem{Body: []byte(b)})
			}
			h := sendHeader("T", 1, "")
			h.Batch = true
			br := e.call(protocol.ReqSendBatchMessage, h.ExtFields(true), batch)
			wantCode(t, "batch", br, protocol.RespSuccess)
			if ids := strings.Split(br.ExtFields["msgId"], ","); len(ids) != 2 || extInt(t, br, "queueOffset") != 1 {
				t.Fatalf("batch reply %v", br.ExtFields)
			}
			eventually(t, "dispatch", func() bool { return e.maxOffset("T", 1) == 3 })
			recs := decodeAll(t, e.pull("g", "T", 1, 0, 32).Body)
			if len(recs) != 3 || string(recs[2].Body) != "three" || recs[2].QueueOffset != 2 {
				t.Fatalf("pulled %d records", len(recs))
			}

			_, phys, _ := record.ParseOffsetMsgID(first.ExtFields["msgId"])
			view := e.call(protocol.ReqViewMessageByID, remoting.ExtFields{"offset": itoa(phys)}, nil)
			wantCode(t, "view", view, protocol.RespSuccess)
			q := e.call(protocol.ReqQueryMessage, remoting.ExtFields{"topic": "T", "key": "key1", "maxNum": "8", "beginTimestamp": "0", "endTimestamp": "9999999999999"}, nil)
			wantCode(t, "query", q, protocol.RespSuccess)

			// Retry through the schedule topic.
			wantCode(t, "send back", e.call(protocol.ReqConsumerSendMsgBack, sendBackExt("g", phys, 1, 16), nil), protocol.RespSuccess)
			eventually(t, "retry delivery", func() bool { return e.maxOffset(protocol.RetryTopic("g"), 0) == 1 })

			upd := remoting.ExtFields{"consumerGroup": "g", "topic": "T", "queueId": "1", "commitOffset": "3"}
			wantCode(t, "commit", e.call(protocol.ReqUpdateConsumerOffset, upd, nil), protocol.RespSuccess)

			if err := e.b.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(store.AbortPath(dir)); !os.IsNotExist(err) {
				t.Fatalf("abort file after a clean shutdown: %v", err)
			}

			// Restart on the same directory: messages, topics and offsets are back.
			e2 := startRealEnv(t, dir, pol, ns.Addr())
			if got := decodeAll(t, e2.pull("g", "T", 1, 0, 32).Body); len(got) != 3 {
				t.Fatalf("after restart: %d records", len(got))
			}
			off := e2.call(protocol.ReqQueryConsumerOffset, remoting.ExtFields{"consumerGroup": "g", "topic": "T", "queueId": "1"}, nil)
			if extInt(t, off, "offset") != 3 {
				t.Fatalf("offset after restart %v", off.ExtFields)
			}
			if e2.maxOffset(protocol.RetryTopic("g"), 0) != 1 {
				t.Fatal("retry message lost across restart")
			}
			eventually(t, "route after restart", func() bool { rd, ok := ns.TopicRoute("T"); return ok && rd.QueueDatas[0].ReadQueueNums == 2 })
		})
	}
}

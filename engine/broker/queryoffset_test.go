package broker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// queryOffset asks for (g, topic, queue) and returns the code and offset.
func (e *env) queryOffset(topic string, queueID int, extra ...string) (int32, int64) {
	e.t.Helper()
	q := remoting.ExtFields{"consumerGroup": "g", "topic": topic, "queueId": itoa(int64(queueID))}
	for i := 0; i+1 < len(extra); i += 2 {
		q[extra[i]] = extra[i+1]
	}
	resp := e.call(protocol.ReqQueryConsumerOffset, q, nil)
	if resp.Code != protocol.RespSuccess {
		return resp.Code, -1
	}
	return resp.Code, extInt(e.t, resp, "offset")
}

// TestQueryConsumerOffsetWithoutStoredOffset follows Java's
// ConsumerManageProcessor for a group with no stored offset: 0 when the
// queue's minimum offset is 0 and its first message is in memory,
// QUERY_NOT_FOUND for an empty queue, a queue whose head was cleaned, or
// a request with setZeroIfNotFound=false; a stored offset always wins.
func TestQueryConsumerOffsetWithoutStoredOffset(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("Q", 3)
	if code, _ := e.queryOffset("Q", 0); code != protocol.RespQueryNotFound {
		t.Fatalf("empty queue: %s", protocol.ResponseCodeName(code))
	}
	e.mustSend("Q", 0, "a", "")
	e.mustSend("Q", 0, "b", "")
	if code, off := e.queryOffset("Q", 0); code != protocol.RespSuccess || off != 0 {
		t.Fatalf("young queue: %s %d, want SUCCESS 0", protocol.ResponseCodeName(code), off)
	}
	if code, _ := e.queryOffset("Q", 0, "setZeroIfNotFound", "false"); code != protocol.RespQueryNotFound {
		t.Fatalf("setZeroIfNotFound=false: %s", protocol.ResponseCodeName(code))
	}
	if code, _ := e.queryOffset("Q", 1); code != protocol.RespQueryNotFound {
		t.Fatalf("other, empty queue: %s", protocol.ResponseCodeName(code))
	}
	e.mustSend("Q", 2, "c", "")
	e.mustSend("Q", 2, "d", "")
	e.store.Truncate("Q", 2, 1)
	if code, _ := e.queryOffset("Q", 2); code != protocol.RespQueryNotFound {
		t.Fatalf("queue whose first message was cleaned: %s", protocol.ResponseCodeName(code))
	}
	upd := remoting.ExtFields{"consumerGroup": "g", "topic": "Q", "queueId": "0", "commitOffset": "2"}
	wantCode(t, "commit", e.call(protocol.ReqUpdateConsumerOffset, upd, nil), protocol.RespSuccess)
	if code, off := e.queryOffset("Q", 0); code != protocol.RespSuccess || off != 2 {
		t.Fatalf("stored offset: %s %d", protocol.ResponseCodeName(code), off)
	}
}

// TestQueryConsumerOffsetInMemoryOnRealStore: over engine/store the
// first message counts as in memory while it lies within
// AccessMessageInMemoryMaxRatio of RAM from the commit log's end (the
// store's measure for pulls); with a tiny RAM figure it falls out of that
// window after a few more messages and the answer becomes QUERY_NOT_FOUND.
func TestQueryConsumerOffsetInMemoryOnRealStore(t *testing.T) {
	ns := startNamesrv(t)
	cfg := testConfig()
	cfg.NamesrvAddrs = []string{ns.Addr()}
	scfg := smallStoreConfig(t.TempDir(), flush.Kinds()[0])
	scfg.TotalMemoryBytes = 2000 // 40 %: the last 800 bytes of the log are "in memory"
	b, err := broker.New(cfg, broker.OpenStore(scfg, cfg.DelayLevels))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	e := &env{t: t, b: b}
	e.client, e.pushes = newClient(t)
	e.createTopic("R", 1)
	e.mustSend("R", 0, "first", "")
	// The consume queue is written by the store's dispatcher, just after the put.
	eventually(t, "first message in memory: SUCCESS 0", func() bool {
		code, off := e.queryOffset("R", 0)
		return code == protocol.RespSuccess && off == 0
	})
	for range 10 {
		e.mustSend("R", 0, strings.Repeat("x", 200), "")
	}
	if code, _ := e.queryOffset("R", 0); code != protocol.RespQueryNotFound {
		t.Fatalf("first message out of the in-memory window: %s", protocol.ResponseCodeName(code))
	}
}

package broker_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

func (e *env) asyncSend(topic, body string) <-chan *remoting.Command {
	ch := make(chan *remoting.Command, 1)
	req := remoting.NewRequest(protocol.ReqSendMessageV2, sendHeader(topic, 0, "").ExtFields(true))
	req.Body = []byte(body)
	err := e.client.InvokeAsync(context.Background(), e.b.Addr(), req, func(resp *remoting.Command, err error) {
		if err != nil {
			resp = remoting.NewResponse(-1, err.Error())
		}
		ch <- resp
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return ch
}

// blockPuts makes every put of body "slow" wait until the returned func is
// called, and reports on entered when one is waiting.
func blockPuts(e *env) (entered <-chan struct{}, release func()) {
	in := make(chan struct{}, 16)
	gate := make(chan struct{})
	e.store.SetPutHook(func(_ context.Context, m *record.Message) (broker.PutStatus, error) {
		if string(m.Body) == "slow" {
			in <- struct{}{}
			<-gate
		}
		return broker.PutOK, nil
	})
	var once sync.Once
	return in, func() { once.Do(func() { close(gate) }) }
}

func TestSystemBusyWhenPageCacheBusy(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	e.store.SetOSPageCacheBusy(true)
	resp := e.send("T", 0, "x", "")
	wantCode(t, "send while busy", resp, protocol.RespSystemBusy)
	if !strings.Contains(resp.Remark, "REJECTREQUEST") {
		t.Fatalf("remark %q", resp.Remark)
	}
	e.store.SetOSPageCacheBusy(false)
	e.mustSend("T", 0, "x", "")
}

func TestSystemBusyWhenQueuedTooLong(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) {
		c.SendWorkers = 1
		c.SendQueueMaxWait = 30 * time.Millisecond
	})
	e.createTopic("T", 1)
	entered, release := blockPuts(e)
	first := e.asyncSend("T", "slow")
	<-entered // the only worker is stuck in the store
	second := e.asyncSend("T", "queued")
	resp := <-second // answered by the fast-failure sweep while the worker is still stuck
	wantCode(t, "queued send", resp, protocol.RespSystemBusy)
	if !strings.Contains(resp.Remark, "TIMEOUT_CLEAN_QUEUE") {
		t.Fatalf("remark %q", resp.Remark)
	}
	release()
	wantCode(t, "blocked send", <-first, protocol.RespSuccess)
	if e.maxOffset("T", 0) != 1 {
		t.Fatal("the expired send was stored")
	}
}

func TestSystemBusyCleansQueueWhenPageCacheTurnsBusy(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) {
		c.SendWorkers = 1
		c.SendQueueMaxWait = time.Hour
	})
	e.createTopic("T", 1)
	entered, release := blockPuts(e)
	defer release()
	first := e.asyncSend("T", "slow")
	<-entered
	second := e.asyncSend("T", "queued")
	eventually(t, "the send to be queued", func() bool { return e.b.QueuedSends() == 1 })
	e.store.SetOSPageCacheBusy(true)
	resp := <-second
	wantCode(t, "queued send", resp, protocol.RespSystemBusy)
	if !strings.Contains(resp.Remark, "PCBUSY_CLEAN_QUEUE") {
		t.Fatalf("remark %q", resp.Remark)
	}
	e.store.SetOSPageCacheBusy(false)
	release()
	wantCode(t, "blocked send", <-first, protocol.RespSuccess)
}

func TestSystemBusyWhenSendQueueFull(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) {
		c.SendWorkers = 1
		c.SendQueueSize = 1
		c.SendQueueMaxWait = time.Hour
	})
	e.createTopic("T", 1)
	entered, release := blockPuts(e)
	defer release()
	first := e.asyncSend("T", "slow")
	<-entered
	second := e.asyncSend("T", "queued")
	eventually(t, "the send to be queued", func() bool { return e.b.QueuedSends() == 1 })
	wantCode(t, "overflowing send", <-e.asyncSend("T", "overflow"), protocol.RespSystemBusy)
	release()
	wantCode(t, "blocked send", <-first, protocol.RespSuccess)
	wantCode(t, "queued send", <-second, protocol.RespSuccess)
}

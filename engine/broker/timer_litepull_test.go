package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// litePullFlags is what Java's DefaultLitePullConsumer sends
// (buildSysFlag(false, block, true, false, true)).
const litePullFlags = protocol.PullFlagSuspend | protocol.PullFlagSubscription | protocol.PullFlagLitePull

func litePullExt(topic string, queueID int32, offset int64, sub string) remoting.ExtFields {
	ext := pullExt("lite-g", topic, queueID, offset, 32, litePullFlags, 20000)
	ext["subscription"] = sub
	ext["commitOffset"] = "0"
	return ext
}

func (e *env) asyncLitePull(ext remoting.ExtFields) <-chan *remoting.Command {
	ch := make(chan *remoting.Command, 1)
	err := e.client.InvokeAsync(context.Background(), e.b.Addr(), remoting.NewRequest(protocol.ReqLitePullMessage, ext),
		func(resp *remoting.Command, err error) {
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

func TestLitePullServedAsPull(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	e.mustSend("T", 0, "a1", props(record.PropertyTags, "A"))
	e.mustSend("T", 0, "b1", props(record.PropertyTags, "B"))

	resp := e.call(protocol.ReqLitePullMessage, litePullExt("T", 0, 0, "*"), nil)
	wantCode(t, "lite pull", resp, protocol.RespSuccess)
	if recs := decodeAll(t, resp.Body); len(recs) != 2 || string(recs[1].Body) != "b1" {
		t.Fatalf("lite pull got %d records", len(recs))
	}
	if extInt(t, resp, "nextBeginOffset") != 2 || extInt(t, resp, "maxOffset") != 2 {
		t.Fatalf("lite pull reply %v", resp.ExtFields)
	}

	// The request's subscription filters by tag.
	resp = e.call(protocol.ReqLitePullMessage, litePullExt("T", 0, 0, "B"), nil)
	wantCode(t, "lite pull B", resp, protocol.RespSuccess)
	if recs := decodeAll(t, resp.Body); len(recs) != 1 || string(recs[0].Body) != "b1" {
		t.Fatalf("lite pull with tag B got %v", recs)
	}

	// Long polling: held until a message arrives.
	ch := e.asyncLitePull(litePullExt("T", 0, 2, "*"))
	eventually(t, "the lite pull to be held", func() bool { return e.b.HeldPulls() == 1 })
	select {
	case r := <-ch:
		t.Fatalf("held lite pull answered before any message: code %d", r.Code)
	case <-time.After(100 * time.Millisecond):
	}
	e.mustSend("T", 0, "a2", props(record.PropertyTags, "A"))
	r := <-ch
	wantCode(t, "woken lite pull", r, protocol.RespSuccess)
	if recs := decodeAll(t, r.Body); len(recs) != 1 || string(recs[0].Body) != "a2" {
		t.Fatalf("woken lite pull got %v", recs)
	}

	// Errors echo the offset, as PULL_MESSAGE's do.
	resp = e.call(protocol.ReqLitePullMessage, litePullExt("Missing", 0, 7, "*"), nil)
	wantCode(t, "lite pull of a missing topic", resp, protocol.RespTopicNotExist)
	if extInt(t, resp, "nextBeginOffset") != 7 {
		t.Fatalf("nextBeginOffset %v", resp.ExtFields)
	}
}

func TestLitePullDisabled(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) { c.LitePullEnable = false })
	e.createTopic("T", 1)
	e.mustSend("T", 0, "m", "")
	resp := e.call(protocol.ReqLitePullMessage, litePullExt("T", 0, 0, "*"), nil)
	wantCode(t, "disabled lite pull", resp, protocol.RespNoPermission)
	if extInt(t, resp, "nextBeginOffset") != 0 {
		t.Fatalf("nextBeginOffset %v", resp.ExtFields)
	}
	wantCode(t, "pull still served", e.pull("g", "T", 0, 0, 32), protocol.RespSuccess)
}

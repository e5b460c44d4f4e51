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

func TestPullCodes(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 2)
	for i := range 5 {
		e.mustSend("T", 0, "m"+itoa(int64(i)), props(record.PropertyTags, "B"))
	}

	check := func(name string, resp *remoting.Command, code int32, next int64) {
		t.Helper()
		wantCode(t, name, resp, code)
		if got := extInt(t, resp, "nextBeginOffset"); got != next {
			t.Fatalf("%s: nextBeginOffset %d, want %d", name, got, next)
		}
		for _, k := range []string{"minOffset", "maxOffset", "suggestWhichBrokerId"} {
			if _, ok := resp.ExtFields[k]; !ok {
				t.Fatalf("%s: ext %s missing: %v", name, k, resp.ExtFields)
			}
		}
	}
	check("found", e.pull("g", "T", 0, 1, 2), protocol.RespSuccess, 3)
	check("at the end", e.pull("g", "T", 0, 5, 32), protocol.RespPullNotFound, 5)
	check("past the end", e.pull("g", "T", 0, 9, 32), protocol.RespPullOffsetMoved, 0)
	check("empty queue at 0", e.pull("g", "T", 1, 0, 32), protocol.RespPullNotFound, 0)
	check("empty queue past 0", e.pull("g", "T", 1, 7, 32), protocol.RespPullOffsetMoved, 0)
	check("unknown topic", e.pull("g", "Nope", 0, 4, 32), protocol.RespTopicNotExist, 4)
	check("bad queue", e.pull("g", "T", 2, 4, 32), protocol.RespSystemError, 4)

	// maxMsgNums 0 (the Go pull consumer's default) reads a default batch.
	resp := e.pull("g", "T", 0, 0, 0)
	check("maxMsgNums 0", resp, protocol.RespSuccess, 5)
	if n := len(decodeAll(t, resp.Body)); n != 5 {
		t.Fatalf("maxMsgNums 0 read %d", n)
	}

	// A TAG subscription in the request filters by tags code; nothing matches → 20.
	ext := pullExt("g", "T", 0, 0, 32, protocol.PullFlagSubscription, 0)
	ext["subscription"] = "A || C"
	check("no tag matched", e.call(protocol.ReqPullMessage, ext, nil), protocol.RespPullRetryImmediately, 5)
	ext["subscription"] = "B"
	check("tag matched", e.call(protocol.ReqPullMessage, ext, nil), protocol.RespSuccess, 5)
	ext["expressionType"] = "SQL92"
	ext["subscription"] = "a >"
	check("sql92 syntax error", e.call(protocol.ReqPullMessage, ext, nil), protocol.RespSubscriptionParseFailed, 0)

	// Below the min offset (cleaned data) → moved to the min.
	e.store.Truncate("T", 0, 2)
	check("too small", e.pull("g", "T", 0, 1, 32), protocol.RespPullOffsetMoved, 2)

	// Malformed header: still a nextBeginOffset.
	bad := pullExt("g", "T", 0, 3, 32, 0, 0)
	delete(bad, "topic")
	check("malformed", e.call(protocol.ReqPullMessage, bad, nil), protocol.RespSystemError, 3)
}

func TestPullCommitsPiggyBackedOffset(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	e.mustSend("T", 0, "x", "")
	q := remoting.ExtFields{"consumerGroup": "g", "topic": "T", "queueId": "0", "setZeroIfNotFound": "false"}
	wantCode(t, "no offset yet", e.call(protocol.ReqQueryConsumerOffset, q, nil), protocol.RespQueryNotFound)

	ext := pullExt("g", "T", 0, 1, 32, protocol.PullFlagCommitOffset, 0)
	ext["commitOffset"] = "1"
	e.call(protocol.ReqPullMessage, ext, nil)
	resp := e.call(protocol.ReqQueryConsumerOffset, q, nil)
	wantCode(t, "after piggy-back", resp, protocol.RespSuccess)
	if extInt(t, resp, "offset") != 1 {
		t.Fatalf("offset %v", resp.ExtFields)
	}
	// Without the flag the commitOffset is ignored.
	ext = pullExt("g", "T", 0, 1, 32, 0, 0)
	ext["commitOffset"] = "0"
	e.call(protocol.ReqPullMessage, ext, nil)
	if got := extInt(t, e.call(protocol.ReqQueryConsumerOffset, q, nil), "offset"); got != 1 {
		t.Fatalf("offset moved to %d without the commit flag", got)
	}
}

func TestConsumerOffsets(t *testing.T) {
	e := startEnv(t, nil)
	q := remoting.ExtFields{"consumerGroup": "g", "topic": "T", "queueId": "3"}
	wantCode(t, "query", e.call(protocol.ReqQueryConsumerOffset, q, nil), protocol.RespQueryNotFound)
	upd := remoting.ExtFields{"consumerGroup": "g", "topic": "T", "queueId": "3", "commitOffset": "-1"}
	wantCode(t, "update -1", e.call(protocol.ReqUpdateConsumerOffset, upd, nil), protocol.RespSuccess)
	wantCode(t, "query after -1", e.call(protocol.ReqQueryConsumerOffset, q, nil), protocol.RespQueryNotFound)
	upd["commitOffset"] = "42"
	wantCode(t, "update 42", e.call(protocol.ReqUpdateConsumerOffset, upd, nil), protocol.RespSuccess)
	if got := extInt(t, e.call(protocol.ReqQueryConsumerOffset, q, nil), "offset"); got != 42 {
		t.Fatalf("offset %d", got)
	}
	delete(upd, "commitOffset")
	wantCode(t, "update without offset", e.call(protocol.ReqUpdateConsumerOffset, upd, nil), protocol.RespSystemError)
}

// asyncPull issues a pull and returns a channel with its answer.
func (e *env) asyncPull(ext remoting.ExtFields) <-chan *remoting.Command {
	ch := make(chan *remoting.Command, 1)
	req := remoting.NewRequest(protocol.ReqPullMessage, ext)
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

func TestLongPollWakesOnArrival(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	ch := e.asyncPull(pullExt("g", "T", 0, 0, 32, protocol.PullFlagSuspend, 20000))
	eventually(t, "the pull to be held", func() bool { return e.b.HeldPulls() == 1 })
	select {
	case resp := <-ch:
		t.Fatalf("held pull answered before any message: %v", resp)
	default:
	}
	e.mustSend("T", 0, "wake", "")
	resp := <-ch
	wantCode(t, "woken pull", resp, protocol.RespSuccess)
	if recs := decodeAll(t, resp.Body); len(recs) != 1 || string(recs[0].Body) != "wake" {
		t.Fatalf("woken pull returned %v", recs)
	}
	if e.b.HeldPulls() != 0 {
		t.Fatalf("%d pulls still held", e.b.HeldPulls())
	}
}

func TestLongPollIgnoresNonMatchingTags(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	ext := pullExt("g", "T", 0, 0, 32, protocol.PullFlagSuspend|protocol.PullFlagSubscription, 20000)
	ext["subscription"] = "A"
	ch := e.asyncPull(ext)
	eventually(t, "the pull to be held", func() bool { return e.b.HeldPulls() == 1 })
	e.mustSend("T", 0, "b", props(record.PropertyTags, "B")) // wakes the pull, which is held again
	e.mustSend("T", 0, "a", props(record.PropertyTags, "A"))
	resp := <-ch
	wantCode(t, "woken pull", resp, protocol.RespSuccess)
	if recs := decodeAll(t, resp.Body); len(recs) != 1 || string(recs[0].Body) != "a" || extInt(t, resp, "nextBeginOffset") != 2 {
		t.Fatalf("woken pull: %d records, ext %v", len(recs), resp.ExtFields)
	}
}

func TestLongPollTimesOut(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	e.mustSend("T", 0, "x", "")
	resp := <-e.asyncPull(pullExt("g", "T", 0, 1, 32, protocol.PullFlagSuspend, 50))
	wantCode(t, "timed-out pull", resp, protocol.RespPullNotFound)
	if extInt(t, resp, "nextBeginOffset") != 1 {
		t.Fatalf("timed-out pull must keep the requested offset: %v", resp.ExtFields)
	}
}

func TestLongPollRecheckFindsMissedArrival(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) { c.LongPollingCheckInterval = 10 * time.Millisecond })
	e.createTopic("T", 1)
	e.store.SetArrivingListener(nil) // a store that never notifies
	ch := e.asyncPull(pullExt("g", "T", 0, 0, 32, protocol.PullFlagSuspend, 20000))
	eventually(t, "the pull to be held", func() bool { return e.b.HeldPulls() == 1 })
	e.mustSend("T", 0, "x", "")
	wantCode(t, "re-checked pull", <-ch, protocol.RespSuccess)
}

func TestShortPollingWhenLongPollingIsOff(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) {
		c.LongPolling = false
		c.ShortPollingTime = 20 * time.Millisecond
	})
	e.createTopic("T", 1)
	resp := <-e.asyncPull(pullExt("g", "T", 0, 0, 32, protocol.PullFlagSuspend, 20000))
	wantCode(t, "short poll", resp, protocol.RespPullNotFound)
}

func TestShutdownAnswersHeldPulls(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	ch := e.asyncPull(pullExt("g", "T", 0, 0, 32, protocol.PullFlagSuspend, 20000))
	eventually(t, "the pull to be held", func() bool { return e.b.HeldPulls() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	// Shutdown returns without error only once every admitted request was
	// answered, so a held pull must have been released, not left to its
	// 20 s timeout.
	if err := e.b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// remoting.Conn.Reply writes the reply before it counts the request as
	// answered, so the client gets PULL_NOT_FOUND, not a closed connection.
	if resp := <-ch; resp.Code != protocol.RespPullNotFound {
		t.Fatalf("pull held at shutdown answered %s (%q)", protocol.ResponseCodeName(resp.Code), resp.Remark)
	}
	if !e.store.Closed() {
		t.Fatal("shutdown left the store open")
	}
}

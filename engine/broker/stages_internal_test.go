package broker

import (
	"testing"

	"github.com/brokerlab/brokerlab/engine/remoting"
)

// TestStageRecordingAllocatesNothing: observing a send, recording a put and
// a hooked send's context (pooled) allocate nothing per request.
func TestStageRecordingAllocatesNothing(t *testing.T) {
	rec := NewStageRecorder()
	o := &remoting.Observation{Code: remoting.ReqSendMessageV2, Timings: remoting.Timings{
		FrameStart: 1, FrameRead: 2, Decoded: 3, Dequeued: 10, Replied: 100, Written: 120, LockWait: 5, LockHold: 20, FlushWait: 30}}
	if n := testing.AllocsPerRun(500, func() { rec.Observe(nil, o) }); n != 0 {
		t.Fatalf("Observe allocates %.1f times", n)
	}
	if n := testing.AllocsPerRun(500, func() { rec.RecordPut(1, 2, 3, 10) }); n != 0 {
		t.Fatalf("RecordPut allocates %.1f times", n)
	}
	b := &Broker{}
	b.hooks.send = []SendHook{nopHook{}}
	req := remoting.NewRequest(remoting.ReqSendMessageV2, nil)
	h := &remoting.SendMessageHeader{Topic: "T", ProducerGroup: "pg"}
	resp := remoting.NewResponse(remoting.RespSuccess, "")
	run := func() {
		sc := b.sendContext(nil, req)
		b.sendBegin(sc, h)
		b.sendStored(sc, req, 1, 1, PutResult{})
		b.sendEnd(sc, resp)
	}
	run() // fill the pool
	if n := testing.AllocsPerRun(500, run); n != 0 {
		t.Fatalf("a hooked send's context allocates %.1f times", n)
	}
	snap := rec.Snapshot()
	if got := snap.Hist[StageProcess.String()].Max(); got != 100-10-5-20-30 {
		t.Fatalf("process stage %d, want %d", got, 100-10-5-20-30)
	}
	if snap.Hist[StageFrameRead.String()].TotalCount() != 501 || snap.Hist[StageTotal.String()].TotalCount() != 501+501 {
		t.Fatalf("counts: frame_read %d total %d", snap.Hist[StageFrameRead.String()].TotalCount(), snap.Hist[StageTotal.String()].TotalCount())
	}
}

type nopHook struct{}

func (nopHook) SendBefore(*SendContext) {}
func (nopHook) SendAfter(*SendContext)  {}

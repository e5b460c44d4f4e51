package broker

import (
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// TestStageRecordingAllocatesNothing: observing a send, recording a put and
// a hooked send's context (pooled) allocate nothing per request.
func TestStageRecordingAllocatesNothing(t *testing.T) {
	rec := NewStageRecorder()
	o := &remoting.Observation{Code: protocol.ReqSendMessageV2, Timings: remoting.Timings{
		FrameStart: 1, FrameRead: 2, Decoded: 3, Dequeued: 10, Replied: 100, Written: 120, LockWait: 5, LockHold: 20, FlushWait: 30}}
	if n := testing.AllocsPerRun(500, func() { rec.Observe(nil, o) }); n != 0 {
		t.Fatalf("Observe allocates %.1f times", n)
	}
	now := time.Now()
	if n := testing.AllocsPerRun(500, func() { rec.RecordPut(now, 1, 2, 3, 10) }); n != 0 {
		t.Fatalf("RecordPut allocates %.1f times", n)
	}
	b := &Broker{}
	b.hooks.send = []SendHook{nopHook{}}
	req := remoting.NewRequest(protocol.ReqSendMessageV2, nil)
	h := &protocol.SendMessageHeader{Topic: "T", ProducerGroup: "pg"}
	resp := remoting.NewResponse(protocol.RespSuccess, "")
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

// TestStagesMeasureFrom: after MeasureFrom(t) the recorder holds exactly the
// sends and puts that started at or after t, however late it was called,
// like a load generator that splits warm-up from measurement by send time.
func TestStagesMeasureFrom(t *testing.T) {
	rec := NewStageRecorder()
	t0 := time.Now()
	boundary := t0.Add(time.Second)
	send := func(start time.Time) {
		fs := remoting.NanotimeOf(start)
		rec.Observe(nil, &remoting.Observation{Code: protocol.ReqSendMessage, Timings: remoting.Timings{
			FrameStart: fs, FrameRead: fs + 1, Decoded: fs + 2, Dequeued: fs + 3, Replied: fs + 10, Written: fs + 12}})
	}
	incomplete := func(start time.Time) {
		rec.Observe(nil, &remoting.Observation{Code: protocol.ReqSendMessage, Timings: remoting.Timings{
			FrameStart: remoting.NanotimeOf(start), FrameRead: 1}})
	}
	send(t0) // a warm-up send recorded before the boundary was known
	rec.MeasureFrom(boundary)
	send(t0.Add(500 * time.Millisecond)) // started in warm-up, answered late
	rec.RecordPut(t0.Add(999*time.Millisecond), 1, 1, 1, 5)
	incomplete(t0.Add(10 * time.Millisecond))
	send(boundary)
	send(boundary.Add(time.Millisecond))
	rec.RecordPut(boundary.Add(2*time.Millisecond), 1, 1, 1, 5)
	incomplete(boundary.Add(3 * time.Millisecond))
	snap := rec.Snapshot()
	if got := snap.Hist[StageTotal.String()].TotalCount(); got != 3 {
		t.Fatalf("total count %d, want 3 (two sends and a put from the boundary on)", got)
	}
	if got := snap.Hist[StageFrameRead.String()].TotalCount(); got != 2 {
		t.Fatalf("frame_read count %d, want 2", got)
	}
	if snap.Incomplete != 1 {
		t.Fatalf("incomplete %d, want 1", snap.Incomplete)
	}
}

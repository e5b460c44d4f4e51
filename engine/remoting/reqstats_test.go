package remoting

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// latencyOf returns the histogram of (code, resp), waiting (bounded) until
// it holds want answers: a reply is observed after its write, which may
// finish after the client has read it.
func latencyOf(t *testing.T, rs *RequestStats, code, resp int32, want uint64) RequestLatency {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, l := range rs.Latencies() {
			if l.Code == code && l.RespCode == resp && l.Count >= want {
				return l
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no histogram of (%d, %d) with %d answers in %+v", code, resp, want, rs.Latencies())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func bucketTotal(h LatencyHist) uint64 {
	var n uint64
	for _, b := range h.Buckets {
		n += b
	}
	return n
}

// TestRequestStats: one histogram per (code, response code) with every
// answer in one bucket, a reply-later request timed to its late reply, and
// the store stages taken from the Timings a processor stamped.
func TestRequestStats(t *testing.T) {
	rs := NewRequestStats()
	const codeStamp int32 = 9010
	ts := startTestServer(t, nil, func(ts *testServer) {
		ts.AddObserver(rs)
		ts.RegisterProcessor(codeStamp, ProcessorFunc(func(_ context.Context, _ *Conn, req *Command) (*Command, error) {
			req.Timings.LockWait = int64(2 * time.Microsecond)
			req.Timings.LockHold = int64(40 * time.Microsecond)
			req.Timings.FlushWait = int64(4 * time.Millisecond)
			return NewResponse(protocol.RespSuccess, ""), nil
		}), nil)
	})
	cl := newTestClient(t, nil)
	const n = 40
	for range n {
		if resp := invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil)); resp.Code != protocol.RespSuccess {
			t.Fatalf("echo: %+v", resp)
		}
	}
	if resp := invoke(t, cl, ts.Addr(), NewRequest(9999, nil)); resp.Code != protocol.RespRequestCodeNotSupported {
		t.Fatalf("unknown code: %+v", resp)
	}
	echo := latencyOf(t, rs, codeEcho, protocol.RespSuccess, n)
	if echo.Count != n || bucketTotal(echo.LatencyHist) != n || echo.Sum <= 0 {
		t.Fatalf("echo histogram: %+v", echo)
	}
	latencyOf(t, rs, 9999, protocol.RespRequestCodeNotSupported, 1)

	// A parked request answered 30 ms later is timed to its answer.
	const hold = 30 * time.Millisecond
	done := make(chan *Command, 1)
	go func() { done <- invoke(t, cl, ts.Addr(), NewRequest(codePark, nil)) }()
	p := <-ts.parked
	time.Sleep(hold)
	if err := p.conn.Reply(p.req, NewResponse(protocol.RespSystemBusy, "later")); err != nil {
		t.Fatal(err)
	}
	<-done
	parked := latencyOf(t, rs, codePark, protocol.RespSystemBusy, 1)
	if parked.Sum < hold {
		t.Fatalf("parked request timed %v, answered after %v", parked.Sum, hold)
	}
	for i, c := range parked.Buckets {
		if c > 0 && i < len(LatencyBounds) && LatencyBounds[i] < hold {
			t.Fatalf("parked request in bucket ≤ %v", LatencyBounds[i])
		}
	}

	if st := rs.StoreStages(); st.LockHold.Count != 0 {
		t.Fatalf("store stages without a stamping processor: %+v", st)
	}
	invoke(t, cl, ts.Addr(), NewRequest(codeStamp, nil))
	latencyOf(t, rs, codeStamp, protocol.RespSuccess, 1)
	st := rs.StoreStages()
	for name, c := range map[string]struct {
		h    LatencyHist
		want time.Duration
	}{"wait": {st.LockWait, 2 * time.Microsecond}, "hold": {st.LockHold, 40 * time.Microsecond}, "flush": {st.FlushWait, 4 * time.Millisecond}} {
		if c.h.Count != 1 || c.h.Sum != c.want {
			t.Fatalf("lock %s: %+v, want one of %v", name, c.h, c.want)
		}
		i := 0
		for LatencyBounds[i] < c.want {
			i++
		}
		if c.h.Buckets[i] != 1 {
			t.Fatalf("lock %s %v not in bucket ≤ %v: %v", name, c.want, LatencyBounds[i], c.h.Buckets)
		}
	}
}

// TestRequestStatsConcurrentSnapshots: snapshots taken while requests flow
// never see more answers than were sent, and end with all of them.
func TestRequestStatsConcurrentSnapshots(t *testing.T) {
	rs := NewRequestStats()
	ts := startTestServer(t, nil, func(ts *testServer) { ts.AddObserver(rs) })
	cl := newTestClient(t, nil)
	const senders, each = 4, 100
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for range each {
				invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil))
			}
		})
	}
	stop := make(chan struct{})
	scraped := make(chan int)
	go func() {
		n := 0
		defer func() { scraped <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, l := range rs.Latencies() {
				// an answer is counted after the client saw it, so
				// snapshots trail sends; they never lead them
				if l.Count > uint64(senders*each) {
					t.Errorf("count %d above the %d sent", l.Count, senders*each)
				}
			}
			n++
		}
	}()
	wg.Wait()
	close(stop)
	if <-scraped == 0 {
		t.Fatal("no snapshot was taken")
	}
	l := latencyOf(t, rs, codeEcho, protocol.RespSuccess, senders*each)
	if l.Count != senders*each || bucketTotal(l.LatencyHist) != senders*each {
		t.Fatalf("after the load: %+v", l)
	}
}

// BenchmarkRequestStatsObserve is the observer's cost per answered request
// (parallel: the hot pairs are shared by every connection's writer).
func BenchmarkRequestStatsObserve(b *testing.B) {
	rs := NewRequestStats()
	o := Observation{Code: protocol.ReqSendMessageV2, RespCode: protocol.RespSuccess,
		Timings: Timings{FrameStart: 1, Written: 1 + int64(300*time.Microsecond), LockHold: 2000}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		o := o
		for pb.Next() {
			rs.Observe(nil, &o)
		}
	})
}

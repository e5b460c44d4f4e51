package remoting

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// writeStampTolerance bounds how long after the client read a reply its
// writer may stamp Written (descheduled after the writev returned).
// Generous: under -race on a loaded 2-core machine a goroutine can wait
// long for a CPU; the bound still catches a stamp on the wrong clock.
const writeStampTolerance = 2 * time.Second

// recordingObserver keeps every observation.
type recordingObserver struct {
	mu  sync.Mutex
	obs []Observation
}

func (r *recordingObserver) Observe(_ *Conn, o *Observation) {
	r.mu.Lock()
	r.obs = append(r.obs, *o)
	r.mu.Unlock()
}

func (r *recordingObserver) all() []Observation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Observation(nil), r.obs...)
}

// TestObserverSeesEveryAnsweredRequestWithOrderedTimings: each answered
// request is observed once, after its write, with every instant taken in
// stage order and the whole within the client's round trip; a oneway
// request is not observed.
func TestObserverSeesEveryAnsweredRequestWithOrderedTimings(t *testing.T) {
	rec := &recordingObserver{}
	processed := make(chan struct{}, 1)
	ts := startTestServer(t, nil, func(ts *testServer) {
		ts.AddObserver(rec)
		ts.RegisterProcessor(protocol.ReqUpdateConsumerOffset, ProcessorFunc(func(context.Context, *Conn, *Command) (*Command, error) {
			processed <- struct{}{}
			return NewResponse(protocol.RespSuccess, ""), nil
		}), nil)
	})
	cl := newTestClient(t, nil)
	const n = 50
	var rtts []time.Duration
	for i := range n {
		req := NewRequest(codeEcho, ExtFields{"i": "x"})
		req.Body = make([]byte, 100*i)
		start := time.Now()
		invoke(t, cl, ts.Addr(), req)
		rtts = append(rtts, time.Since(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := cl.InvokeOneway(ctx, ts.Addr(), NewRequest(protocol.ReqUpdateConsumerOffset, nil)); err != nil {
		t.Fatal(err)
	}
	<-processed
	invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil)) // after the oneway on the same connection
	waitFor(t, "observations", func() bool { return len(rec.all()) >= n+1 })
	time.Sleep(20 * time.Millisecond) // a stray extra observation would land here
	obs := rec.all()
	if len(obs) != n+1 {
		t.Fatalf("%d observations, want %d (the oneway must not be observed)", len(obs), n+1)
	}
	for i, o := range obs {
		if o.Code != codeEcho || o.RespCode != protocol.RespSuccess {
			t.Fatalf("observation %d: code %d resp %d", i, o.Code, o.RespCode)
		}
		tm := o.Timings
		if !tm.Complete() {
			t.Fatalf("observation %d incomplete: %+v", i, tm)
		}
		seq := []int64{tm.FrameStart, tm.FrameRead, tm.Decoded, tm.Dequeued, tm.Replied, tm.Written}
		for j := 1; j < len(seq); j++ {
			if seq[j] < seq[j-1] {
				t.Fatalf("observation %d: instant %d before %d: %+v", i, j, j-1, tm)
			}
		}
		// Everything up to Replied happens between the client's write and
		// its read; Written is stamped after the writev returns, which may
		// be after the client already has the reply (a scheduling delay).
		if i < n && time.Duration(tm.Replied-tm.FrameStart) > rtts[i] {
			t.Fatalf("observation %d: server time to reply %v exceeds the client's round trip %v",
				i, time.Duration(tm.Replied-tm.FrameStart), rtts[i])
		}
		if i < n && tm.Total() > rtts[i]+writeStampTolerance {
			t.Fatalf("observation %d: server time %v exceeds the client's round trip %v by more than %v",
				i, tm.Total(), rtts[i], writeStampTolerance)
		}
	}
}

// TestNoObserverNoTimings: without an observer no clock is read and the
// processor sees zero Timings.
func TestNoObserverNoTimings(t *testing.T) {
	seen := make(chan Timings, 1)
	ts := startTestServer(t, nil, func(ts *testServer) {
		ts.RegisterProcessor(codeEcho, ProcessorFunc(func(ctx context.Context, c *Conn, req *Command) (*Command, error) {
			seen <- req.Timings
			return echo(ctx, c, req)
		}), nil)
	})
	invoke(t, newTestClient(t, nil), ts.Addr(), NewRequest(codeEcho, nil))
	if tm := <-seen; tm != (Timings{}) || tm.Enabled() {
		t.Fatalf("timings without an observer: %+v", tm)
	}
}

// TestTimingsAllocateNothing: reading a frame with timings costs no
// allocation beyond reading it without.
func TestTimingsAllocateNothing(t *testing.T) {
	req := NewRequest(codeEcho, ExtFields{"topic": "T"})
	req.Body = make([]byte, 1024)
	frame, err := AppendFrame(nil, req, SerializeJSON)
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(frame)
	read := func(timed bool) func() {
		return func() {
			r.Reset(frame)
			fr := frameReader{r: r}
			c, err := fr.read(timed)
			if err != nil || (timed && !c.Timings.Enabled()) {
				t.Fatalf("read: %v %+v", err, c)
			}
		}
	}
	plain, timed := testing.AllocsPerRun(200, read(false)), testing.AllocsPerRun(200, read(true))
	if timed != plain {
		t.Fatalf("a timed frame read allocates %.1f times, an untimed one %.1f", timed, plain)
	}
}

package remoting

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// frameWithBody is a send request frame whose body is n bytes of fill.
func frameWithBody(t *testing.T, ext ExtFields, fill byte, n int) []byte {
	t.Helper()
	req := NewRequest(protocol.ReqSendMessageV2, ext)
	req.Body = bytes.Repeat([]byte{fill}, n)
	frame, err := AppendFrame(nil, req, SerializeJSON)
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

// TestRecycledFrameNotReusedWhileReferenced: a server connection reads
// requests into pooled frames and Commands, but a frame is reused only
// after its request is released: an unreleased request's body and values
// stay intact while later frames are read; after Release the next frame
// of its size class is read into the same buffer, and the values decoded
// from the released request's header are still intact (they live in a
// strArena chunk of their own). A released request costs nothing to read
// again but that chunk; Release of a command no server decoded only
// releases its map.
func TestRecycledFrameNotReusedWhileReferenced(t *testing.T) {
	r := bytes.NewReader(nil)
	fr := frameReader{r: r, extPool: &requestExtPool, recycle: true}
	read := func(frame []byte) *Command {
		t.Helper()
		r.Reset(frame)
		c, err := fr.read(false)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	hdr := fullSendHeader()
	a := read(frameWithBody(t, hdr, 'A', 1000))
	h, err := protocol.ParseSendMessageHeader(a.ExtFields)
	if err != nil {
		t.Fatal(err)
	}
	bodyA := a.Body
	other := fullSendHeader()
	other["b"], other["a"], other["i"] = "OtherTopicName", "OtherGroupName", "KEYS\x01kkkkkkkk\x02"
	for range 20 { // A is not released: its frame must not be reused
		b := read(frameWithBody(t, other, 'B', 1000))
		if !raceEnabled && &b.Body[0] == &bodyA[0] {
			t.Fatal("an unreleased request's frame was reused")
		}
		b.Release()
	}
	if !bytes.Equal(bodyA, bytes.Repeat([]byte{'A'}, 1000)) || a.ExtFields["b"] != "T" {
		t.Fatal("an unreleased request changed while later frames were read")
	}
	frameA := a.frame
	if frameA == nil || &(*frameA)[len(*frameA)-1] != &bodyA[len(bodyA)-1] {
		t.Fatal("the request was not read into a pooled frame")
	}
	a.Release()
	if a.ExtFields != nil || a.Body != nil || a.frame != nil {
		t.Fatal("a released command still refers to its map, body or frame")
	}
	// Whoever gets the frame next overwrites all of it; and later frames
	// of its class are read into pooled buffers, possibly this one.
	full := (*frameA)[:cap(*frameA)]
	for i := range full {
		full[i] = 'X'
	}
	for range 20 {
		c := read(frameWithBody(t, other, 'C', 900))
		if c.ExtFields["b"] != "OtherTopicName" || !bytes.Equal(c.Body, bytes.Repeat([]byte{'C'}, 900)) {
			t.Fatalf("a request read into a recycled frame: %v", c.ExtFields)
		}
		c.Release()
	}
	if h.Topic != "T" || h.ProducerGroup != "PG" || h.Properties != "TAGS\x01a\x02" || h.BrokerName != "broker-a" {
		t.Fatalf("values decoded from a released request changed: %+v", h)
	}

	if !raceEnabled {
		frame := frameWithBody(t, hdr, 'D', 1024)
		if n := testing.AllocsPerRun(200, func() { read(frame).Release() }); n != 1 {
			t.Fatalf("reading and releasing a send request allocates %.1f times, want 1 (the header's strArena chunk)", n)
		}
	}
	plain, err := DecodeHeader(appendJSONHeader(nil, NewRequest(protocol.ReqSendMessageV2, ExtFields{"b": "T"})), SerializeJSON)
	if err != nil {
		t.Fatal(err)
	}
	plain.Release()
	if plain.ExtFields != nil || plain.Code != protocol.ReqSendMessageV2 {
		t.Fatalf("Release of a decoded-elsewhere command: %+v", plain)
	}
}

// TestFrameClasses: a pooled frame has the length asked for and the
// capacity of its class; frames above the largest class are not pooled.
func TestFrameClasses(t *testing.T) {
	for _, n := range []int{1, 511, 512, 513, 1024, 1025, 4096, 40000, maxPooledFrame} {
		p := getFrame(n)
		i := frameClass(n)
		if len(*p) != n || cap(*p) != minFrameClass<<i || cap(*p) < n || (i > 0 && minFrameClass<<(i-1) >= n) {
			t.Fatalf("frame of %d: len %d cap %d class %d", n, len(*p), cap(*p), i)
		}
		putFrame(p)
	}
	if frameClass(maxPooledFrame) != frameClasses-1 {
		t.Fatalf("the largest pooled frame is in class %d of %d", frameClass(maxPooledFrame), frameClasses)
	}
}

// TestServerRecyclesReleasedRequests: a processor that answers and then
// releases its requests, under concurrent clients sending bodies of every
// frame class and beyond the pooled sizes, sees each request intact: its
// body is what its header says it is, never bytes of another request
// read into a recycled frame too early.
func TestServerRecyclesReleasedRequests(t *testing.T) {
	const codeCheck = 9301
	ts := startTestServer(t, nil, func(ts *testServer) {
		ts.RegisterProcessor(codeCheck, ProcessorFunc(func(_ context.Context, c *Conn, req *Command) (*Command, error) {
			want := bytes.Repeat([]byte(req.ExtFields["fill"]), len(req.Body))
			ok := req.ExtFields["len"] == fmt.Sprint(len(req.Body)) && bytes.Equal(req.Body, want)
			resp := NewResponse(protocol.RespSuccess, "")
			if !ok {
				resp = NewResponse(protocol.RespSystemError, "body does not match its header")
			}
			if err := c.Reply(req, resp); err != nil {
				return nil, err
			}
			req.Release()
			return nil, ErrReplyLater
		}), ts.NewExecutor("check", ExecutorConfig{Workers: 4, QueueSize: 1000}))
	})
	cl := newTestClient(t, nil)
	sizes := []int{0, 10, 700, 3000, 9000, 30000, maxPooledFrame - 500, maxPooledFrame + 4000}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := range 40 {
				n := sizes[(w+i)%len(sizes)]
				fill := string(rune('a' + (w*40+i)%26))
				req := NewRequest(codeCheck, ExtFields{"fill": fill, "len": fmt.Sprint(n)})
				req.Body = bytes.Repeat([]byte(fill), n)
				ctx, cancel := context.WithTimeout(context.Background(), 10e9)
				resp, err := cl.InvokeSync(ctx, ts.Addr(), req)
				cancel()
				if err != nil || resp.Code != protocol.RespSuccess {
					t.Errorf("request %d/%d of %d bytes: %v %v", w, i, n, resp, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

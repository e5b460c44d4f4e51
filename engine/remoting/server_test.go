package remoting

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// Test-only request codes.
const (
	codeEcho  int32 = 9001 // answers SUCCESS with the request's ext and body
	codeBlock int32 = 9002 // blocks until the test's gate opens
	codePark  int32 = 9003 // returns ErrReplyLater and hands the request to the test
)

// logBuffer collects log output for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitFor polls cond (bounded) until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

type parked struct {
	conn *Conn
	req  *Command
}

type testServer struct {
	*Server
	logs    *logBuffer
	gate    chan struct{} // closed to release codeBlock handlers
	entered chan string   // codeBlock handlers announce themselves (ext "id")
	parked  chan parked
}

func echo(_ context.Context, _ *Conn, req *Command) (*Command, error) {
	resp := NewResponse(protocol.RespSuccess, "")
	resp.ExtFields = req.ExtFields
	resp.Body = req.Body
	return resp, nil
}

func startTestServer(t *testing.T, tweak func(*ServerConfig), register func(*testServer)) *testServer {
	t.Helper()
	logs := &logBuffer{}
	cfg := DefaultServerConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if tweak != nil {
		tweak(&cfg)
	}
	ts := &testServer{Server: NewServer(cfg), logs: logs, gate: make(chan struct{}),
		entered: make(chan string, 100), parked: make(chan parked, 100)}
	ts.RegisterProcessor(codeEcho, ProcessorFunc(echo), nil)
	ts.RegisterProcessor(codePark, ProcessorFunc(func(_ context.Context, c *Conn, req *Command) (*Command, error) {
		ts.parked <- parked{c, req}
		return nil, ErrReplyLater
	}), nil)
	if register != nil {
		register(ts)
	}
	if _, ok := ts.processors[codeBlock]; !ok {
		ts.RegisterProcessor(codeBlock, ts.blocker(), ts.NewExecutor("block", ExecutorConfig{Workers: 16, QueueSize: 16}))
	}
	if err := ts.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ts.Shutdown(ctx)
	})
	return ts
}

func (ts *testServer) blocker() Processor {
	return ProcessorFunc(func(ctx context.Context, _ *Conn, req *Command) (*Command, error) {
		ts.entered <- req.ExtFields["id"]
		select {
		case <-ts.gate:
		case <-ctx.Done():
		}
		return echo(ctx, nil, req)
	})
}

func newTestClient(t *testing.T, proc Processor) *Client {
	t.Helper()
	cfg := DefaultClientConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.RequestProcessor = proc
	cl := NewClient(cfg)
	t.Cleanup(func() { cl.Close() })
	return cl
}

func invoke(t *testing.T, cl *Client, addr string, req *Command) *Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.InvokeSync(ctx, addr, req)
	if err != nil {
		t.Fatalf("invoke %v: %v", req, err)
	}
	return resp
}

func TestEchoAndUnknownCode(t *testing.T) {
	ts := startTestServer(t, nil, nil)
	cl := newTestClient(t, nil)
	resp := invoke(t, cl, ts.Addr(), &Command{Code: codeEcho, ExtFields: ExtFields{"k": "v"}, Body: []byte("body")})
	if resp.Code != protocol.RespSuccess || !resp.IsResponse() || resp.ExtFields["k"] != "v" || string(resp.Body) != "body" {
		t.Fatalf("echo: %+v", resp)
	}
	resp = invoke(t, cl, ts.Addr(), NewRequest(12345, nil))
	if resp.Code != protocol.RespRequestCodeNotSupported || !strings.Contains(resp.Remark, "12345") {
		t.Fatalf("unknown code: %+v", resp)
	}
	// Connection reuse: both calls went over one connection.
	if n := ts.ConnCount(); n != 1 {
		t.Fatalf("%d server connections, want 1", n)
	}
}

func TestProcessorErrorsBecomeSystemError(t *testing.T) {
	ts := startTestServer(t, nil, func(ts *testServer) {
		ts.RegisterProcessor(protocol.ReqPullMessage, ProcessorFunc(func(_ context.Context, _ *Conn, req *Command) (*Command, error) {
			if _, err := req.ExtFields.Int64("queueOffset"); err != nil {
				return nil, err
			}
			return NewResponse(protocol.RespSuccess, ""), nil
		}), nil)
		ts.RegisterProcessor(7777, ProcessorFunc(func(context.Context, *Conn, *Command) (*Command, error) {
			panic("boom")
		}), nil)
	})
	cl := newTestClient(t, nil)
	resp := invoke(t, cl, ts.Addr(), NewRequest(protocol.ReqPullMessage, ExtFields{"queueOffset": "x1"}))
	if resp.Code != protocol.RespSystemError || !strings.Contains(resp.Remark, "queueOffset") {
		t.Fatalf("malformed field: %+v", resp)
	}
	resp = invoke(t, cl, ts.Addr(), NewRequest(7777, nil))
	if resp.Code != protocol.RespSystemError || !strings.Contains(resp.Remark, "panicked") {
		t.Fatalf("panic: %+v", resp)
	}
	// The connection survived both.
	if resp := invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil)); resp.Code != protocol.RespSuccess {
		t.Fatalf("after errors: %+v", resp)
	}
}

// rawFrame builds a frame by hand: length word, header-length word, rest.
func rawFrame(length int32, word uint32, rest []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(length))
	b = binary.BigEndian.AppendUint32(b, word)
	return append(b, rest...)
}

// expectClosed reads from nc until the server closes it.
func expectClosed(t *testing.T, nc net.Conn) {
	t.Helper()
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, nc)
	// EOF, or a reset when the server closed with our bytes still unread.
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("connection not closed by server: read %d bytes, %v", n, err)
	}
	if n != 0 {
		t.Fatalf("server answered %d bytes before closing", n)
	}
}

func TestBadInputClosesOnlyThatConnection(t *testing.T) {
	ts := startTestServer(t, func(c *ServerConfig) { c.MaxFrameBytes = 1024; c.BadInputLogInterval = time.Hour }, nil)
	cl := newTestClient(t, nil)
	good := invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil)) // opened before the bad input
	if good.Code != protocol.RespSuccess {
		t.Fatal(good)
	}
	bigJSON := append([]byte(`{"code":9001,"remark":"`), bytes.Repeat([]byte("x"), 2000)...)
	bigJSON = append(bigJSON, `"}`...)
	cases := map[string][]byte{
		"frame over limit":        rawFrame(int32(4+len(bigJSON)), uint32(len(bigJSON)), bigJSON),
		"length only, over limit": rawFrame(1<<30, 0, nil),
		"negative length":         rawFrame(-5, 0, nil),
		"short length":            rawFrame(2, 0, nil),
		"header length > total":   rawFrame(8, 100, []byte("{}{}")),
		"malformed json":          rawFrame(8, 4, []byte("{bad")),
		"json array header":       rawFrame(4+3, 3, []byte(`[1]`)),
		"json string header":      rawFrame(4+3, 3, []byte(`"x"`)),
		"unknown serialize type":  rawFrame(6, 7<<24|2, []byte("{}")),
		"truncated binary header": rawFrame(7, 1<<24|3, []byte{0, 1, 2}),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			nc, err := net.Dial("tcp", ts.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			if _, err := nc.Write(b); err != nil {
				t.Fatal(err)
			}
			expectClosed(t, nc)
			// The earlier connection and new ones are still served.
			if r := invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil)); r.Code != protocol.RespSuccess {
				t.Fatalf("other connection: %+v", r)
			}
		})
	}
	waitFor(t, "bad-input closes to be counted", func() bool {
		return ts.Stats().BadInputCloses == uint64(len(cases))
	})
	// One host, one interval: the first close is logged, the rest counted.
	if n := strings.Count(ts.logs.String(), "closing connection on bad input"); n != 1 {
		t.Fatalf("%d bad-input log lines for %d closes from one host in one interval, want 1", n, len(cases))
	}
	waitFor(t, "bad connections to be dropped", func() bool { return ts.ConnCount() == 1 })
}

func TestConcurrentRequestsOutOfOrder(t *testing.T) {
	const n = 10
	gates := make([]chan struct{}, n)
	for i := range gates {
		gates[i] = make(chan struct{})
	}
	entered := make(chan int, n)
	ts := startTestServer(t, nil, func(ts *testServer) {
		// A queue of n: with none, a request that arrives before a worker
		// first parks in its select is answered SYSTEM_BUSY and never enters.
		ts.RegisterProcessor(codeBlock, ProcessorFunc(func(ctx context.Context, c *Conn, req *Command) (*Command, error) {
			i, err := req.ExtFields.Int32("id")
			if err != nil {
				return nil, err
			}
			entered <- int(i)
			<-gates[i]
			return echo(ctx, c, req)
		}), ts.NewExecutor("block", ExecutorConfig{Workers: n, QueueSize: n}))
	})
	cl := newTestClient(t, nil)
	conn, err := cl.Dial(context.Background(), ts.Addr())
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		id   int
		resp *Command
		err  error
	}
	results := make(chan result, n)
	for i := range n {
		go func() {
			resp, err := conn.Invoke(context.Background(), NewRequest(codeBlock, ExtFields{"id": strconv.Itoa(i)}))
			results <- result{i, resp, err}
		}()
	}
	for range n { // all n are inside the processor at once: handled concurrently on one connection
		<-entered
	}
	for i := n - 1; i >= 0; i-- { // answer in reverse order
		close(gates[i])
		r := <-results
		if r.err != nil || r.id != i || r.resp.ExtFields["id"] != strconv.Itoa(i) {
			t.Fatalf("release %d: got id %d resp %+v err %v", i, r.id, r.resp, r.err)
		}
	}
}

func TestOnewayGetsNoResponse(t *testing.T) {
	got := make(chan *Command, 1)
	ts := startTestServer(t, nil, func(ts *testServer) {
		ts.RegisterProcessor(protocol.ReqUpdateConsumerOffset, ProcessorFunc(func(_ context.Context, _ *Conn, req *Command) (*Command, error) {
			got <- req
			return NewResponse(protocol.RespSuccess, "must not be sent"), nil
		}), nil)
	})
	nc, err := net.Dial("tcp", ts.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	oneway := NewRequest(protocol.ReqUpdateConsumerOffset, ExtFields{"commitOffset": "5"})
	oneway.MarkOneway()
	echoReq := NewRequest(codeEcho, nil)
	for _, c := range []*Command{oneway, echoReq} {
		b, _ := AppendFrame(nil, c, SerializeJSON)
		if _, err := nc.Write(b); err != nil {
			t.Fatal(err)
		}
		if c == oneway {
			if r := <-got; r.ExtFields["commitOffset"] != "5" {
				t.Fatalf("oneway processed as %+v", r)
			}
		}
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := ReadFrame(nc, 0)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Opaque != echoReq.Opaque {
		t.Fatalf("first frame answers opaque %d (%v), want the echo's %d", resp.Opaque, resp, echoReq.Opaque)
	}
}

func TestServerPushToClient(t *testing.T) {
	notified := make(chan *Command, 1)
	clientProc := ProcessorFunc(func(_ context.Context, _ *Conn, req *Command) (*Command, error) {
		switch req.Code {
		case protocol.ReqNotifyConsumerIDsChanged:
			notified <- req
			return nil, nil // the Go client answers nothing
		case protocol.ReqGetConsumerRunningInfo:
			r := NewResponse(protocol.RespSuccess, "")
			r.Body = []byte(`{"running":true}`)
			return r, nil
		}
		return nil, errors.New("unexpected push")
	})
	ts := startTestServer(t, nil, func(ts *testServer) {
		ts.RegisterProcessor(protocol.ReqHeartBeat, ProcessorFunc(func(ctx context.Context, c *Conn, req *Command) (*Command, error) {
			if err := c.Send(NewRequest(protocol.ReqNotifyConsumerIDsChanged, ExtFields{"consumerGroup": "g"})); err != nil {
				return nil, err
			}
			ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			info, err := c.Invoke(ictx, NewRequest(protocol.ReqGetConsumerRunningInfo, ExtFields{"consumerGroup": "g"}))
			if err != nil {
				return nil, err
			}
			resp := NewResponse(protocol.RespSuccess, "")
			resp.Body = info.Body
			return resp, nil
		}), nil)
	})
	cl := newTestClient(t, clientProc)
	resp := invoke(t, cl, ts.Addr(), NewRequest(protocol.ReqHeartBeat, nil))
	if resp.Code != protocol.RespSuccess || string(resp.Body) != `{"running":true}` {
		t.Fatalf("heartbeat: %+v", resp)
	}
	if n := <-notified; !n.IsOneway() || n.ExtFields["consumerGroup"] != "g" {
		t.Fatalf("notify: %+v", n)
	}
}

func TestAsyncReply(t *testing.T) {
	ts := startTestServer(t, nil, nil)
	cl := newTestClient(t, nil)
	done := make(chan *Command, 1)
	err := cl.InvokeAsync(context.Background(), ts.Addr(), NewRequest(codePark, ExtFields{"q": "1"}),
		func(resp *Command, err error) {
			if err != nil {
				t.Error(err)
			}
			done <- resp
		})
	if err != nil {
		t.Fatal(err)
	}
	p := <-ts.parked
	// Something else can be served on the connection while the request is parked.
	if r := invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil)); r.Code != protocol.RespSuccess {
		t.Fatal(r)
	}
	resp := NewResponse(protocol.RespPullNotFound, "")
	resp.Ext().SetInt64("nextBeginOffset", 42)
	if err := p.conn.Reply(p.req, resp); err != nil {
		t.Fatal(err)
	}
	if err := p.conn.Reply(p.req, NewResponse(protocol.RespSuccess, "")); !errors.Is(err, ErrAlreadyReplied) {
		t.Fatalf("second reply: %v", err)
	}
	got := <-done
	if got.Code != protocol.RespPullNotFound || got.ExtFields["nextBeginOffset"] != "42" {
		t.Fatalf("async reply: %+v", got)
	}
}

func TestExecutorSaturationAnswersSystemBusy(t *testing.T) {
	ts := startTestServer(t, nil, func(ts *testServer) {
		ts.RegisterProcessor(codeBlock, ts.blocker(), ts.NewExecutor("tiny", ExecutorConfig{Workers: 1, QueueSize: 1}))
	})
	cl := newTestClient(t, nil)
	conn, err := cl.Dial(context.Background(), ts.Addr())
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan *Command, 2)
	call := func(id string) { // InvokeAsync returns once the frame is written
		err := conn.InvokeAsync(context.Background(), NewRequest(codeBlock, ExtFields{"id": id}), func(r *Command, err error) {
			if err != nil {
				t.Error(err)
			}
			results <- r
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	call("running")
	<-ts.entered // the worker is busy
	call("queued")
	// One connection dispatches in arrival order: "queued" fills the queue, so
	// this one finds worker and queue full.
	busy := invoke(t, cl, ts.Addr(), NewRequest(codeBlock, ExtFields{"id": "rejected"}))
	if busy.Code != protocol.RespSystemBusy {
		t.Fatalf("third request: %+v", busy)
	}
	if busy.Remark != RemarkOverload {
		t.Fatalf("busy remark %q", busy.Remark)
	}
	close(ts.gate)
	for range 2 {
		if r := <-results; r.Code != protocol.RespSuccess {
			t.Fatalf("after release: %+v", r)
		}
	}
}

func TestInFlightLimit(t *testing.T) {
	ts := startTestServer(t, func(c *ServerConfig) { c.MaxInFlightPerConn = 2 }, nil)
	cl := newTestClient(t, nil)
	conn, err := cl.Dial(context.Background(), ts.Addr())
	if err != nil {
		t.Fatal(err)
	}
	answers := make(chan *Command, 2)
	for range 2 {
		if err := conn.InvokeAsync(context.Background(), NewRequest(codePark, nil), func(r *Command, err error) {
			answers <- r
		}); err != nil {
			t.Fatal(err)
		}
	}
	p1, p2 := <-ts.parked, <-ts.parked
	resp := invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil))
	if resp.Code != protocol.RespSystemBusy || resp.Remark != RemarkTooManyRequests {
		t.Fatalf("third request: %+v", resp)
	}
	for _, p := range []parked{p1, p2} {
		if err := p.conn.Reply(p.req, NewResponse(protocol.RespSuccess, "")); err != nil {
			t.Fatal(err)
		}
		<-answers
	}
	if resp := invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil)); resp.Code != protocol.RespSuccess {
		t.Fatalf("after replies: %+v", resp)
	}
}

// A request sent as soon as the previous answer arrived finds its slot
// free, even while the server is still finishing that answer: the slot is
// freed before the write, Shutdown's accounting only after it. (A client
// pipelining on one connection was answered SYSTEM_BUSY "too many
// requests" when it won that race.)
func TestInFlightSlotFreeOnceAnswered(t *testing.T) {
	hold := make(chan struct{})
	held := make(chan struct{}, 1)
	var first atomic.Bool
	ts := startTestServer(t, func(c *ServerConfig) { c.MaxInFlightPerConn = 1 }, func(ts *testServer) {
		ts.opts.afterReplyWrite = func() {
			if first.CompareAndSwap(false, true) {
				held <- struct{}{}
				<-hold // the first answer is written; its request not yet done
			}
		}
	})
	var once sync.Once
	unhold := func() { once.Do(func() { close(hold) }) }
	defer unhold()
	cl := newTestClient(t, nil)
	if resp := invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil)); resp.Code != protocol.RespSuccess {
		t.Fatalf("first request: %s %q", protocol.ResponseCodeName(resp.Code), resp.Remark)
	}
	<-held
	resp := invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil))
	unhold()
	if resp.Code != protocol.RespSuccess {
		t.Fatalf("request sent after the answer arrived: %s %q, want SUCCESS", protocol.ResponseCodeName(resp.Code), resp.Remark)
	}
}

func TestMaxConns(t *testing.T) {
	ts := startTestServer(t, func(c *ServerConfig) { c.MaxConns = 1 }, nil)
	cl := newTestClient(t, nil)
	invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil))
	nc, err := net.Dial("tcp", ts.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	expectClosed(t, nc)
	if !strings.Contains(ts.logs.String(), "refusing connection") {
		t.Fatalf("no log line for the refused connection:\n%s", ts.logs)
	}
	cl.CloseConn(ts.Addr())
	waitFor(t, "server to drop the closed connection", func() bool { return ts.ConnCount() == 0 })
	if r := invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil)); r.Code != protocol.RespSuccess {
		t.Fatalf("after a slot freed: %+v", r)
	}
}

func TestTimeoutCleansPending(t *testing.T) {
	ts := startTestServer(t, nil, nil)
	cl := newTestClient(t, nil)
	conn, err := cl.Dial(context.Background(), ts.Addr())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := conn.Invoke(ctx, NewRequest(codePark, nil)); !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("sync: %v", err)
	}
	asyncErr := make(chan error, 1)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if err := conn.InvokeAsync(ctx2, NewRequest(codePark, nil), func(_ *Command, err error) { asyncErr <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-asyncErr; !errors.Is(err, ErrTimeout) {
		t.Fatalf("async: %v", err)
	}
	conn.mu.Lock()
	n := len(conn.mu.pending)
	conn.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d pending calls left after timeouts", n)
	}
	// A late reply to a timed-out call is dropped; the connection keeps working.
	p := <-ts.parked
	if err := p.conn.Reply(p.req, NewResponse(protocol.RespSuccess, "late")); err != nil {
		t.Fatal(err)
	}
	if r := invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil)); r.Code != protocol.RespSuccess || r.Remark != "" {
		t.Fatalf("after late reply: %+v", r)
	}
}

func TestConnCloseFailsPendingAndRunsHooks(t *testing.T) {
	closed := make(chan net.Addr, 1)
	ts := startTestServer(t, nil, func(ts *testServer) {
		ts.OnConnClose(func(c *Conn) {
			select {
			case closed <- c.RemoteAddr():
			default:
			}
		})
	})
	cl := newTestClient(t, nil)
	conn, err := cl.Dial(context.Background(), ts.Addr())
	if err != nil {
		t.Fatal(err)
	}
	conn.SetAttr("clientID", "c1")
	if v, ok := conn.Attr("clientID"); !ok || v != "c1" {
		t.Fatal("attr")
	}
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Invoke(context.Background(), NewRequest(codePark, nil))
		errc <- err
	}()
	p := <-ts.parked
	p.conn.Close() // server side closes
	if err := <-errc; !errors.Is(err, ErrConnClosed) {
		t.Fatalf("pending call: %v", err)
	}
	if addr := <-closed; addr.String() != conn.LocalAddr().String() {
		t.Fatalf("hook saw %v, want %v", addr, conn.LocalAddr())
	}
	if err := p.conn.Reply(p.req, NewResponse(protocol.RespSuccess, "")); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("reply on closed conn: %v", err)
	}
	<-conn.Done()
	// The client redials on the next call.
	if r := invoke(t, cl, ts.Addr(), NewRequest(codeEcho, nil)); r.Code != protocol.RespSuccess {
		t.Fatal(r)
	}
}

func TestBinaryResponses(t *testing.T) {
	ts := startTestServer(t, func(c *ServerConfig) { c.SerializeType = SerializeRocketMQ }, nil)
	cl := newTestClient(t, nil) // requests stay JSON
	resp := invoke(t, cl, ts.Addr(), NewRequest(codeEcho, ExtFields{"k": "v"}))
	if resp.SerializeType != SerializeRocketMQ || resp.ExtFields["k"] != "v" {
		t.Fatalf("%+v", resp)
	}
}

func TestShutdown(t *testing.T) {
	ts := startTestServer(t, nil, func(ts *testServer) {
		// A long-poll handler that answers when its context ends.
		ts.RegisterProcessor(protocol.ReqPullMessage, ProcessorFunc(func(ctx context.Context, c *Conn, req *Command) (*Command, error) {
			ts.entered <- "pull"
			go func() {
				<-ctx.Done()
				_ = c.Reply(req, NewResponse(protocol.RespPullNotFound, "shutdown"))
			}()
			return nil, ErrReplyLater
		}), nil)
	})
	cl := newTestClient(t, nil)
	pull := make(chan *Command, 1)
	go func() {
		resp, err := cl.InvokeSync(context.Background(), ts.Addr(), NewRequest(protocol.ReqPullMessage, nil))
		if err != nil {
			t.Error(err)
		}
		pull <- resp
	}()
	<-ts.entered
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-pull; r == nil || r.Code != protocol.RespPullNotFound {
		t.Fatalf("parked pull: %+v", r)
	}
	if _, err := net.Dial("tcp", ts.Addr()); err == nil {
		t.Fatal("still accepting after Shutdown")
	}
	if err := ts.Shutdown(ctx); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("second Shutdown: %v", err)
	}
}

func TestShutdownDeadline(t *testing.T) {
	ts := startTestServer(t, nil, func(ts *testServer) {
		ts.RegisterProcessor(codeBlock, ProcessorFunc(func(_ context.Context, _ *Conn, req *Command) (*Command, error) {
			ts.entered <- ""
			<-ts.gate // ignores its context
			return nil, nil
		}), nil)
	})
	cl := newTestClient(t, nil)
	go func() { _, _ = cl.InvokeSync(context.Background(), ts.Addr(), NewRequest(codeBlock, nil)) }()
	<-ts.entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := ts.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v", err)
	}
	close(ts.gate)
}

func TestClientClose(t *testing.T) {
	ts := startTestServer(t, nil, nil)
	cl := newTestClient(t, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := cl.InvokeSync(context.Background(), ts.Addr(), NewRequest(codePark, nil))
		errc <- err
	}()
	<-ts.parked
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrConnClosed) {
		t.Fatalf("pending: %v", err)
	}
	if _, err := cl.InvokeSync(context.Background(), ts.Addr(), NewRequest(codeEcho, nil)); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestClientDialCoalescingAndOneway(t *testing.T) {
	got := make(chan *Command, 1)
	ts := startTestServer(t, nil, func(ts *testServer) {
		ts.RegisterProcessor(protocol.ReqUpdateConsumerOffset, ProcessorFunc(func(_ context.Context, _ *Conn, req *Command) (*Command, error) {
			got <- req
			return nil, nil
		}), nil)
	})
	cfg := DefaultClientConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.SerializeType = SerializeRocketMQ // the server reads either header type
	cl := NewClient(cfg)
	defer cl.Close()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := cl.InvokeSync(context.Background(), ts.Addr(), NewRequest(codeEcho, ExtFields{"k": "v"}))
			if err != nil || r.ExtFields["k"] != "v" {
				t.Errorf("echo %+v %v", r, err)
			}
		}()
	}
	wg.Wait()
	if n := ts.ConnCount(); n != 1 {
		t.Fatalf("%d connections for concurrent first calls, want 1", n)
	}
	if err := cl.InvokeOneway(context.Background(), ts.Addr(), NewRequest(protocol.ReqUpdateConsumerOffset, ExtFields{"commitOffset": "9"})); err != nil {
		t.Fatal(err)
	}
	if r := <-got; !r.IsOneway() || r.SerializeType != SerializeRocketMQ || r.ExtFields["commitOffset"] != "9" {
		t.Fatalf("oneway arrived as %+v", r)
	}
}

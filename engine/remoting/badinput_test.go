package remoting

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// codeNeedsField answers SUCCESS only when ext "must" is present and an int.
const codeNeedsField int32 = 9010

func needsField(_ context.Context, _ *Conn, req *Command) (*Command, error) {
	if _, err := req.ExtFields.Int32("must"); err != nil {
		return nil, err
	}
	if string(req.Body) == "bad body" {
		return nil, NewBadRequest("the body does not decode")
	}
	return NewResponse(protocol.RespSuccess, ""), nil
}

// jsonFrame frames a hand-written JSON header and a body.
func jsonFrame(header string, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(4+len(header)+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(header)))
	b = append(b, header...)
	return append(b, body...)
}

// readResponses reads frames from nc until every opaque in want arrived
// (or the deadline passes) and returns them by opaque.
func readResponses(t *testing.T, br *bufio.Reader, nc net.Conn, want ...int32) map[int32]*Command {
	t.Helper()
	got := map[int32]*Command{}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		missing := false
		for _, o := range want {
			if got[o] == nil {
				missing = true
			}
		}
		if !missing {
			return got
		}
		cmd, err := ReadFrame(br, 0)
		if err != nil {
			t.Fatalf("reading responses (have %d of %d): %v", len(got), len(want), err)
		}
		if !cmd.IsResponse() {
			t.Fatalf("server sent a request: %v", cmd)
		}
		if got[cmd.Opaque] != nil {
			t.Fatalf("two responses for opaque %d", cmd.Opaque)
		}
		got[cmd.Opaque] = cmd
	}
}

// TestBadRequestsAnsweredOnOneConnection pipelines good and bad requests
// on one connection, with a request still in flight: every non-oneway
// request is answered with its own opaque, the bad ones with Java's codes
// and remarks, and the connection stays up.
func TestBadRequestsAnsweredOnOneConnection(t *testing.T) {
	ts := startTestServer(t, func(c *ServerConfig) { c.BadInputLogInterval = time.Hour }, func(ts *testServer) {
		ts.RegisterProcessor(codeNeedsField, ProcessorFunc(needsField), nil)
	})
	nc, err := net.Dial("tcp", ts.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)

	binReq := &Command{Code: codeEcho, Opaque: 12, ExtFields: ExtFields{"k": "v"}}
	binFrame, err := AppendFrame(nil, binReq, SerializeRocketMQ)
	if err != nil {
		t.Fatal(err)
	}
	type exp struct {
		code   int32
		remark string
	}
	frames := [][]byte{
		jsonFrame(`{"code":9003,"opaque":1}`, nil), // parked: in flight across the rest
		jsonFrame(`{"code":9001,"opaque":2,"extFields":{"n":8,"b":false,"s":"x","z":null}}`, []byte("body")),
		jsonFrame(`{"code":[9001],"opaque":3}`, nil),
		jsonFrame(`{"code":9001,"opaque":4,"extFields":{"o":{"x":1}}}`, nil),
		jsonFrame(`{"code":7777,"opaque":5}`, nil),
		jsonFrame(`{"code":9010,"opaque":6}`, nil),
		jsonFrame(`{"code":9010,"opaque":7,"extFields":{"must":"eight"}}`, nil),
		jsonFrame(`{"code":9010,"opaque":8,"extFields":{"must":8}}`, []byte("bad body")),
		jsonFrame(`{"code":9010,"opaque":9,"flag":2}`, nil),                // oneway and bad: no answer
		jsonFrame(`{"code":"7777","opaque":10,"flag":2}`, nil),             // oneway, unknown code
		jsonFrame(`{"code":9010,"opaque":11,"extFields":{"must":8}}`, nil), // good
		binFrame,
		jsonFrame(`{"code":9001,"opaque":13,"remark":[]}`, nil),
	}
	want := map[int32]exp{
		2:  {protocol.RespSuccess, ""},
		3:  {protocol.RespSystemError, "the header field <code> is an array, not an int32"},
		4:  {protocol.RespSystemError, "the custom field <o> is an object, not a string, number or boolean"},
		5:  {protocol.RespRequestCodeNotSupported, "request type 7777 not supported"},
		6:  {protocol.RespSystemError, "the custom field <must> is null"},
		7:  {protocol.RespSystemError, `the custom field <must> is malformed: "eight" (invalid syntax)`},
		8:  {protocol.RespSystemError, "the body does not decode"},
		11: {protocol.RespSuccess, ""},
		12: {protocol.RespSuccess, ""},
		13: {protocol.RespSystemError, "the header field <remark> is an array, not a string"},
	}
	for _, f := range frames {
		if _, err := nc.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	var opaques []int32
	for o := range want {
		opaques = append(opaques, o)
	}
	got := readResponses(t, br, nc, opaques...)
	for o, w := range want {
		r := got[o]
		if r.Code != w.code || r.Remark != w.remark {
			t.Errorf("opaque %d: %s %q, want %s %q", o, protocol.ResponseCodeName(r.Code), r.Remark, protocol.ResponseCodeName(w.code), w.remark)
		}
	}
	if e := got[2].ExtFields; e["n"] != "8" || e["b"] != "false" || e["s"] != "x" || len(e) != 3 || string(got[2].Body) != "body" {
		t.Errorf("numbers, booleans and null in extFields echoed as %v %q", e, got[2].Body)
	}
	if got[12].ExtFields["k"] != "v" {
		t.Errorf("binary request echoed %v", got[12].ExtFields)
	}
	// The parked request, in flight all along, completes normally.
	p := <-ts.parked
	if err := p.conn.Reply(p.req, NewResponse(protocol.RespSuccess, "parked")); err != nil {
		t.Fatal(err)
	}
	if r := readResponses(t, br, nc, 1)[1]; r.Code != protocol.RespSuccess || r.Remark != "parked" {
		t.Fatalf("parked request: %v", r)
	}
	// Bad: 3, 4, 5, 6, 7, 8, 9, 10, 13 (the oneway 9 and 10 counted when processed).
	waitFor(t, "9 bad requests counted", func() bool { return ts.Stats().BadRequests == 9 })
	if st := ts.Stats(); st.BadInputCloses != 0 {
		t.Fatalf("stats %+v, want no closes", st)
	}
	if n := strings.Count(ts.logs.String(), "remoting: bad request answered"); n != 1 {
		t.Fatalf("%d bad-request log lines from one host in one interval, want 1", n)
	}
	if ts.ConnCount() != 1 {
		t.Fatalf("%d connections", ts.ConnCount())
	}
}

// TestBadInputLogRateLimit: per host, the first occurrence is logged, the
// rest of the interval counted and logged as one line when the next
// interval begins (or at the flush); hosts are independent.
func TestBadInputLogRateLimit(t *testing.T) {
	logs := &logBuffer{}
	l := newBadInputLog(slog.New(slog.NewTextHandler(logs, nil)), time.Minute)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	if !l.allow("10.0.0.1") {
		t.Fatal("first occurrence not logged")
	}
	for range 4 {
		if l.allow("10.0.0.1") {
			t.Fatal("a repeat within the interval logged")
		}
	}
	if !l.allow("10.0.0.2") {
		t.Fatal("another host shares the first host's budget")
	}
	now = now.Add(time.Minute)
	if !l.allow("10.0.0.1") {
		t.Fatal("not allowed in the next interval")
	}
	if !strings.Contains(logs.String(), "host=10.0.0.1 count=4") {
		t.Fatalf("suppressed count not logged: %s", logs)
	}
	l.allow("10.0.0.1")
	l.flush(false) // the window is still open: nothing yet
	if strings.Count(logs.String(), "more bad input") != 1 {
		t.Fatalf("flushed an open window: %s", logs)
	}
	now = now.Add(time.Minute)
	l.flush(false)
	if !strings.Contains(logs.String(), "host=10.0.0.1 count=1") || len(l.hosts) != 0 {
		t.Fatalf("ended window not flushed or hosts not forgotten (%d): %s", len(l.hosts), logs)
	}
}

// TestBadResponseFailsItsCall: a response whose header has a member of
// the wrong type fails the call waiting for it, not the connection.
func TestBadResponseFailsItsCall(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		br := bufio.NewReader(nc)
		for i := 0; ; i++ {
			req, err := ReadFrame(br, 0)
			if err != nil {
				return
			}
			hdr := `{"code":0,"flag":1,"opaque":` + itoa32(req.Opaque) + `}`
			if i == 0 {
				hdr = `{"code":{},"flag":1,"opaque":` + itoa32(req.Opaque) + `}`
			}
			if _, err := nc.Write(jsonFrame(hdr, nil)); err != nil {
				return
			}
		}
	}()
	cl := newTestClient(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cl.InvokeSync(ctx, ln.Addr().String(), NewRequest(codeEcho, nil)); !errors.Is(err, ErrBadHeaderField) {
		t.Fatalf("bad response: err %v", err)
	}
	if r, err := cl.InvokeSync(ctx, ln.Addr().String(), NewRequest(codeEcho, nil)); err != nil || r.Code != protocol.RespSuccess {
		t.Fatalf("next call on the same connection: %v %v", r, err)
	}
}

// FuzzWellFramedRequestKeepsConnection sends any JSON object as a request
// header (with a body) on one long-lived connection, then a good request:
// the connection is never closed, the fuzzed request is answered with its
// opaque unless it is oneway or marked as a response, and the good one is
// answered.
func FuzzWellFramedRequestKeepsConnection(f *testing.F) {
	for _, h := range []string{
		`{"code":9001,"opaque":1}`, `{"code":9010,"extFields":{"must":"x"}}`, `{"code":"x"}`, `{"code":9010,"extFields":{"must":8}}`,
		`{"code":9001,"extFields":{"a":1,"b":true,"c":null,"d":[],"e":{}}}`, `{"code":5555,"flag":2}`, `{"flag":1}`,
		`{"opaque":{},"code":9001}`, `{"CODE":9001,"Remark":3}`, `{}`, `{"extFields":"s"}`,
	} {
		f.Add([]byte(h), []byte("body"))
	}
	logs := &logBuffer{}
	cfg := DefaultServerConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	srv := NewServer(cfg)
	srv.RegisterProcessor(codeEcho, ProcessorFunc(echo), nil)
	srv.RegisterProcessor(codeNeedsField, ProcessorFunc(needsField), nil)
	if err := srv.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	defer func() { _ = srv.Shutdown(context.Background()) }()
	var nc net.Conn
	var br *bufio.Reader
	const goodOpaque = -1 << 31
	f.Fuzz(func(t *testing.T, header, body []byte) {
		ref, ok := modelDecode(header)
		if !ok || len(header) > 1<<16 || ref.Opaque == goodOpaque {
			return // not well framed (a framing error closes by design), or too big to bother
		}
		if nc == nil {
			var err error
			if nc, err = net.Dial("tcp", srv.Addr()); err != nil {
				t.Fatal(err)
			}
			br = bufio.NewReader(nc)
		}
		good := &Command{Code: codeEcho, Opaque: goodOpaque}
		gf, err := AppendFrame(nil, good, SerializeJSON)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(append(jsonFrame(string(header), body), gf...)); err != nil {
			t.Fatalf("write: %v", err)
		}
		fuzzedAnswer := ref.Flag&(FlagOneway|FlagResponse) == 0 // still expected
		goodAnswer := true
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		for fuzzedAnswer || goodAnswer {
			r, err := ReadFrame(br, 0)
			if err != nil {
				t.Fatalf("connection closed after header %q: %v\n%s", header, err, logs)
			}
			switch {
			case goodAnswer && r.Opaque == goodOpaque:
				if r.Code != protocol.RespSuccess {
					t.Fatalf("good request: %v", r)
				}
				goodAnswer = false
			case fuzzedAnswer && r.Opaque == ref.Opaque:
				fuzzedAnswer = false
			default:
				t.Fatalf("unexpected response %v to header %q", r, header)
			}
		}
	})
}

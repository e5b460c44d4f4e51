package broker_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// startSpecEnv is the broker requestSpecs' good headers are written for.
func startSpecEnv(t *testing.T) *env {
	t.Helper()
	e := startEnv(t, nil)
	e.createTopic(specTopic, 2)
	e.mustSend(specTopic, 0, "x", "")
	return e
}

// TestRequestSpecsCoverEveryRegisteredCode: requestSpecs has an entry for
// exactly the codes the broker serves, so a processor added later gets the
// bad-request cases and fuzz seeds (or this test fails until it does).
func TestRequestSpecsCoverEveryRegisteredCode(t *testing.T) {
	b, err := broker.New(testConfig(), broker.WithStore(memstore.New()))
	if err != nil {
		t.Fatal(err)
	}
	served := b.RequestCodes()
	if !slices.Contains(served, protocol.ReqSendMessage) || !slices.Contains(served, protocol.ReqPullMessage) || !slices.IsSorted(served) {
		t.Fatalf("RequestCodes: %v", served)
	}
	specs := requestSpecs()
	for _, code := range served {
		if _, ok := specs[code]; !ok {
			t.Errorf("request code %d (%s) is served but has no entry in requestSpecs (badrequest_spec_test.go): add its good header, required fields and body rule",
				code, protocol.RequestCodeName(code))
		}
	}
	for code, s := range specs {
		if !slices.Contains(served, code) {
			t.Errorf("requestSpecs has %d (%s), which the broker does not serve", code, s.name)
		}
	}
}

// specConn is one client connection written and read by hand, so a test
// sees whether the broker keeps it: every request goes out followed by a
// good GET_MAX_OFFSET, and both must be answered on it.
type specConn struct {
	t      *testing.T
	nc     net.Conn
	br     *bufio.Reader
	opaque int32
}

func dialSpec(t *testing.T, addr string) *specConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return &specConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// call sends code with ext and body and returns its answer.
func (c *specConn) call(what string, code int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	c.t.Helper()
	return c.exchange(what, func(opaque int32) []byte {
		frame, err := remoting.AppendFrame(nil, &remoting.Command{Code: code, Opaque: opaque, ExtFields: ext, Body: body}, remoting.SerializeJSON)
		if err != nil {
			c.t.Fatalf("%s: %v", what, err)
		}
		return frame
	})
}

// exchange writes the request frame(opaque) and the follow-up, and reads
// both answers (skipping requests the broker pushes). It fails the test
// if the connection closes, an answer is missing, a processor panicked or
// the follow-up is not SUCCESS.
func (c *specConn) exchange(what string, frame func(opaque int32) []byte) *remoting.Command {
	c.t.Helper()
	c.opaque += 2
	req := c.opaque
	good := &remoting.Command{Code: protocol.ReqGetMaxOffset, Opaque: req + 1, ExtFields: remoting.ExtFields{"topic": specTopic, "queueId": "0"}}
	b, err := remoting.AppendFrame(frame(req), good, remoting.SerializeJSON)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("%s: write: %v", what, err)
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(waitLimit))
	var resp, follow *remoting.Command
	for resp == nil || follow == nil {
		r, err := remoting.ReadFrame(c.br, 0)
		if err != nil {
			c.t.Fatalf("%s: the connection failed: %v", what, err)
		}
		switch {
		case !r.IsResponse():
		case r.Opaque == req && resp == nil:
			resp = r
		case r.Opaque == req+1 && follow == nil:
			follow = r
		default:
			c.t.Fatalf("%s: unexpected answer %v", what, r)
		}
	}
	if strings.Contains(resp.Remark, "panicked") {
		c.t.Fatalf("%s: %s", what, resp.Remark)
	}
	if follow.Code != protocol.RespSuccess {
		c.t.Fatalf("%s: the good request after it: %s %q", what, protocol.ResponseCodeName(follow.Code), follow.Remark)
	}
	return resp
}

var missingFieldRemark = regexp.MustCompile(`^the custom field <([^>]*)> is null$`)

// isNumeric reports whether a good header value is a number or a boolean,
// which the handler parses (so "abc" in its place is malformed).
func isNumeric(v string) bool {
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return true
	}
	return v == "true" || v == "false"
}

func describe(r *remoting.Command) string {
	return fmt.Sprintf("%s %q", protocol.ResponseCodeName(r.Code), r.Remark)
}

// TestEveryRequestCodeRefusesBadRequests generates, from requestSpecs, the
// bad requests for every code the broker serves and sends them on one
// connection, each followed by a good request that must succeed on it:
//
//   - no custom fields and no body: SYSTEM_ERROR "the custom field <f> is
//     null" when the code has required fields, not SUCCESS when it needs
//     its body;
//   - the good header without one field: that remark exactly when the
//     field is required, never a missing-field remark when it is not (so
//     the table's required fields are those of the handler);
//   - each field set to "abc": SYSTEM_ERROR `the custom field <f> is
//     malformed: "abc" (invalid syntax)` for a number or a boolean (but
//     those in unparsedFields), any answer for a string;
//   - a custom field whose JSON value is an object: SYSTEM_ERROR;
//   - the good header with an empty and with a garbage body, by the code's
//     body rule;
//   - the good request itself is not refused for its fields (the table is
//     not vacuous).
//
// No request closes the connection or panics a processor, and the bad
// field requests are counted.
func TestEveryRequestCodeRefusesBadRequests(t *testing.T) {
	e := startSpecEnv(t)
	c := dialSpec(t, e.b.Addr())
	specs := requestSpecs()
	garbage := []byte("\x00\xff{garbage")
	fieldRefusals := uint64(0)
	for _, code := range e.b.RequestCodes() {
		s, ok := specs[code]
		if !ok {
			t.Errorf("code %d has no spec (see TestRequestSpecsCoverEveryRegisteredCode)", code)
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			c.t = t
			refused := func(what string, r *remoting.Command) {
				t.Helper()
				if r.Code == protocol.RespSuccess {
					t.Errorf("%s: SUCCESS, want an error", what)
				}
			}
			// The good request.
			good := c.call("good request", code, s.ext, s.body)
			if missingFieldRemark.MatchString(good.Remark) || strings.Contains(good.Remark, "is malformed") {
				t.Fatalf("the good request was refused for its fields: %s", describe(good))
			}

			// No fields, no body.
			r := c.call("no fields", code, nil, nil)
			switch {
			case len(s.required) > 0:
				fieldRefusals++
				if r.Code != protocol.RespSystemError || !missingFieldRemark.MatchString(r.Remark) {
					t.Errorf("no fields: %s, want SYSTEM_ERROR \"the custom field <...> is null\"", describe(r))
				}
			case s.bodyRule == bodyDecoded || s.bodyRule == bodyPayload:
				refused("no fields and no body", r)
			}

			// One field missing at a time.
			for f := range s.ext {
				ext := maps.Clone(s.ext)
				delete(ext, f)
				r := c.call("without "+f, code, ext, s.body)
				if slices.Contains(s.required, f) {
					fieldRefusals++
					if want := "the custom field <" + f + "> is null"; r.Code != protocol.RespSystemError || r.Remark != want {
						t.Errorf("without %s: %s, want SYSTEM_ERROR %q", f, describe(r), want)
					}
				} else if missingFieldRemark.MatchString(r.Remark) {
					t.Errorf("without the optional %s: %s (a required field missing from requestSpecs?)", f, describe(r))
				}
			}
			for _, f := range s.required {
				if _, ok := s.ext[f]; !ok {
					t.Errorf("required field %s is not in the good header", f)
				}
			}

			// Each field of the wrong type.
			for f, v := range s.ext {
				ext := maps.Clone(s.ext)
				ext[f] = "abc"
				r := c.call(f+"=abc", code, ext, s.body)
				if isNumeric(v) && !slices.Contains(unparsedFields[code], f) {
					fieldRefusals++
					if want := `the custom field <` + f + `> is malformed: "abc" (invalid syntax)`; r.Code != protocol.RespSystemError || r.Remark != want {
						t.Errorf("%s=abc: %s, want SYSTEM_ERROR %q", f, describe(r), want)
					}
				}
			}
			// A custom field that is a JSON object (the header decoder
			// refuses it whatever the code).
			objExt := quoted(s.ext)
			objExt["x"] = `{"id":0}`
			r = c.exchange("an object-valued field", func(opaque int32) []byte {
				return rawFrame(jsonHeader(code, opaque, 0, objExt), s.body)
			})
			fieldRefusals++
			if r.Code != protocol.RespSystemError || !strings.Contains(r.Remark, "is an object") {
				t.Errorf("an object-valued field: %s, want SYSTEM_ERROR", describe(r))
			}

			// Bodies.
			empty := c.call("empty body", code, s.ext, nil)
			bad := c.call("garbage body", code, s.ext, garbage)
			switch s.bodyRule {
			case bodyIgnored:
				if s.body != nil {
					t.Fatalf("a code that takes no body has a good body in requestSpecs")
				}
				if bad.Code != good.Code {
					t.Errorf("garbage body: %s, want %s as without", describe(bad), protocol.ResponseCodeName(good.Code))
				}
			case bodyPayload:
				refused("empty body", empty)
				if bad.Code != good.Code {
					t.Errorf("garbage body: %s, want %s as with the good body", describe(bad), protocol.ResponseCodeName(good.Code))
				}
			case bodyDecoded:
				refused("empty body", empty)
				refused("garbage body", bad)
			case bodyOptional:
				if empty.Code != good.Code {
					t.Errorf("empty body: %s, want %s as with the good body", describe(empty), protocol.ResponseCodeName(good.Code))
				}
				refused("garbage body", bad)
			}
		})
	}
	c.t = t
	r := c.call("unknown code", 4242, nil, nil)
	if r.Code != protocol.RespRequestCodeNotSupported || r.Remark != "request type 4242 not supported" {
		t.Errorf("unknown code: %s", describe(r))
	}
	if st := e.b.Stats(); st.BadRequests < fieldRefusals || st.BadInputCloses != 0 {
		t.Fatalf("stats %+v, want at least %d bad requests counted and no connection closed", st, fieldRefusals)
	}
}

// rawFrame frames a hand-written JSON header and a body.
func rawFrame(header string, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(4+len(header)+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(header)))
	b = append(b, header...)
	return append(b, body...)
}

// jsonHeader writes a request header with ext values as given (raw JSON).
func jsonHeader(code int32, opaque int32, flag int32, ext map[string]string) string {
	var b strings.Builder
	b.WriteString(`{"code":` + strconv.Itoa(int(code)) + `,"opaque":` + strconv.Itoa(int(opaque)) +
		`,"flag":` + strconv.Itoa(int(flag)) + `,"language":"JAVA","version":475,"extFields":{`)
	i := 0
	for k, v := range ext {
		if i > 0 {
			b.WriteByte(',')
		}
		i++
		b.WriteString(strconv.Quote(k) + ":" + v)
	}
	b.WriteString("}}")
	return b.String()
}

func quoted(ext remoting.ExtFields) map[string]string {
	out := make(map[string]string, len(ext))
	for k, v := range ext {
		out[k] = strconv.Quote(v)
	}
	return out
}

// TestPipelinedGoodAndBadRequests writes good sends, bad sends (missing
// fields, a header member of the wrong type, numbers where strings are
// expected), a bad pull and a held long-poll pull back to back on one
// connection: every request but the oneway one is answered with its own
// opaque, the good sends are stored, and the connection stays up.
func TestPipelinedGoodAndBadRequests(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("P", 1)
	nc, err := net.Dial("tcp", e.b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)

	var frames []byte
	want := map[int32]int32{} // opaque → response code
	opaque := int32(100)
	next := func() int32 { opaque++; return opaque }
	// A pull held by long polling, in flight while the rest is processed.
	held := next()
	frames = append(frames, rawFrame(jsonHeader(protocol.ReqPullMessage, held, 0,
		quoted(pullExt("g", "P", 0, 0, 32, protocol.PullFlagSuspend, 5000))), nil)...)
	want[held] = protocol.RespSuccess
	good := 0
	for i := range 30 {
		h := sendHeader("P", 0, "").ExtFields(true)
		o := next()
		switch i % 5 {
		case 0: // good, with numbers and booleans as a typed serializer writes them
			ext := quoted(h)
			for _, k := range []string{"d", "e", "f", "g", "h", "j", "l"} {
				ext[k] = h[k]
			}
			ext["k"], ext["m"] = "false", "false"
			frames = append(frames, rawFrame(jsonHeader(protocol.ReqSendMessageV2, o, 0, ext), []byte("m"+strconv.Itoa(i)))...)
			want[o] = protocol.RespSuccess
			good++
		case 1: // missing topic
			delete(h, "b")
			frames = append(frames, rawFrame(jsonHeader(protocol.ReqSendMessageV2, o, 0, quoted(h)), []byte("x"))...)
			want[o] = protocol.RespSystemError
		case 2: // a queue id that is an object
			ext := quoted(h)
			ext["e"] = `{"id":0}`
			frames = append(frames, rawFrame(jsonHeader(protocol.ReqSendMessageV2, o, 0, ext), []byte("x"))...)
			want[o] = protocol.RespSystemError
		case 3: // oneway and bad: no answer
			delete(h, "a")
			frames = append(frames, rawFrame(jsonHeader(protocol.ReqSendMessageV2, o, remoting.FlagOneway, quoted(h)), []byte("x"))...)
		case 4: // good, plain strings
			frames = append(frames, rawFrame(jsonHeader(protocol.ReqSendMessageV2, o, 0, quoted(h)), []byte("s"+strconv.Itoa(i)))...)
			want[o] = protocol.RespSuccess
			good++
		}
	}
	badPull := pullExt("g", "P", 0, 0, 32, 0, 0)
	delete(badPull, "queueOffset")
	o := next()
	frames = append(frames, rawFrame(jsonHeader(protocol.ReqPullMessage, o, 0, quoted(badPull)), nil)...)
	want[o] = protocol.RespSystemError
	if _, err := nc.Write(frames); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(waitLimit))
	got := map[int32]*remoting.Command{}
	for len(got) < len(want) {
		r, err := remoting.ReadFrame(br, 0)
		if err != nil {
			t.Fatalf("after %d of %d answers: %v", len(got), len(want), err)
		}
		if _, ok := want[r.Opaque]; !ok || got[r.Opaque] != nil {
			t.Fatalf("unexpected or repeated answer %v", r)
		}
		got[r.Opaque] = r
	}
	for o, code := range want {
		if got[o].Code != code {
			t.Errorf("opaque %d: %s %q, want %s", o, protocol.ResponseCodeName(got[o].Code), got[o].Remark, protocol.ResponseCodeName(code))
		}
	}
	if max := e.store.MaxOffset("P", 0); max != int64(good) {
		t.Fatalf("%d messages stored, want %d", max, good)
	}
	// The oneway ones are counted when processed, with no answer to wait for.
	eventually(t, "19 bad requests counted (6 missing, 6 wrong type, 6 oneway, 1 pull)", func() bool {
		return e.b.Stats().BadRequests == 19
	})
	if st := e.b.Stats(); st.BadInputCloses != 0 {
		t.Fatalf("stats %+v: a connection closed", st)
	}
}

// FuzzBrokerRequestKeepsConnection sends a fuzzed request — any code the
// broker serves (or an unknown one), any custom fields, any body — on one
// long-lived connection, followed by a good GET_MAX_OFFSET: the connection
// never closes, and both are answered. The codes are the broker's
// RequestCodes, and every one has seeds from requestSpecs (its good header
// and body, and no fields at all), so a processor added later is fuzzed
// from its own seeds.
func FuzzBrokerRequestKeepsConnection(f *testing.F) {
	cfg := testConfig()
	cfg.MaxSuspend = 20 * time.Millisecond
	b, err := broker.New(cfg, broker.WithStore(memstore.New()))
	if err != nil {
		f.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	defer func() { _ = b.Shutdown(context.Background()) }()
	codes := append(b.RequestCodes(), 4242)
	specs := requestSpecs()
	for i, code := range codes {
		s := specs[code] // 4242 (and a code without a spec) has none: no fields, no body
		var lines strings.Builder
		for _, k := range slices.Sorted(maps.Keys(s.ext)) {
			lines.WriteString(k + "=" + s.ext[k] + "\n")
		}
		f.Add(byte(i), lines.String(), s.body)
		f.Add(byte(i), "", []byte("{garbage"))
	}
	var nc net.Conn
	var br *bufio.Reader
	opaque := int32(0)
	f.Fuzz(func(t *testing.T, sel byte, extLines string, body []byte) {
		if len(extLines) > 4096 || len(body) > 1<<16 {
			return
		}
		if nc == nil {
			if nc, err = net.Dial("tcp", b.Addr()); err != nil {
				t.Fatal(err)
			}
			br = bufio.NewReader(nc)
		}
		ext := remoting.ExtFields{}
		for _, line := range strings.Split(extLines, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				ext[k] = v
			}
		}
		opaque += 2
		req := &remoting.Command{Code: codes[int(sel)%len(codes)], Opaque: opaque, ExtFields: ext, Body: body}
		good := &remoting.Command{Code: protocol.ReqGetMaxOffset, Opaque: opaque + 1, ExtFields: remoting.ExtFields{"topic": "T", "queueId": "0"}}
		frame, err := remoting.AppendFrame(nil, req, remoting.SerializeJSON)
		if err != nil {
			t.Fatal(err)
		}
		if frame, err = remoting.AppendFrame(frame, good, remoting.SerializeJSON); err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(frame); err != nil {
			t.Fatalf("write: %v", err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(waitLimit))
		for seen := 0; seen < 2; seen++ {
			r, err := remoting.ReadFrame(br, 0)
			if err != nil {
				t.Fatalf("connection closed by %s %v: %v", protocol.RequestCodeName(req.Code), ext, err)
			}
			if !r.IsResponse() { // a push (NOTIFY_CONSUMER_IDS_CHANGED after a fuzzed heartbeat)
				seen--
				continue
			}
			if r.Opaque != opaque && r.Opaque != opaque+1 {
				t.Fatalf("answer for opaque %d, want %d or %d", r.Opaque, opaque, opaque+1)
			}
			if strings.Contains(r.Remark, "panicked") {
				t.Fatalf("%s %v: %s", protocol.RequestCodeName(req.Code), ext, r.Remark)
			}
		}
	})
}

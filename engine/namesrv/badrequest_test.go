package namesrv

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// nsBodyRule says what a request code does with its body.
type nsBodyRule int

const (
	nsBodyIgnored  nsBodyRule = iota // takes no body: any body is answered as none
	nsBodyDecoded                    // decoded: an empty or undecodable body is refused
	nsBodyOptional                   // decoded when present: none is accepted, an undecodable one refused
)

// nsRequestSpec describes one request code the name server serves, for the
// bad-request cases TestNamesrvAnswersBadRequests generates from it and the
// fuzz seeds.
type nsRequestSpec struct {
	name     string
	ext      remoting.ExtFields // a complete good header
	required []string           // the fields of ext the handler cannot do without
	body     []byte             // a good body (nil: the code takes none)
	bodyRule nsBodyRule
}

// nsRequestSpecs has an entry for every request code the name server
// registers (TestNamesrvRequestSpecsCoverEveryRegisteredCode fails for a
// code without one, so a new processor cannot be left out).
func nsRequestSpecs() map[int32]nsRequestSpec {
	none := remoting.ExtFields{}
	return map[int32]nsRequestSpec{
		protocol.ReqRegisterBroker: {"REGISTER_BROKER",
			remoting.ExtFields{"brokerName": "b", "brokerAddr": "127.0.0.1:1", "clusterName": "c", "haServerAddr": "", "brokerId": "0",
				"heartbeatTimeoutMillis": "30000", "enableActingMaster": "false", "compressed": "false", "bodyCrc32": "0", "zoneName": ""},
			[]string{"brokerName", "brokerAddr", "clusterName", "haServerAddr", "brokerId"},
			[]byte(`{"topicConfigSerializeWrapper":{"topicConfigTable":{"T":{"topicName":"T","readQueueNums":1,"writeQueueNums":1,"perm":6}},` +
				`"dataVersion":{"counter":1,"timestamp":1}},"filterServerList":[]}`),
			nsBodyOptional},
		protocol.ReqUnregisterBroker: {"UNREGISTER_BROKER", remoting.ExtFields{"brokerName": "gone", "brokerAddr": "127.0.0.1:2", "clusterName": "c"},
			[]string{"brokerName", "brokerAddr", "clusterName"}, nil, nsBodyIgnored},
		protocol.ReqGetRouteInfoByTopic:           {"GET_ROUTEINFO_BY_TOPIC", remoting.ExtFields{"topic": "T"}, []string{"topic"}, nil, nsBodyIgnored},
		protocol.ReqGetBrokerClusterInfo:          {"GET_BROKER_CLUSTER_INFO", none, nil, nil, nsBodyIgnored},
		protocol.ReqGetAllTopicListFromNameserver: {"GET_ALL_TOPIC_LIST_FROM_NAMESERVER", none, nil, nil, nsBodyIgnored},
		protocol.ReqDeleteTopicInNamesrv:          {"DELETE_TOPIC_IN_NAMESRV", remoting.ExtFields{"topic": "GONE"}, []string{"topic"}, nil, nsBodyIgnored},
		protocol.ReqGetTopicsByCluster:            {"GET_TOPICS_BY_CLUSTER", remoting.ExtFields{"cluster": "c"}, []string{"cluster"}, nil, nsBodyIgnored},
		protocol.ReqQueryDataVersion: {"QUERY_DATA_VERSION", remoting.ExtFields{"brokerAddr": "127.0.0.1:1", "clusterName": "c"},
			[]string{"brokerAddr", "clusterName"}, []byte(`{"counter":1,"timestamp":1}`), nsBodyDecoded},
		protocol.ReqBrokerHeartbeat: {"BROKER_HEARTBEAT", remoting.ExtFields{"brokerAddr": "127.0.0.1:1", "clusterName": "c"},
			[]string{"brokerAddr", "clusterName"}, nil, nsBodyIgnored},
	}
}

// TestNamesrvRequestSpecsCoverEveryRegisteredCode: nsRequestSpecs has an
// entry for exactly the codes the name server serves.
func TestNamesrvRequestSpecsCoverEveryRegisteredCode(t *testing.T) {
	served := New(DefaultConfig()).rs.ProcessorCodes()
	if !slices.Contains(served, protocol.ReqRegisterBroker) || !slices.IsSorted(served) {
		t.Fatalf("ProcessorCodes: %v", served)
	}
	specs := nsRequestSpecs()
	for _, code := range served {
		if _, ok := specs[code]; !ok {
			t.Errorf("request code %d (%s) is served but has no entry in nsRequestSpecs: add its good header, required fields and body rule",
				code, protocol.RequestCodeName(code))
		}
	}
	for code, s := range specs {
		if !slices.Contains(served, code) {
			t.Errorf("nsRequestSpecs has %d (%s), which the name server does not serve", code, s.name)
		}
	}
}

// nsConn is one connection written and read by hand: every request goes
// out followed by a good GET_BROKER_CLUSTER_INFO, and both must be
// answered on it.
type nsConn struct {
	t      *testing.T
	nc     net.Conn
	br     *bufio.Reader
	opaque int32
}

func (c *nsConn) call(what string, code int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	c.t.Helper()
	c.opaque += 2
	req := c.opaque
	b, err := remoting.AppendFrame(nil, &remoting.Command{Code: code, Opaque: req, ExtFields: ext, Body: body}, remoting.SerializeJSON)
	if err != nil {
		c.t.Fatalf("%s: %v", what, err)
	}
	if b, err = remoting.AppendFrame(b, &remoting.Command{Code: protocol.ReqGetBrokerClusterInfo, Opaque: req + 1}, remoting.SerializeJSON); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("%s: write: %v", what, err)
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var resp, follow *remoting.Command
	for resp == nil || follow == nil {
		r, err := remoting.ReadFrame(c.br, 0)
		if err != nil {
			c.t.Fatalf("%s: the connection failed: %v", what, err)
		}
		switch {
		case r.Opaque == req && resp == nil:
			resp = r
		case r.Opaque == req+1 && follow == nil:
			follow = r
		default:
			c.t.Fatalf("%s: unexpected frame %v", what, r)
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

var nsMissingField = regexp.MustCompile(`^the custom field <([^>]*)> is null$`)

func nsDescribe(r *remoting.Command) string {
	return fmt.Sprintf("%s %q", protocol.ResponseCodeName(r.Code), r.Remark)
}

// TestNamesrvAnswersBadRequests generates, from nsRequestSpecs, the bad
// requests for every code the name server serves and sends them on one
// connection, each followed by a good request that must succeed on it: no
// fields (SYSTEM_ERROR naming a missing field when the code has required
// ones), the good header without one field (Java's remark exactly for a
// required field, never a missing-field remark for an optional one), each
// field set to "abc" (SYSTEM_ERROR `the custom field <f> is malformed`
// for a number or boolean), and the good header with an empty and a
// garbage body by the code's body rule. Nothing closes the connection or
// panics, the bad requests are counted, and the good request of each code
// is not refused for its fields. An unknown code is REQUEST_CODE_NOT_SUPPORTED.
func TestNamesrvAnswersBadRequests(t *testing.T) {
	s := startNamesrv(t, nil)
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := &nsConn{nc: nc, br: bufio.NewReader(nc)}
	specs := nsRequestSpecs()
	bad := uint64(0)
	for _, code := range s.rs.ProcessorCodes() {
		sp, ok := specs[code]
		if !ok {
			t.Errorf("code %d has no spec (see TestNamesrvRequestSpecsCoverEveryRegisteredCode)", code)
			continue
		}
		t.Run(sp.name, func(t *testing.T) {
			c.t = t
			refused := func(what string, r *remoting.Command) {
				t.Helper()
				if r.Code == protocol.RespSuccess {
					t.Errorf("%s: SUCCESS, want an error", what)
				}
			}
			good := c.call("good request", code, sp.ext, sp.body)
			if nsMissingField.MatchString(good.Remark) || strings.Contains(good.Remark, "is malformed") {
				t.Fatalf("the good request was refused for its fields: %s", nsDescribe(good))
			}
			r := c.call("no fields", code, nil, nil)
			switch {
			case len(sp.required) > 0:
				bad++
				if r.Code != protocol.RespSystemError || !nsMissingField.MatchString(r.Remark) {
					t.Errorf("no fields: %s, want SYSTEM_ERROR \"the custom field <...> is null\"", nsDescribe(r))
				}
			case sp.bodyRule == nsBodyDecoded:
				refused("no fields and no body", r)
			}
			for f := range sp.ext {
				ext := maps.Clone(sp.ext)
				delete(ext, f)
				r := c.call("without "+f, code, ext, sp.body)
				if slices.Contains(sp.required, f) {
					bad++
					if want := "the custom field <" + f + "> is null"; r.Code != protocol.RespSystemError || r.Remark != want {
						t.Errorf("without %s: %s, want SYSTEM_ERROR %q", f, nsDescribe(r), want)
					}
				} else if nsMissingField.MatchString(r.Remark) {
					t.Errorf("without the optional %s: %s (a required field missing from nsRequestSpecs?)", f, nsDescribe(r))
				}
			}
			for _, f := range sp.required {
				if _, ok := sp.ext[f]; !ok {
					t.Errorf("required field %s is not in the good header", f)
				}
			}
			for f, v := range sp.ext {
				ext := maps.Clone(sp.ext)
				ext[f] = "abc"
				r := c.call(f+"=abc", code, ext, sp.body)
				if _, err := strconv.ParseInt(v, 10, 64); err == nil || v == "true" || v == "false" {
					bad++
					if want := `the custom field <` + f + `> is malformed: "abc" (invalid syntax)`; r.Code != protocol.RespSystemError || r.Remark != want {
						t.Errorf("%s=abc: %s, want SYSTEM_ERROR %q", f, nsDescribe(r), want)
					}
				}
			}
			empty := c.call("empty body", code, sp.ext, nil)
			garbage := c.call("garbage body", code, sp.ext, []byte("\x00\xff{garbage"))
			switch sp.bodyRule {
			case nsBodyIgnored:
				if garbage.Code != good.Code {
					t.Errorf("garbage body: %s, want %s as without", nsDescribe(garbage), protocol.ResponseCodeName(good.Code))
				}
			case nsBodyDecoded:
				refused("empty body", empty)
				fallthrough
			case nsBodyOptional:
				bad++
				if garbage.Code != protocol.RespSystemError || !strings.Contains(garbage.Remark, ErrMalformedBody.Error()) {
					t.Errorf("garbage body: %s, want SYSTEM_ERROR %q", nsDescribe(garbage), ErrMalformedBody)
				}
			}
			if sp.bodyRule == nsBodyOptional && empty.Code != good.Code {
				t.Errorf("empty body: %s, want %s as with the good body", nsDescribe(empty), protocol.ResponseCodeName(good.Code))
			}
		})
	}
	c.t = t
	resp := c.call("unknown code", 4242, nil, nil)
	bad++
	if resp.Code != protocol.RespRequestCodeNotSupported || resp.Remark != "request type 4242 not supported" {
		t.Errorf("unknown code: %s", nsDescribe(resp))
	}
	if st := s.Stats(); st.BadRequests < bad || st.BadInputCloses != 0 {
		t.Fatalf("stats %+v, want at least %d bad requests and no closes", st, bad)
	}
	if n := s.rs.ConnCount(); n != 1 {
		t.Fatalf("%d connections, want the one that sent everything", n)
	}
}

// FuzzNamesrvRequestKeepsConnection sends a fuzzed request — any code the
// name server serves (or an unknown one), any custom fields, any body — on
// one long-lived connection, followed by a good GET_BROKER_CLUSTER_INFO:
// the connection never closes, both are answered, no processor panics.
// The codes are the server's registered ones, each seeded from
// nsRequestSpecs (its good header and body, and no fields at all).
func FuzzNamesrvRequestKeepsConnection(f *testing.F) {
	cfg := DefaultConfig()
	cfg.Remoting.Addr = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.DiscardHandler)
	s := New(cfg)
	if err := s.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	defer func() { _ = s.Shutdown(context.Background()) }()
	codes := append(s.rs.ProcessorCodes(), 4242)
	specs := nsRequestSpecs()
	for i, code := range codes {
		sp := specs[code] // 4242 has none: no fields, no body
		var lines strings.Builder
		for _, k := range slices.Sorted(maps.Keys(sp.ext)) {
			lines.WriteString(k + "=" + sp.ext[k] + "\n")
		}
		f.Add(byte(i), lines.String(), sp.body)
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
			var err error
			if nc, err = net.Dial("tcp", s.Addr()); err != nil {
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
		good := &remoting.Command{Code: protocol.ReqGetBrokerClusterInfo, Opaque: opaque + 1}
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
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		for range 2 {
			r, err := remoting.ReadFrame(br, 0)
			if err != nil {
				t.Fatalf("connection closed by %s %v: %v", protocol.RequestCodeName(req.Code), ext, err)
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

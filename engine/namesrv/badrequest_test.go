package namesrv

import (
	"bufio"
	"context"
	"log/slog"
	"maps"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/remoting"
)

// TestNamesrvAnswersBadRequests: every processor's required fields, a
// malformed value, undecodable bodies, a header member of the wrong type
// and an unknown code are answered on one connection (Java's codes and
// remarks), counted, and the connection stays usable.
func TestNamesrvAnswersBadRequests(t *testing.T) {
	s := startNamesrv(t, nil)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	call := func(code int32, ext remoting.ExtFields, body []byte) *remoting.Command {
		t.Helper()
		req := remoting.NewRequest(code, ext)
		req.Body = body
		resp, err := c.InvokeSync(ctx, s.Addr(), req)
		if err != nil {
			t.Fatalf("%s: %v", remoting.RequestCodeName(code), err)
		}
		return resp
	}
	reg := remoting.ExtFields{"brokerName": "b", "brokerAddr": "127.0.0.1:1", "clusterName": "c", "haServerAddr": "", "brokerId": "0"}
	cases := []struct {
		code     int32
		ext      remoting.ExtFields
		body     []byte
		required []string
	}{
		{remoting.ReqRegisterBroker, reg, nil, []string{"brokerName", "brokerAddr", "clusterName", "haServerAddr", "brokerId"}},
		{remoting.ReqUnregisterBroker, remoting.ExtFields{"brokerName": "b", "brokerAddr": "a", "clusterName": "c"}, nil,
			[]string{"brokerName", "brokerAddr", "clusterName"}},
		{remoting.ReqGetRouteInfoByTopic, remoting.ExtFields{"topic": "T"}, nil, []string{"topic"}},
		{remoting.ReqGetTopicsByCluster, remoting.ExtFields{"cluster": "c"}, nil, []string{"cluster"}},
		{remoting.ReqDeleteTopicInNamesrv, remoting.ExtFields{"topic": "T"}, nil, []string{"topic"}},
		{remoting.ReqQueryDataVersion, remoting.ExtFields{"brokerAddr": "a", "clusterName": "c"}, []byte(`{"counter":1,"timestamp":1}`),
			[]string{"brokerAddr", "clusterName"}},
		{remoting.ReqBrokerHeartbeat, remoting.ExtFields{"brokerAddr": "a", "clusterName": "c"}, nil, []string{"brokerAddr", "clusterName"}},
	}
	bad := uint64(0)
	for _, cs := range cases {
		for _, f := range cs.required {
			ext := maps.Clone(cs.ext)
			delete(ext, f)
			resp := call(cs.code, ext, cs.body)
			bad++
			if want := "the custom field <" + f + "> is null"; resp.Code != remoting.RespSystemError || resp.Remark != want {
				t.Errorf("%s without %s: %s %q, want SYSTEM_ERROR %q", remoting.RequestCodeName(cs.code), f,
					remoting.ResponseCodeName(resp.Code), resp.Remark, want)
			}
		}
	}
	ext := maps.Clone(reg)
	ext["brokerId"] = "zero"
	resp := call(remoting.ReqRegisterBroker, ext, nil)
	bad++
	if want := `the custom field <brokerId> is malformed: "zero" (invalid syntax)`; resp.Code != remoting.RespSystemError || resp.Remark != want {
		t.Errorf("malformed brokerId: %s %q", remoting.ResponseCodeName(resp.Code), resp.Remark)
	}
	for _, cs := range []struct {
		code int32
		ext  remoting.ExtFields
	}{{remoting.ReqRegisterBroker, reg}, {remoting.ReqQueryDataVersion, remoting.ExtFields{"brokerAddr": "a", "clusterName": "c"}}} {
		resp := call(cs.code, cs.ext, []byte("{not json"))
		bad++
		if resp.Code != remoting.RespSystemError || !strings.Contains(resp.Remark, ErrMalformedBody.Error()) {
			t.Errorf("%s with a bad body: %s %q", remoting.RequestCodeName(cs.code), remoting.ResponseCodeName(resp.Code), resp.Remark)
		}
	}
	resp = call(4242, nil, nil)
	bad++
	if resp.Code != remoting.RespRequestCodeNotSupported || resp.Remark != "request type 4242 not supported" {
		t.Errorf("unknown code: %s %q", remoting.ResponseCodeName(resp.Code), resp.Remark)
	}
	if st := s.Stats(); st.BadRequests != bad || st.BadInputCloses != 0 {
		t.Fatalf("stats %+v, want %d bad requests and no closes", st, bad)
	}
	if n := s.rs.ConnCount(); n != 1 {
		t.Fatalf("%d connections, want the one that sent everything", n)
	}
}

// FuzzNamesrvRequestKeepsConnection sends a fuzzed request — any code the
// name server serves (or an unknown one), any custom fields, any body — on
// one long-lived connection, followed by a good GET_BROKER_CLUSTER_INFO:
// the connection never closes, both are answered, no processor panics.
func FuzzNamesrvRequestKeepsConnection(f *testing.F) {
	codes := []int32{remoting.ReqRegisterBroker, remoting.ReqUnregisterBroker, remoting.ReqGetRouteInfoByTopic,
		remoting.ReqGetBrokerClusterInfo, remoting.ReqGetAllTopicListFromNameserver, remoting.ReqDeleteTopicInNamesrv,
		remoting.ReqGetTopicsByCluster, remoting.ReqQueryDataVersion, remoting.ReqBrokerHeartbeat, 4242}
	f.Add(byte(0), "brokerName=b\nbrokerAddr=127.0.0.1:1\nclusterName=c\nhaServerAddr=\nbrokerId=0\n",
		[]byte(`{"topicConfigSerializeWrapper":{"topicConfigTable":{"T":{"topicName":"T","readQueueNums":1,"writeQueueNums":1,"perm":6}},"dataVersion":{"counter":1,"timestamp":1}},"filterServerList":[]}`))
	f.Add(byte(2), "topic=T\n", []byte(nil))
	f.Add(byte(7), "brokerAddr=a\nclusterName=c\n", []byte(`{"counter":1}`))
	f.Add(byte(9), "", []byte("x"))
	cfg := DefaultConfig()
	cfg.Remoting.Addr = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.DiscardHandler)
	s := New(cfg)
	if err := s.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	defer func() { _ = s.Shutdown(context.Background()) }()
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
		good := &remoting.Command{Code: remoting.ReqGetBrokerClusterInfo, Opaque: opaque + 1}
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
				t.Fatalf("connection closed by %s %v: %v", remoting.RequestCodeName(req.Code), ext, err)
			}
			if r.Opaque != opaque && r.Opaque != opaque+1 {
				t.Fatalf("answer for opaque %d, want %d or %d", r.Opaque, opaque, opaque+1)
			}
			if strings.Contains(r.Remark, "panicked") {
				t.Fatalf("%s %v: %s", remoting.RequestCodeName(req.Code), ext, r.Remark)
			}
		}
	})
}

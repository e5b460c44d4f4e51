package namesrv

import (
	"context"
	"maps"
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

package proxy

import (
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// RemotingCode inverts remotingCode: every gRPC code the table maps back
// maps forward to itself, shared codes give their first broker code, and
// codes the proxy raises only itself have no broker code.
func TestRemotingCodeInverts(t *testing.T) {
	for _, e := range codeTable {
		rc, ok := RemotingCode(e.grpc)
		if e.grpc == v2.Code_OK {
			if ok {
				t.Fatal("OK maps back to a broker code")
			}
			continue
		}
		if !ok || remotingCode(rc) != e.grpc {
			t.Fatalf("%v: back to %d (%v)", e.grpc, rc, ok)
		}
	}
	if rc, _ := RemotingCode(v2.Code_TOO_MANY_REQUESTS); rc != protocol.RespSystemBusy {
		t.Fatalf("TOO_MANY_REQUESTS back to %d", rc)
	}
	for _, c := range []v2.Code{v2.Code_MESSAGE_NOT_FOUND, v2.Code_PROXY_TIMEOUT, v2.Code_INTERNAL_SERVER_ERROR} {
		if _, ok := RemotingCode(c); ok {
			t.Fatalf("%v maps to a broker code", c)
		}
	}
	if remotingCode(-12345) != v2.Code_INTERNAL_SERVER_ERROR {
		t.Fatal("an unmapped broker code is not INTERNAL_SERVER_ERROR")
	}
}

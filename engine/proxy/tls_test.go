package proxy_test

import (
	"crypto/tls"
	"net"
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// TestTLSAndPlaintextOnOnePort: v5 clients use TLS (without verifying the
// server) by default; the port also takes plaintext.
func TestTLSAndPlaintextOnOnePort(t *testing.T) {
	e := startEnv(t, nil, nil)
	e.topic("TlsT", 1, "")
	conn, err := grpc.NewClient(e.p.Addr(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	resp, err := v2.NewMessagingServiceClient(conn).QueryRoute(callCtx(t, "c-tls", "", ""), &v2.QueryRouteRequest{Topic: res("TlsT")})
	if err != nil || resp.Status.Code != v2.Code_OK {
		t.Fatalf("over TLS: %v %v", resp, err)
	}
	// A connection that never sends a byte holds up nobody.
	silent, err := net.Dial("tcp", e.p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	resp, err = e.cli.QueryRoute(callCtx(t, "c-plain", "", ""), &v2.QueryRouteRequest{Topic: res("TlsT")})
	if err != nil || resp.Status.Code != v2.Code_OK {
		t.Fatalf("plaintext: %v %v", resp, err)
	}
}

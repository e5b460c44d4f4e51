package remoting

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// TestOnewayWaitsForRoomInsteadOfDropping: a oneway sender writing to a
// peer that does not read fills the kernel's buffers and then its own
// write queue; beyond requestHighWater each further send waits for room
// and, when its context ends, fails with ErrTimeout — the connection stays
// open and nothing already queued is thrown away (before, the queue grew to
// maxPendingWriteBytes and the connection was closed as a slow peer, losing
// every frame queued in it).
func TestOnewayWaitsForRoomInsteadOfDropping(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, err := ln.Accept()
		if err == nil {
			accepted <- nc // held open, never read
		}
	}()
	cfg := DefaultClientConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cl := NewClient(cfg)
	defer cl.Close()
	conn, err := cl.Dial(context.Background(), ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	defer peer.Close()

	body := make([]byte, 256<<10)
	var blocked error
	for i := 0; i < 1000 && blocked == nil; i++ { // 250 MiB at most: far past any socket buffer
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		req := NewRequest(protocol.ReqSendMessageV2, nil)
		req.Body = body
		blocked = conn.SendContext(ctx, req)
		cancel()
	}
	if !errors.Is(blocked, ErrTimeout) {
		t.Fatalf("a oneway send to a peer that does not read ended with %v, want ErrTimeout", blocked)
	}
	if conn.isClosed() {
		t.Fatal("the connection was closed instead of applying back pressure")
	}
	conn.wq.mu.Lock()
	queued := conn.wq.bytes
	conn.wq.mu.Unlock()
	if queued < requestHighWater || queued > requestHighWater+int64(len(body))+4096 {
		t.Fatalf("%d bytes queued, want the high-water mark %d (+ one frame)", queued, requestHighWater)
	}
}

// TestServerCountsRejectedOneways: oneway requests the server refuses
// before a processor sees them (here: too many in flight on the
// connection) get no answer, and OnewayRejected counts them.
func TestServerCountsRejectedOneways(t *testing.T) {
	ts := startTestServer(t, func(c *ServerConfig) { c.MaxInFlightPerConn = 1 }, nil)
	cl := NewClient(DefaultClientConfig())
	defer cl.Close()
	ctx := context.Background()
	park := NewRequest(codePark, nil)
	if err := cl.InvokeOneway(ctx, ts.Addr(), park); err != nil {
		t.Fatal(err)
	}
	p := <-ts.parked // holds the connection's only in-flight slot
	for range 3 {
		if err := cl.InvokeOneway(ctx, ts.Addr(), NewRequest(codeEcho, nil)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for ts.OnewayRejected() != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("OnewayRejected %d, want 3", ts.OnewayRejected())
		}
		time.Sleep(time.Millisecond)
	}
	if err := p.conn.Reply(p.req, NewResponse(protocol.RespSuccess, "")); err != nil { // a oneway: releases the slot, sends nothing
		t.Fatal(err)
	}
	resp, err := cl.InvokeSync(ctx, ts.Addr(), NewRequest(codeEcho, nil))
	if err != nil || resp.Code != protocol.RespSuccess {
		t.Fatalf("echo after the rejections: %v %v", resp, err)
	}
	if n := ts.OnewayRejected(); n != 3 {
		t.Fatalf("OnewayRejected %d after room was made, want 3", n)
	}
}

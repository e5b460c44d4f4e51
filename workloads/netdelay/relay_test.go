package netdelay

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// echoServer echoes every connection until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// TestRelayDelaysAndPreservesBytes: a round trip through the relay takes at
// least twice the one-way delay, and a megabyte of random bytes comes back
// intact and in order despite the jitter.
func TestRelayDelaysAndPreservesBytes(t *testing.T) {
	r, err := New(Config{Listen: "127.0.0.1:0", Target: echoServer(t), Delay: 15 * time.Millisecond, Jitter: 5 * time.Millisecond, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b [1]byte
	for range 3 {
		t0 := time.Now()
		if _, err := c.Write([]byte{7}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, b[:]); err != nil || b[0] != 7 {
			t.Fatalf("echo: %v %v", b, err)
		}
		if rtt := time.Since(t0); rtt < 30*time.Millisecond {
			t.Fatalf("round trip %v, want at least 30ms", rtt)
		}
	}
	data := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(2, 3))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	go func() {
		for p := data; len(p) > 0; {
			n := min(len(p), 1+rng.IntN(20000))
			if _, err := c.Write(p[:n]); err != nil {
				return
			}
			p = p[n:]
		}
	}()
	got := make([]byte, len(data))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("bytes reordered or changed")
	}
}

// TestRelayCloseEndsConnections: Close ends relayed connections and
// returns.
func TestRelayCloseEndsConnections(t *testing.T) {
	r, err := New(ForRTT("127.0.0.1:0", echoServer(t), 2*time.Millisecond, 1))
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(b[:]); err == nil {
		t.Fatal("connection still open after Close")
	}
	if cfg := ForRTT("a", "b", 10*time.Millisecond, 0); cfg.Delay+cfg.Jitter/2 != 5*time.Millisecond {
		t.Fatalf("ForRTT mean one-way delay %v", cfg.Delay+cfg.Jitter/2)
	}
}

package natsdriver

import (
	"net/url"
	"strings"
	"testing"
)

// TestLoopbackIsTCPOn127 checks that Loopback makes the client talk to the
// server over TCP on 127.0.0.1, and that messages round-trip that way.
func TestLoopbackIsTCPOn127(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig(t.TempDir())
	cfg.Topics, cfg.Queues, cfg.Loopback = []string{"wire"}, 1, true
	d := open(t, cfg)
	defer d.Close()
	u, err := url.Parse(d.nc.ConnectedUrl())
	if err != nil || u.Scheme != "nats" || u.Hostname() != "127.0.0.1" {
		t.Fatalf("connected to %q (%v), want nats://127.0.0.1:<port>", d.nc.ConnectedUrl(), err)
	}
	if !strings.HasPrefix(d.nc.ConnectedAddr(), "127.0.0.1:") {
		t.Fatalf("connected address %q is not loopback TCP", d.nc.ConnectedAddr())
	}
	for i := range 20 {
		send(t, d, "wire", 0, i)
	}
	checkQueue(t, d, "wire", 0, 20)

	// Without Loopback there is no listener: the client URL is empty.
	cfg2 := DefaultConfig(t.TempDir())
	d2 := open(t, cfg2)
	defer d2.Close()
	if addr := d2.nc.ConnectedAddr(); strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("in-process connection reports TCP address %q", addr)
	}
}

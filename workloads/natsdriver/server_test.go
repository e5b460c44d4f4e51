package natsdriver

import (
	"errors"
	"net/url"
	"path/filepath"
	"testing"
)

// A server started alone is reached by Dial over 127.0.0.1 TCP; messages
// round-trip, the driver's Close leaves the server running, and the
// server keeps its store under Dir/jetstream.
func TestStartServerAndDial(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := DefaultConfig(dir)
	cfg.SyncAlways = true
	srv, err := StartServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	if srv.StoreDir() != filepath.Join(dir, "jetstream") || StoreDirOf(dir) != srv.StoreDir() {
		t.Fatalf("store dir %q", srv.StoreDir())
	}
	u, err := url.Parse(srv.ClientURL())
	if err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("client URL %q (%v): want nats://127.0.0.1:<port>", srv.ClientURL(), err)
	}
	dc := DefaultConfig("")
	dc.Topics, dc.Queues = []string{"apart"}, 2
	d, err := Dial(srv.ClientURL(), dc)
	if err != nil {
		t.Fatal(err)
	}
	if d.StoreDir() != "" {
		t.Fatalf("a dialled driver reports store dir %q", d.StoreDir())
	}
	for i := range 15 {
		send(t, d, "apart", 1, i)
	}
	checkQueue(t, d, "apart", 1, 15)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// The server outlives the client: a second client sees the messages.
	d2, err := Dial(srv.ClientURL(), dc)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	checkQueue(t, d2, "apart", 1, 15)
}

func TestStartServerAndDialErrors(t *testing.T) {
	t.Parallel()
	if _, err := StartServer(Config{}); !errors.Is(err, ErrConfig) {
		t.Errorf("StartServer without Dir: %v, want ErrConfig", err)
	}
	if _, err := Dial("", DefaultConfig("")); !errors.Is(err, ErrConfig) {
		t.Errorf("Dial without URL: %v, want ErrConfig", err)
	}
	if _, err := Dial("nats://127.0.0.1:1", DefaultConfig("")); !errors.Is(err, ErrStart) {
		t.Errorf("Dial to a closed port: %v, want ErrStart", err)
	}
}

package experiments

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/workloads"
)

const tlsExperiment = `
name: tls
warmup: 100ms
duration: 300ms
interval: 100ms
engine: {segment_size: 1MiB, transport: loopback}
workload: {mode: closed, producers: 4, size: "fixed:512", tailing: 1}
matrix:
  - {param: tls, values: ["off", "on"]}
`

func TestTLSParameter(t *testing.T) {
	e, err := Parse([]byte(tlsExperiment))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := e.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || cells[0].Exp.Engine.TLS || !cells[1].Exp.Engine.TLS {
		t.Fatalf("cells: %d, tls %v/%v", len(cells), cells[0].Exp.Engine.TLS, len(cells) > 1 && cells[1].Exp.Engine.TLS)
	}
	if _, err := Parse([]byte("name: x\nduration: 1s\nengine: {tls: on}\n")); !errors.Is(err, ErrConfig) {
		t.Fatalf("tls on an in-process engine: %v, want ErrConfig", err)
	}
	if e, err := Parse([]byte("name: x\nduration: 1s\nengine: {tls: on, transport: loopback}\n")); err != nil || !e.Engine.TLS {
		t.Fatalf("engine tls: on: %v", err)
	}
	bad, err := Parse([]byte("name: x\nduration: 1s\nengine: {transport: loopback}\nmatrix: [{param: tls, values: [maybe]}]\n"))
	if err == nil {
		_, err = bad.Cells()
	}
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("tls=maybe: %v, want ErrConfig", err)
	}
}

// With tls on, the loopback broker enforces TLS and the driver speaks it.
func TestBrokerSystemTLS(t *testing.T) {
	e, err := Parse([]byte(tlsExperiment))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := e.Cells()
	if err != nil {
		t.Fatal(err)
	}
	on := cells[1].Exp
	s, err := openBrokerSystem(on, t.TempDir(), sysHooks{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	topic := topicNames(on)[0]
	if err := s.d.Send(context.Background(), &workloads.Message{Topic: topic, QueueID: 0, Body: []byte("over tls")}); err != nil {
		t.Fatalf("send over TLS: %v", err)
	}
	cfg := remoting.DefaultClientConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	plain := remoting.NewClient(cfg)
	defer plain.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := plain.InvokeSync(ctx, s.b.Addr(), remoting.NewRequest(protocol.ReqGetBrokerClusterInfo, nil)); err == nil {
		t.Fatal("plaintext client served by the tls-on broker")
	}
}

// Both cells run end to end.
func TestRunTLSOnOff(t *testing.T) {
	t.Parallel() // a run of its own: own directories and ports
	e, err := Parse([]byte(tlsExperiment))
	if err != nil {
		t.Fatal(err)
	}
	o, err := Run(context.Background(), e, Options{OutRoot: t.TempDir(), StoreRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Cells) != 2 {
		t.Fatalf("%d cells", len(o.Cells))
	}
	for _, c := range o.Cells {
		if c.Error != "" || c.Ops == 0 || c.Extra["send_errors"] != 0 {
			t.Fatalf("cell %s: ops %d, error %q, send errors %v", c.Name, c.Ops, c.Error, c.Extra["send_errors"])
		}
	}
	if o.Cells[0].Params["tls"] == o.Cells[1].Params["tls"] {
		t.Fatalf("cells' tls params %v / %v, want one on and one off", o.Cells[0].Params, o.Cells[1].Params)
	}
}

package netdriver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/clustertest"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/netdriver"
)

// With TLS on, the driver reaches a name server and a broker that enforce
// TLS (ephemeral certificates, as a broker run without certificate files
// has); with it off, it cannot.
func TestTLSAgainstEnforcingServers(t *testing.T) {
	enforcing := remoting.TLSConfig{Mode: remoting.TLSEnforcing}
	ns := clustertest.StartNamesrv(t, func(c *namesrv.Config) { c.Remoting.TLS = enforcing })

	bcfg := clustertest.BrokerConfig(ns.Addr())
	bcfg.Remoting.TLS = enforcing
	nsTLS, err := remoting.TLSClientConfig{}.Load()
	if err != nil {
		t.Fatal(err)
	}
	bcfg.NamesrvTLS = nsTLS
	b := clustertest.StartBroker(t, bcfg, broker.WithStore(memstore.New()), nil)

	d := newDriver(t, func(c *netdriver.Config) {
		c.Namesrv = ns.Addr()
		c.CreateQueues = 2
		c.TLS = true
	})
	ctx := context.Background()
	for i := range 10 {
		if err := d.Send(ctx, &workloads.Message{Topic: "TT", QueueID: int32(i % 2), Body: []byte(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if got := pullAll(t, d, "TT", 0); len(got) != 5 || got[0] != "0" || got[4] != "8" {
		t.Fatalf("pulled over TLS: %v", got)
	}

	plain := newDriver(t, func(c *netdriver.Config) { c.Broker = b.Addr() })
	if err := plain.Send(ctx, &workloads.Message{Topic: "TT", QueueID: 0, Body: []byte("x")}); err == nil {
		t.Fatal("plaintext driver served by a TLS-enforcing broker")
	}
}

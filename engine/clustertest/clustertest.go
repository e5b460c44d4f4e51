// Package clustertest starts a name server and brokers on 127.0.0.1 for
// tests (the one fixture the broker's, the drivers' and the commands' tests
// share): ephemeral ports, discarded logs, and a Cleanup that stops each by
// the handle it returned. It is test support only: no production code
// imports it.
package clustertest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/namesrv"
)

// Quiet is a logger that discards everything.
var Quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// StartNamesrv starts a name server on 127.0.0.1 (mutate, if not nil,
// changes its config first) and stops it when the test ends.
func StartNamesrv(t testing.TB, mutate func(*namesrv.Config)) *namesrv.Server {
	t.Helper()
	cfg := namesrv.DefaultConfig()
	cfg.Remoting.Addr = "127.0.0.1:0"
	cfg.Logger = Quiet
	if mutate != nil {
		mutate(&cfg)
	}
	ns := namesrv.New(cfg)
	if err := ns.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ns.Shutdown(context.Background()) })
	return ns
}

// BrokerConfig is a broker's config for tests: listening on 127.0.0.1,
// quiet, registering with nsAddr ("": none). Sends waiting over
// SendQueueMaxWait (200 ms) for a worker are answered SYSTEM_BUSY; on a
// loaded 2-core machine under -race that flow control would hit sends
// tests expect to succeed, so it is 10 s here (tests of the flow control
// set their own).
func BrokerConfig(nsAddr string) broker.Config {
	cfg := broker.DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.Logger = Quiet
	cfg.SendQueueMaxWait = 10 * time.Second
	if nsAddr != "" {
		cfg.NamesrvAddrs = []string{nsAddr}
	}
	return cfg
}

// StartBroker builds a broker on open, runs before (if not nil) on it,
// starts it and shuts it down when the test ends.
func StartBroker(t testing.TB, cfg broker.Config, open broker.StoreOpener, before func(*broker.Broker)) *broker.Broker {
	t.Helper()
	b, err := broker.New(cfg, open)
	if err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(b)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	return b
}

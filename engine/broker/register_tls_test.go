package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/clustertest"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/remoting/tlstest"
)

// A name server that enforces TLS and requires client certificates gets the
// registration of a broker configured with NamesrvTLS and its certificate,
// and not that of a plaintext broker; the TLS broker's own port enforces TLS.
func TestRegistersOverTLS(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, dir, "cluster")
	srvCert := ca.Issue(t, dir, "namesrv", tlstest.Opts{})
	brkCert := ca.Issue(t, dir, "broker", tlstest.Opts{})

	ns := clustertest.StartNamesrv(t, func(c *namesrv.Config) {
		c.Remoting.TLS = remoting.TLSConfig{Mode: remoting.TLSEnforcing, CertFile: srvCert.CertFile, KeyFile: srvCert.KeyFile,
			CAFile: ca.File, ClientAuth: remoting.ClientAuthRequire}
	})

	clientTLS, err := remoting.TLSClientConfig{CertFile: brkCert.CertFile, KeyFile: brkCert.KeyFile, CAFile: ca.File, VerifyServer: true}.Load()
	if err != nil {
		t.Fatal(err)
	}
	start := func(name string, mutate func(*broker.Config)) *broker.Broker {
		cfg := testConfig()
		cfg.BrokerName = name
		cfg.NamesrvAddrs = []string{ns.Addr()}
		cfg.RegisterTimeout = 2 * time.Second
		mutate(&cfg)
		b, err := broker.New(cfg, broker.WithStore(memstore.New()))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
		return b
	}
	secure := start("broker-tls", func(c *broker.Config) {
		c.NamesrvTLS = clientTLS
		c.Remoting.TLS = remoting.TLSConfig{Mode: remoting.TLSEnforcing, CertFile: brkCert.CertFile, KeyFile: brkCert.KeyFile}
	})
	start("broker-plain", func(*broker.Config) {})

	// Start registers once before it returns.
	info := ns.ClusterInfo()
	if _, ok := info.BrokerAddrTable["broker-tls"]; !ok {
		t.Fatalf("the TLS broker is not registered: %+v", info.BrokerAddrTable)
	}
	if _, ok := info.BrokerAddrTable["broker-plain"]; ok {
		t.Fatal("a plaintext broker registered with a TLS-enforcing name server")
	}

	// The TLS broker's port: a TLS client is served, a plaintext one is not.
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	ccfg.TLS = clientTLS
	tc := remoting.NewClient(ccfg)
	defer tc.Close()
	ccfg.TLS = nil
	pc := remoting.NewClient(ccfg)
	defer pc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := remoting.NewRequest(protocol.ReqGetBrokerConfig, nil)
	if _, err := tc.InvokeSync(ctx, secure.Addr(), req); err != nil {
		t.Fatalf("TLS client to the TLS broker: %v", err)
	}
	if _, err := pc.InvokeSync(ctx, secure.Addr(), remoting.NewRequest(protocol.ReqGetBrokerConfig, nil)); err == nil {
		t.Fatal("plaintext client served by a TLS-enforcing broker")
	}
}

package compat_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/remoting/tlstest"
)

// The official Go client turns TLS on with producer.WithTls(true) /
// consumer.WithTls(true). It then dials name servers and brokers with
// crypto/tls, accepting any server certificate and presenting none.
//
// WithTls writes the client's process-wide default remoting config (the
// options hold a pointer to it), so every client made afterwards uses the
// last value set: each test here sets it explicitly and resets it to false
// when it ends, and none runs in parallel.

var instanceSeq atomic.Int32

// uniqueInstance names a client instance no other test uses (the client
// caches its instances by name).
func uniqueInstance(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, instanceSeq.Add(1))
}

// setOfficialTLS sets the official client's process-wide TLS switch.
func setOfficialTLS(t *testing.T, on bool) {
	t.Helper()
	_, err := producer.NewDefaultProducer(producer.WithNsResolver(primitive.NewPassthroughResolver([]string{"127.0.0.1:9"})),
		producer.WithInstanceName(uniqueInstance("tls-switch")), producer.WithTls(on))
	if err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a log sink for assertions.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tlsCluster is a name server and a broker (in-memory store) with the given
// TLS settings on their ports, logging at debug level into logs.
type tlsCluster struct {
	ns   *namesrv.Server
	b    *broker.Broker
	nsr  primitive.NsResolver
	logs *syncBuffer
}

func startTLSCluster(t *testing.T, nsTLS, brokerTLS remoting.TLSConfig) *tlsCluster {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ncfg := namesrv.DefaultConfig()
	ncfg.Remoting.Addr = "127.0.0.1:0"
	ncfg.Remoting.TLS = nsTLS
	ncfg.Logger = log.With("server", "namesrv")
	ns := namesrv.New(ncfg)
	if err := ns.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ns.Shutdown(context.Background()) })

	bcfg := broker.DefaultConfig()
	bcfg.ListenAddr = "127.0.0.1:0"
	bcfg.NamesrvAddrs = []string{ns.Addr()}
	bcfg.Remoting.TLS = brokerTLS
	bcfg.Logger = log.With("server", "broker")
	if nsTLS.Enabled() {
		conf, err := remoting.TLSClientConfig{}.Load()
		if err != nil {
			t.Fatal(err)
		}
		bcfg.NamesrvTLS = conf
	}
	b, err := broker.New(bcfg, broker.WithStore(memstore.New()))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	return &tlsCluster{ns: ns, b: b, nsr: primitive.NewPassthroughResolver([]string{ns.Addr()}), logs: logs}
}

// createTopic creates topic on the broker with brokerlab's own client
// (over TLS when conf is set) and waits for its route.
func (c *tlsCluster) createTopic(t *testing.T, topic string, conf *remoting.TLSClientConfig) {
	t.Helper()
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	if conf != nil {
		tc, err := conf.Load()
		if err != nil {
			t.Fatal(err)
		}
		ccfg.TLS = tc
	}
	rc := remoting.NewClient(ccfg)
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := remoting.NewRequest(protocol.ReqUpdateAndCreateTopic,
		remoting.ExtFields{"topic": topic, "readQueueNums": "2", "writeQueueNums": "2", "perm": "6"})
	resp, err := rc.InvokeSync(ctx, c.b.Addr(), req)
	if err != nil || resp.Code != protocol.RespSuccess {
		t.Fatalf("create topic %s: %v %v", topic, resp, err)
	}
	waitUntil(t, "route of "+topic, 10*time.Second, func() bool { _, ok := c.ns.TopicRoute(topic); return ok })
}

// officialRoundTrip sends n messages with the official producer and
// receives them with its push consumer, TLS switched as given.
func officialRoundTrip(t *testing.T, c *tlsCluster, useTLS bool, topic string, n int) {
	t.Helper()
	setOfficialTLS(t, useTLS)
	rec := newReceived()
	pc, err := consumer.NewPushConsumer(consumer.WithNsResolver(c.nsr), consumer.WithGroupName("tls_cg_"+topic),
		consumer.WithInstance(uniqueInstance("tls-c")), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithTls(useTLS))
	if err != nil {
		t.Fatal(err)
	}
	err = pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range ms {
				rec.add("c", m)
			}
			return consumer.ConsumeSuccess, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("start consumer: %v", err)
	}
	defer func() { _ = pc.Shutdown() }()
	p, err := producer.NewDefaultProducer(producer.WithNsResolver(c.nsr), producer.WithGroupName("tls_pg_"+topic),
		producer.WithInstanceName(uniqueInstance("tls-p")), producer.WithRetry(2), producer.WithTls(useTLS))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("start producer: %v", err)
	}
	defer func() { _ = p.Shutdown() }()
	acked := sendSync(t, p, topic, "T", bodies(topic, n), 1)
	if len(acked) != n {
		t.Fatalf("%d of %d sends acknowledged", len(acked), n)
	}
	waitUntil(t, "every message delivered", deliverLimit, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.count) == n
	})
}

// officialSendFails makes one SendSync of the official producer (TLS
// switched as given), fails the test if it succeeds, and returns its error.
func officialSendFails(t *testing.T, c *tlsCluster, useTLS bool, topic string) error {
	t.Helper()
	setOfficialTLS(t, useTLS)
	p, err := producer.NewDefaultProducer(producer.WithNsResolver(c.nsr), producer.WithGroupName("tls_fail_pg"),
		producer.WithInstanceName(uniqueInstance("tls-fail")), producer.WithRetry(0),
		producer.WithSendMsgTimeout(2*time.Second), producer.WithTls(useTLS))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		return err
	}
	defer func() { _ = p.Shutdown() }()
	res, err := p.SendSync(context.Background(), msg(topic, "refused", "T"))
	if err == nil && res.Status == primitive.SendOK {
		t.Fatalf("send succeeded: %v", res)
	}
	return err
}

func serverPKI(t *testing.T) (*tlstest.CA, tlstest.Leaf) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, dir, "compat")
	return ca, ca.Issue(t, dir, "server", tlstest.Opts{})
}

// Permissive (RocketMQ's default): the official client with TLS and without
// both work against the same name server and broker.
func TestTLSOfficialClientPermissive(t *testing.T) {
	t.Cleanup(func() { setOfficialTLS(t, false) })
	_, leaf := serverPKI(t)
	mode := remoting.TLSConfig{Mode: remoting.TLSPermissive, CertFile: leaf.CertFile, KeyFile: leaf.KeyFile}
	c := startTLSCluster(t, mode, mode)
	c.createTopic(t, "TlsPermissive", nil)
	c.createTopic(t, "TlsPermissivePlain", nil)

	officialRoundTrip(t, c, true, "TlsPermissive", 20)
	// Both servers upgraded the official client's connections.
	for _, server := range []string{"namesrv", "broker"} {
		if !loggedTLSConn(c.logs.String(), server) {
			t.Fatalf("%s logged no TLS connection:\n%s", server, c.logs.String())
		}
	}
	officialRoundTrip(t, c, false, "TlsPermissivePlain", 20)
}

// loggedTLSConn reports whether server logged an upgraded connection.
func loggedTLSConn(logs, server string) bool {
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `msg="remoting: TLS connection"`) && strings.Contains(line, "server="+server) {
			return true
		}
	}
	return false
}

// Enforcing: the official client with TLS works; without, it is refused,
// the connection closed and the refusal logged.
func TestTLSOfficialClientEnforcing(t *testing.T) {
	t.Cleanup(func() { setOfficialTLS(t, false) })
	_, leaf := serverPKI(t)
	mode := remoting.TLSConfig{Mode: remoting.TLSEnforcing, CertFile: leaf.CertFile, KeyFile: leaf.KeyFile}
	c := startTLSCluster(t, mode, mode)
	c.createTopic(t, "TlsEnforcing", &remoting.TLSClientConfig{})

	officialRoundTrip(t, c, true, "TlsEnforcing", 20)
	if err := officialSendFails(t, c, false, "TlsEnforcing"); err == nil {
		t.Fatal("plaintext send: no error")
	}
	waitUntil(t, "refusal logged", 10*time.Second, func() bool {
		return strings.Contains(c.logs.String(), "refusing plaintext connection")
	})
}

// A broker that requires client certificates refuses the official client,
// which presents none; brokerlab's client with a certificate from the
// trusted CA gets in.
func TestTLSOfficialClientWithoutCertificateRefused(t *testing.T) {
	t.Cleanup(func() { setOfficialTLS(t, false) })
	ca, leaf := serverPKI(t)
	nsMode := remoting.TLSConfig{Mode: remoting.TLSEnforcing, CertFile: leaf.CertFile, KeyFile: leaf.KeyFile}
	brMode := nsMode
	brMode.CAFile, brMode.ClientAuth = ca.File, remoting.ClientAuthRequire
	c := startTLSCluster(t, nsMode, brMode)
	client := ca.Issue(t, t.TempDir(), "client", tlstest.Opts{})
	c.createTopic(t, "TlsClientAuth", &remoting.TLSClientConfig{CertFile: client.CertFile, KeyFile: client.KeyFile,
		CAFile: ca.File, VerifyServer: true})

	if err := officialSendFails(t, c, true, "TlsClientAuth"); err == nil {
		t.Fatal("send without a client certificate: no error")
	}
	waitUntil(t, "handshake failure logged", 10*time.Second, func() bool {
		for _, line := range strings.Split(c.logs.String(), "\n") {
			if strings.Contains(line, "TLS handshake failed") && strings.Contains(line, "didn't provide a certificate") {
				return true
			}
		}
		return false
	})
}

// Optional client certificates: the official client, which sends none, is
// served.
func TestTLSOfficialClientOptionalClientAuth(t *testing.T) {
	t.Cleanup(func() { setOfficialTLS(t, false) })
	ca, leaf := serverPKI(t)
	mode := remoting.TLSConfig{Mode: remoting.TLSEnforcing, CertFile: leaf.CertFile, KeyFile: leaf.KeyFile,
		CAFile: ca.File, ClientAuth: remoting.ClientAuthOptional}
	c := startTLSCluster(t, mode, mode)
	c.createTopic(t, "TlsOptional", &remoting.TLSClientConfig{})
	officialRoundTrip(t, c, true, "TlsOptional", 10)
}

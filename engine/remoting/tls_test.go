package remoting

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting/tlstest"
)

// codeWhoAmI answers with how the server sees the connection: ext "tls"
// ("true"/"false") and "peer" (the client certificate's common name).
const codeWhoAmI int32 = 9010

func whoAmI(_ context.Context, c *Conn, _ *Command) (*Command, error) {
	resp := NewResponse(protocol.RespSuccess, "")
	resp.ExtFields = ExtFields{"tls": "false"}
	if tc, ok := c.nc.(*tlsConn); ok {
		resp.ExtFields["tls"] = "true"
		if st := tc.ConnectionState(); len(st.PeerCertificates) > 0 {
			resp.ExtFields["peer"] = st.PeerCertificates[0].Subject.CommonName
		}
	}
	return resp, nil
}

// pki is a CA with a server and a client certificate, and a second CA
// nobody trusts with a client certificate of its own.
type pki struct {
	dir            string
	ca, rogue      *tlstest.CA
	server, client tlstest.Leaf
	rogueClient    tlstest.Leaf
}

func newPKI(t *testing.T) *pki {
	dir := t.TempDir()
	p := &pki{dir: dir, ca: tlstest.NewCA(t, dir, "test"), rogue: tlstest.NewCA(t, dir, "rogue")}
	p.server = p.ca.Issue(t, dir, "server", tlstest.Opts{})
	p.client = p.ca.Issue(t, dir, "client", tlstest.Opts{})
	p.rogueClient = p.rogue.Issue(t, dir, "rogue-client", tlstest.Opts{})
	return p
}

func startTLSServer(t *testing.T, tc TLSConfig) *testServer {
	t.Helper()
	return startTestServer(t, func(c *ServerConfig) { c.TLS = tc }, func(ts *testServer) {
		ts.RegisterProcessor(codeWhoAmI, ProcessorFunc(whoAmI), nil)
	})
}

// tlsClient is a client with c loaded. Its certificate, if any, is sent
// whatever CAs the server asks for (crypto/tls would send nothing when its
// certificate's issuer is not among them), so the server's check is tested.
func tlsClient(t *testing.T, c TLSClientConfig) *Client {
	t.Helper()
	conf, err := c.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(conf.Certificates) > 0 {
		cert := conf.Certificates[0]
		conf.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	}
	cfg := DefaultClientConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.TLS = conf
	// The dial timeout covers the handshake; under -race on two busy cores a
	// handshake can take longer than the 3 s default, so the test's own 10 s
	// request deadline (ask) is the limit here, not the product default.
	cfg.DialTimeout = 10 * time.Second
	cl := NewClient(cfg)
	t.Cleanup(func() { cl.Close() })
	return cl
}

// ask invokes codeWhoAmI and returns the answer or the error.
func ask(cl *Client, addr string) (ExtFields, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.InvokeSync(ctx, addr, NewRequest(codeWhoAmI, nil))
	if err != nil {
		return nil, err
	}
	return resp.ExtFields, nil
}

func mustAsk(t *testing.T, cl *Client, addr string) ExtFields {
	t.Helper()
	ext, err := ask(cl, addr)
	if err != nil {
		t.Fatalf("request over %s: %v", addr, err)
	}
	return ext
}

func TestTLSPermissiveServesTLSAndPlaintext(t *testing.T) {
	p := newPKI(t)
	ts := startTLSServer(t, TLSConfig{Mode: TLSPermissive, CertFile: p.server.CertFile, KeyFile: p.server.KeyFile})
	plain := newTestClient(t, nil)
	if ext := mustAsk(t, plain, ts.Addr()); ext["tls"] != "false" {
		t.Fatalf("plaintext client served as tls=%s", ext["tls"])
	}
	secure := tlsClient(t, TLSClientConfig{CAFile: p.ca.File, VerifyServer: true})
	if ext := mustAsk(t, secure, ts.Addr()); ext["tls"] != "true" {
		t.Fatalf("TLS client served as tls=%s", ext["tls"])
	}
	// Many requests on both connections at once: framing survives the upgrade.
	errc := make(chan error, 200)
	for i := range 200 {
		cl := plain
		if i%2 == 0 {
			cl = secure
		}
		go func() {
			req := NewRequest(codeEcho, ExtFields{"i": strings.Repeat("x", i)})
			req.Body = make([]byte, i*100)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			resp, err := cl.InvokeSync(ctx, ts.Addr(), req)
			if err == nil && (len(resp.Body) != i*100 || len(resp.ExtFields["i"]) != i) {
				err = errors.New("echo mismatch")
			}
			errc <- err
		}()
	}
	for range 200 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

func TestTLSEnforcingRefusesPlaintext(t *testing.T) {
	p := newPKI(t)
	ts := startTLSServer(t, TLSConfig{Mode: TLSEnforcing, CertFile: p.server.CertFile, KeyFile: p.server.KeyFile})

	// A raw plaintext request: no answer, the connection is closed.
	for range 3 {
		nc, err := net.Dial("tcp", ts.Addr())
		if err != nil {
			t.Fatal(err)
		}
		frame, err := AppendFrame(nil, NewRequest(codeEcho, nil), SerializeJSON)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(frame); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, nc)
		nc.Close()
	}
	if _, err := ask(newTestClient(t, nil), ts.Addr()); err == nil {
		t.Fatal("plaintext client served by an enforcing server")
	}
	// One log line for the four refusals (rate-limited).
	waitFor(t, "refusal log line", func() bool { return strings.Contains(ts.logs.String(), "refusing plaintext connection") })
	if n := strings.Count(ts.logs.String(), "refusing plaintext connection"); n != 1 {
		t.Fatalf("%d refusal log lines for 4 refusals, want 1 (rate-limited):\n%s", n, ts.logs.String())
	}
	if ts.ConnCount() != 0 {
		t.Fatalf("%d connections open after refusals", ts.ConnCount())
	}
	secure := tlsClient(t, TLSClientConfig{CAFile: p.ca.File, VerifyServer: true})
	if ext := mustAsk(t, secure, ts.Addr()); ext["tls"] != "true" {
		t.Fatalf("TLS client served as tls=%s", ext["tls"])
	}
}

func TestTLSDisabledRefusesHandshake(t *testing.T) {
	ts := startTLSServer(t, TLSConfig{Mode: TLSDisabled})
	if _, err := ask(tlsClient(t, TLSClientConfig{}), ts.Addr()); err == nil {
		t.Fatal("TLS client served by a TLS-disabled server")
	}
	if ext := mustAsk(t, newTestClient(t, nil), ts.Addr()); ext["tls"] != "false" {
		t.Fatal("plaintext not served while disabled")
	}
}

func TestTLSEphemeralCertificate(t *testing.T) {
	for _, mode := range []TLSMode{TLSPermissive, TLSEnforcing} {
		t.Run(string(mode), func(t *testing.T) {
			ts := startTLSServer(t, TLSConfig{Mode: mode})
			// Like the official Go client: no verification of the server.
			if ext := mustAsk(t, tlsClient(t, TLSClientConfig{}), ts.Addr()); ext["tls"] != "true" {
				t.Fatal("not served over TLS")
			}
			// A verifying client refuses the self-signed certificate.
			_, err := ask(tlsClient(t, TLSClientConfig{VerifyServer: true}), ts.Addr())
			var unknown x509.UnknownAuthorityError
			if !errors.As(err, &unknown) {
				t.Fatalf("verifying client against the ephemeral certificate: %v, want an unknown authority", err)
			}
		})
	}
}

func TestTLSClientAuth(t *testing.T) {
	p := newPKI(t)
	expired := p.ca.Issue(t, p.dir, "expired-client", tlstest.Opts{
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	for _, tc := range []struct {
		auth    TLSClientAuth
		cert    *tlstest.Leaf
		ok      bool
		wantErr string // in the server's log
	}{
		{ClientAuthRequire, nil, false, "client didn't provide a certificate"},
		{ClientAuthRequire, &p.client, true, ""},
		{ClientAuthRequire, &p.rogueClient, false, "unknown authority"},
		{ClientAuthRequire, &expired, false, "expired"},
		{ClientAuthOptional, nil, true, ""},
		{ClientAuthOptional, &p.client, true, ""},
		{ClientAuthOptional, &p.rogueClient, false, "unknown authority"},
		{ClientAuthNone, &p.rogueClient, true, ""},
	} {
		name := string(tc.auth) + "/"
		if tc.cert == nil {
			name += "no-cert"
		} else {
			name += tc.cert.Cert.Subject.CommonName
		}
		t.Run(name, func(t *testing.T) {
			ts := startTLSServer(t, TLSConfig{Mode: TLSEnforcing, CertFile: p.server.CertFile, KeyFile: p.server.KeyFile,
				CAFile: p.ca.File, ClientAuth: tc.auth})
			cc := TLSClientConfig{CAFile: p.ca.File, VerifyServer: true}
			if tc.cert != nil {
				cc.CertFile, cc.KeyFile = tc.cert.CertFile, tc.cert.KeyFile
			}
			ext, err := ask(tlsClient(t, cc), ts.Addr())
			if !tc.ok {
				if err == nil {
					t.Fatal("served")
				}
				waitFor(t, "handshake failure log", func() bool { return strings.Contains(ts.logs.String(), "TLS handshake failed") })
				if !strings.Contains(ts.logs.String(), tc.wantErr) {
					t.Fatalf("server log lacks %q:\n%s", tc.wantErr, ts.logs.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if tc.cert != nil && tc.auth != ClientAuthNone {
				want = tc.cert.Cert.Subject.CommonName
			}
			if ext["peer"] != want {
				t.Fatalf("server saw client certificate %q, want %q", ext["peer"], want)
			}
		})
	}
}

func TestTLSServerCertificateChecked(t *testing.T) {
	p := newPKI(t)
	expired := p.ca.Issue(t, p.dir, "expired-server", tlstest.Opts{
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	wrongCA := p.rogue.Issue(t, p.dir, "rogue-server", tlstest.Opts{})
	for name, leaf := range map[string]tlstest.Leaf{"expired": expired, "wrong-ca": wrongCA} {
		t.Run(name, func(t *testing.T) {
			ts := startTLSServer(t, TLSConfig{Mode: TLSEnforcing, CertFile: leaf.CertFile, KeyFile: leaf.KeyFile})
			_, err := ask(tlsClient(t, TLSClientConfig{CAFile: p.ca.File, VerifyServer: true}), ts.Addr())
			var invalid x509.CertificateInvalidError
			var unknown x509.UnknownAuthorityError
			switch {
			case name == "expired" && errors.As(err, &invalid) && invalid.Reason == x509.Expired:
			case name == "wrong-ca" && errors.As(err, &unknown):
			default:
				t.Fatalf("client against the %s server certificate: %v", name, err)
			}
		})
	}
}

func TestTLSMinimumVersion(t *testing.T) {
	p := newPKI(t)
	ts := startTLSServer(t, TLSConfig{Mode: TLSPermissive, CertFile: p.server.CertFile, KeyFile: p.server.KeyFile})
	nc, err := tls.Dial("tcp", ts.Addr(), &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11})
	if err == nil {
		nc.Close()
		t.Fatal("TLS 1.1 handshake accepted")
	}
	nc, err = tls.Dial("tcp", ts.Addr(), &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS 1.2: %v", err)
	}
	nc.Close()
}

// serverCN is the common name of the certificate a fresh connection sees.
func serverCN(t *testing.T, addr string) string {
	t.Helper()
	nc, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	return nc.ConnectionState().PeerCertificates[0].Subject.CommonName
}

func TestTLSReloadsChangedCertificate(t *testing.T) {
	p := newPKI(t)
	leaf := p.ca.Issue(t, p.dir, "live", tlstest.Opts{CommonName: "first"})
	ts := startTLSServer(t, TLSConfig{Mode: TLSPermissive, CertFile: leaf.CertFile, KeyFile: leaf.KeyFile})
	if cn := serverCN(t, ts.Addr()); cn != "first" {
		t.Fatalf("served %q, want first", cn)
	}
	// Keep a connection open across the reload: it must keep working.
	cl := tlsClient(t, TLSClientConfig{CAFile: p.ca.File, VerifyServer: true})
	mustAsk(t, cl, ts.Addr())

	bump := func() { // a new mtime even on coarse-grained file systems
		later := time.Now().Add(time.Duration(len(ts.logs.String())+1) * time.Second)
		for _, f := range []string{leaf.CertFile, leaf.KeyFile} {
			if err := os.Chtimes(f, later, later); err != nil {
				t.Fatal(err)
			}
		}
	}
	p.ca.Issue(t, p.dir, "live", tlstest.Opts{CommonName: "second"})
	bump()
	if cn := serverCN(t, ts.Addr()); cn != "second" {
		t.Fatalf("after the files changed the server still serves %q", cn)
	}
	if !strings.Contains(ts.logs.String(), "TLS certificate files reloaded") {
		t.Fatal("reload not logged")
	}
	mustAsk(t, cl, ts.Addr())

	// A broken file (half-written) keeps the last good pair and is logged.
	if err := os.WriteFile(leaf.CertFile, []byte("-----BEGIN CERTIFICATE-----\ngarbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	bump()
	if cn := serverCN(t, ts.Addr()); cn != "second" {
		t.Fatalf("after a broken file the server serves %q, want the previous second", cn)
	}
	if !strings.Contains(ts.logs.String(), "do not load") {
		t.Fatalf("broken certificate file not logged:\n%s", ts.logs.String())
	}
	p.ca.Issue(t, p.dir, "live", tlstest.Opts{CommonName: "third"})
	bump()
	if cn := serverCN(t, ts.Addr()); cn != "third" {
		t.Fatalf("after the files were repaired the server serves %q, want third", cn)
	}
}

func TestTLSShutdownClosesPendingHandshakes(t *testing.T) {
	ts := startTLSServer(t, TLSConfig{Mode: TLSPermissive})
	// A client that connects and says nothing sits in the peek.
	nc, err := net.Dial("tcp", ts.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// Wait until the listener has accepted it: a connection still in the
	// kernel's accept queue is reset when the listening socket closes, which
	// is not the path under test.
	tl, ok := ts.ln.(*tlsListener)
	if !ok {
		t.Fatalf("permissive server listens with %T, want *tlsListener", ts.ln)
	}
	waitFor(t, "the connection in the listener's handshake set", func() bool {
		tl.mu.Lock()
		defer tl.mu.Unlock()
		return len(tl.mu.pending) == 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ts.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a pending handshake: %v", err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("pending connection after shutdown: read %v, want EOF", err)
	}
}

func TestTLSHandshakeTimeout(t *testing.T) {
	ts := startTLSServer(t, TLSConfig{Mode: TLSEnforcing, HandshakeTimeout: 50 * time.Millisecond})
	nc, err := net.Dial("tcp", ts.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// The first byte of a handshake record, then nothing.
	if _, err := nc.Write([]byte{tlsRecordHandshake}); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("stalled handshake: read %v, want EOF once the handshake timeout passed", err)
	}
	waitFor(t, "handshake failure log", func() bool { return strings.Contains(ts.logs.String(), "TLS handshake failed") })
}

// The wait for the first byte is the idle timeout, not the handshake's.
func TestTLSFirstByteWaitsIdleTimeout(t *testing.T) {
	ts := startTestServer(t, func(c *ServerConfig) {
		c.TLS = TLSConfig{Mode: TLSPermissive, HandshakeTimeout: 20 * time.Millisecond}
		c.IdleTimeout = time.Second // far beyond the pause below, also on a loaded machine
	}, nil)
	// Silent past the handshake timeout, then a plaintext request: served.
	nc, err := net.Dial("tcp", ts.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	time.Sleep(200 * time.Millisecond) // 10× the handshake timeout
	frame, err := AppendFrame(nil, NewRequest(codeEcho, ExtFields{"k": "v"}), SerializeJSON)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(frame); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := ReadFrame(nc, DefaultMaxFrameBytes)
	if err != nil || resp.ExtFields["k"] != "v" {
		t.Fatalf("request after a pause: %v %v", resp, err)
	}
	// Silent past the idle timeout: closed.
	silent, err := net.Dial("tcp", ts.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	_ = silent.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("silent connection: read %v, want EOF after the idle timeout", err)
	}
}

// Closing a TLS connection never waits on a peer that stopped reading
// (crypto/tls would spend up to 5 s writing close_notify to it).
func TestTLSCloseDoesNotWaitForPeer(t *testing.T) {
	cert, err := selfSignedCert(nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe() // synchronous: a write blocks until the other end reads
	srv := tls.Server(a, &tls.Config{Certificates: []tls.Certificate{cert}})
	// TLS 1.2: nothing is left to write once the handshake is done (1.3
	// servers send session tickets after it).
	cli := tls.Client(b, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12})
	errc := make(chan error, 1)
	go func() { errc <- cli.Handshake() }()
	if err := srv.Handshake(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		_ = (&tlsConn{Conn: srv}).Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(4 * time.Second):
		t.Fatal("Close blocked on a peer that does not read")
	}
	b.Close()
}

func TestTLSConfigValidation(t *testing.T) {
	p := newPKI(t)
	for _, tc := range []struct {
		name string
		cfg  TLSConfig
	}{
		{"unknown mode", TLSConfig{Mode: "strict"}},
		{"unknown client auth", TLSConfig{Mode: TLSPermissive, ClientAuth: "always"}},
		{"cert without key", TLSConfig{Mode: TLSPermissive, CertFile: p.server.CertFile}},
		{"require without CA", TLSConfig{Mode: TLSEnforcing, ClientAuth: ClientAuthRequire}},
		{"missing cert file", TLSConfig{Mode: TLSEnforcing, CertFile: p.dir + "/nope.pem", KeyFile: p.server.KeyFile}},
		{"key of another cert", TLSConfig{Mode: TLSEnforcing, CertFile: p.server.CertFile, KeyFile: p.client.KeyFile}},
		{"CA file without certificates", TLSConfig{Mode: TLSEnforcing, CAFile: p.server.KeyFile, ClientAuth: ClientAuthRequire}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultServerConfig()
			cfg.Logger = slog.New(slog.DiscardHandler)
			cfg.TLS = tc.cfg
			s := NewServer(cfg)
			err := s.Start(context.Background())
			if err == nil {
				_ = s.Shutdown(context.Background())
				t.Fatal("started")
			}
			if !errors.Is(err, ErrBadTLSConfig) {
				t.Fatalf("error %v is not ErrBadTLSConfig", err)
			}
		})
	}
	for in, want := range map[string]TLSMode{"disabled": TLSDisabled, "Permissive": TLSPermissive, " enforcing": TLSEnforcing} {
		if got, err := ParseTLSMode(in); err != nil || got != want {
			t.Errorf("ParseTLSMode(%q) = %q, %v", in, got, err)
		}
	}
	for in, want := range map[string]TLSClientAuth{"": ClientAuthNone, "NONE": ClientAuthNone, "optional": ClientAuthOptional, "require": ClientAuthRequire} {
		if got, err := ParseTLSClientAuth(in); err != nil || got != want {
			t.Errorf("ParseTLSClientAuth(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := (TLSClientConfig{CertFile: p.client.CertFile}).Load(); !errors.Is(err, ErrBadTLSConfig) {
		t.Errorf("client cert without key: %v", err)
	}
}

func TestRateLimiter(t *testing.T) {
	r := rateLimiter{every: time.Second}
	t0 := time.Unix(1000, 0)
	if _, ok := r.allow(t0); !ok {
		t.Fatal("first event suppressed")
	}
	for i := range 3 {
		if _, ok := r.allow(t0.Add(time.Duration(i+1) * 100 * time.Millisecond)); ok {
			t.Fatal("event within the interval let through")
		}
	}
	if n, ok := r.allow(t0.Add(time.Second)); !ok || n != 3 {
		t.Fatalf("after the interval: allowed %v with %d suppressed, want true and 3", ok, n)
	}
}

// The client CA file is watched too: a client of a newly trusted CA gets in
// once the file changes, without a restart.
func TestTLSReloadsChangedCA(t *testing.T) {
	p := newPKI(t)
	caFile := p.dir + "/trusted.pem"
	copyFile := func(from string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(caFile, b, 0o600); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(caFile, later, later); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(p.ca.File)
	ts := startTLSServer(t, TLSConfig{Mode: TLSEnforcing, CertFile: p.server.CertFile, KeyFile: p.server.KeyFile,
		CAFile: caFile, ClientAuth: ClientAuthRequire})
	rogue := TLSClientConfig{CertFile: p.rogueClient.CertFile, KeyFile: p.rogueClient.KeyFile}
	if _, err := ask(tlsClient(t, rogue), ts.Addr()); err == nil {
		t.Fatal("client of an untrusted CA served")
	}
	copyFile(p.rogue.File)
	if ext, err := ask(tlsClient(t, rogue), ts.Addr()); err != nil || ext["peer"] != "rogue-client" {
		t.Fatalf("client of the newly trusted CA: %v %v", ext, err)
	}
	if _, err := ask(tlsClient(t, TLSClientConfig{CertFile: p.client.CertFile, KeyFile: p.client.KeyFile}), ts.Addr()); err == nil {
		t.Fatal("client of the CA no longer trusted still served")
	}
}

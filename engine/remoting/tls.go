package remoting

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// Sentinel errors of the TLS configuration.
var (
	ErrBadTLSConfig = errors.New("remoting: bad TLS configuration")
	// ErrTLSRequired marks a plaintext connection refused by an enforcing server.
	ErrTLSRequired = errors.New("remoting: plaintext connection refused (tls.server.mode enforcing)")
)

// TLSMode is tls.server.mode.
//
// TLS on the remoting ports follows RocketMQ's TlsSystemConfig: one port
// serves both plaintext and TLS, and the server's mode decides which it
// accepts (tls.server.mode):
//
//	disabled    plaintext only; nothing is peeked and a TLS ClientHello fails
//	            as a bad frame (its first byte 0x16 announces a >16 MiB frame)
//	permissive  RocketMQ's default: the first byte of each connection is
//	            peeked; 0x16 (a TLS handshake record) upgrades it to TLS,
//	            anything else is served as plaintext
//	enforcing   TLS only: a connection whose first byte is not 0x16 is
//	            closed, with one rate-limited log line
//
// Peeking uses recv(MSG_PEEK) where available, so a plaintext connection in
// permissive mode is the unwrapped TCP socket (writev and all). Handshakes run
// on their own goroutines, never on the accept loop.
//
// TLS is 1.2 or newer with crypto/tls's default cipher suites and curves.
// The certificate, key and client CA files are re-read when their size or
// modification time changes, checked at every handshake; a change that does
// not load (a half-written file) keeps the previous pair and is logged.
type TLSMode string

// The server TLS modes.
const (
	TLSDisabled   TLSMode = "disabled"
	TLSPermissive TLSMode = "permissive"
	TLSEnforcing  TLSMode = "enforcing"
)

// ParseTLSMode parses "disabled", "permissive" or "enforcing". Unlike
// RocketMQ, which falls back to permissive, an unknown mode is an error.
func ParseTLSMode(s string) (TLSMode, error) {
	switch m := TLSMode(strings.ToLower(strings.TrimSpace(s))); m {
	case TLSDisabled, TLSPermissive, TLSEnforcing:
		return m, nil
	}
	return "", fmt.Errorf("%w: tls mode %q: want disabled, permissive or enforcing", ErrBadTLSConfig, s)
}

// TLSClientAuth is tls.server.need.client.auth.
type TLSClientAuth string

// The client-certificate policies.
const (
	ClientAuthNone     TLSClientAuth = "none"     // no client certificate asked for
	ClientAuthOptional TLSClientAuth = "optional" // verified against CAFile if the client sends one
	ClientAuthRequire  TLSClientAuth = "require"  // required and verified against CAFile
)

// ParseTLSClientAuth parses "none", "optional" or "require" (any case).
func ParseTLSClientAuth(s string) (TLSClientAuth, error) {
	switch a := TLSClientAuth(strings.ToLower(strings.TrimSpace(s))); a {
	case ClientAuthNone, ClientAuthOptional, ClientAuthRequire:
		return a, nil
	case "":
		return ClientAuthNone, nil
	}
	return "", fmt.Errorf("%w: client auth %q: want none, optional or require", ErrBadTLSConfig, s)
}

// TLSConfig is a server's TLS setting. The zero value is disabled.
type TLSConfig struct {
	// Mode: "" means disabled.
	Mode TLSMode
	// CertFile and KeyFile are the server's PEM certificate chain and
	// unencrypted PEM private key (tls.server.certPath, tls.server.keyPath).
	// With neither set, the server makes an ephemeral self-signed ECDSA
	// certificate at Start, as RocketMQ's tls.test.mode.enable does (clients
	// that verify the server will refuse it).
	CertFile, KeyFile string
	// CAFile holds the PEM certificates client certificates are verified
	// against (tls.server.trustCertPath); required for optional and require.
	CAFile string
	// ClientAuth: "" means none.
	ClientAuth TLSClientAuth
	// HandshakeTimeout bounds the TLS handshake once its first byte arrived
	// (10 s when 0); the wait for the first byte is the server's IdleTimeout.
	HandshakeTimeout time.Duration
}

// DefaultTLSHandshakeTimeout bounds a TLS handshake.
const DefaultTLSHandshakeTimeout = 10 * time.Second

// Enabled reports whether the mode accepts TLS connections.
func (c TLSConfig) Enabled() bool { return c.Mode == TLSPermissive || c.Mode == TLSEnforcing }

// Validate checks the mode, the policy and that files come in pairs.
func (c TLSConfig) Validate() error {
	if c.Mode != "" {
		if _, err := ParseTLSMode(string(c.Mode)); err != nil {
			return err
		}
	}
	auth, err := ParseTLSClientAuth(string(c.ClientAuth))
	if err != nil {
		return err
	}
	if !c.Enabled() {
		return nil
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return fmt.Errorf("%w: the certificate and the key are given together", ErrBadTLSConfig)
	}
	if auth != ClientAuthNone && c.CAFile == "" {
		return fmt.Errorf("%w: client auth %s needs a CA file to verify client certificates against", ErrBadTLSConfig, auth)
	}
	return nil
}

// fileStamp identifies one version of a file.
type fileStamp struct {
	size  int64
	mtime time.Time
}

func stampOf(path string) (fileStamp, error) {
	if path == "" {
		return fileStamp{}, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{size: fi.Size(), mtime: fi.ModTime()}, nil
}

// serverTLS hands every handshake the current *tls.Config, rebuilt when the
// certificate, key or CA file changed. Safe for concurrent use.
type serverTLS struct {
	cfg       TLSConfig
	log       *slog.Logger
	ephemeral *tls.Certificate // set when no files are configured
	warn      rateLimiter

	mu     sync.Mutex
	stamps [3]fileStamp // cert, key, CA
	cur    *tls.Config
}

// newServerTLS loads the files (or makes the ephemeral certificate); hosts
// go into the ephemeral certificate's names.
func newServerTLS(cfg TLSConfig, log *slog.Logger, hosts []string) (*serverTLS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &serverTLS{cfg: cfg, log: log, warn: rateLimiter{every: 10 * time.Second}}
	if cfg.CertFile == "" {
		cert, err := selfSignedCert(hosts, time.Now())
		if err != nil {
			return nil, fmt.Errorf("%w: ephemeral certificate: %w", ErrBadTLSConfig, err)
		}
		s.ephemeral = &cert
		log.Info("remoting: TLS uses an ephemeral self-signed certificate (no certificate file given); clients that verify the server will refuse it")
	}
	stamps, conf, err := s.load()
	if err != nil {
		return nil, err
	}
	s.stamps, s.cur = stamps, conf
	return s, nil
}

// config returns the *tls.Config for one handshake (tls.Config.GetConfigForClient).
func (s *serverTLS) config() *tls.Config {
	if s.ephemeral != nil && s.cfg.CAFile == "" {
		return s.cur // nothing on disk to watch
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var now [3]fileStamp
	for i, p := range []string{s.cfg.CertFile, s.cfg.KeyFile, s.cfg.CAFile} {
		st, err := stampOf(p)
		if err != nil {
			s.warnReload(err)
			return s.cur
		}
		now[i] = st
	}
	if now == s.stamps {
		return s.cur
	}
	stamps, conf, err := s.load()
	if err != nil {
		s.warnReload(err)
		return s.cur
	}
	// stamps were taken before reading: a file changed while it was read
	// differs from them at the next handshake, which loads it again.
	s.stamps, s.cur = stamps, conf
	s.log.Info("remoting: TLS certificate files reloaded", "cert", s.cfg.CertFile, "ca", s.cfg.CAFile)
	return conf
}

func (s *serverTLS) warnReload(err error) {
	if n, ok := s.warn.allow(time.Now()); ok {
		s.log.Warn("remoting: TLS files changed but do not load; serving the previous certificate", "err", err, "suppressed", n)
	}
}

// load reads the files into a fresh config and returns the stamps they had
// before they were read.
func (s *serverTLS) load() ([3]fileStamp, *tls.Config, error) {
	var stamps [3]fileStamp
	for i, p := range []string{s.cfg.CertFile, s.cfg.KeyFile, s.cfg.CAFile} {
		st, err := stampOf(p)
		if err != nil {
			return stamps, nil, fmt.Errorf("%w: %w", ErrBadTLSConfig, err)
		}
		stamps[i] = st
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.ephemeral != nil {
		conf.Certificates = []tls.Certificate{*s.ephemeral}
	} else {
		cert, err := tls.LoadX509KeyPair(s.cfg.CertFile, s.cfg.KeyFile)
		if err != nil {
			return stamps, nil, fmt.Errorf("%w: certificate %s, key %s: %w", ErrBadTLSConfig, s.cfg.CertFile, s.cfg.KeyFile, err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	if s.cfg.CAFile != "" {
		pool, err := loadCertPool(s.cfg.CAFile)
		if err != nil {
			return stamps, nil, err
		}
		conf.ClientCAs = pool
	}
	switch auth, _ := ParseTLSClientAuth(string(s.cfg.ClientAuth)); auth {
	case ClientAuthOptional:
		conf.ClientAuth = tls.VerifyClientCertIfGiven
	case ClientAuthRequire:
		conf.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		conf.ClientAuth = tls.NoClientCert
	}
	return stamps, conf, nil
}

// tlsConfig is the listener's config: every handshake asks config().
func (s *serverTLS) tlsConfig() *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return s.config(), nil },
	}
}

// loadCertPool reads PEM certificates into a pool.
func loadCertPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: CA file: %w", ErrBadTLSConfig, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", ErrBadTLSConfig, path)
	}
	return pool, nil
}

// selfSignedCert makes a P-256 certificate for hosts (names or IPs, plus
// localhost and the loopback addresses), valid from an hour before now for a year.
func selfSignedCert(hosts []string, now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "brokerlab ephemeral"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !ip.IsUnspecified() && !ip.IsLoopback() {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
		} else if h != "" && h != "localhost" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// rateLimiter lets one event through per interval and counts the rest.
type rateLimiter struct {
	every time.Duration

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// allow reports whether to log now, and how many events were suppressed
// since the last one logged.
func (r *rateLimiter) allow(now time.Time) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.last.IsZero() && now.Sub(r.last) < r.every {
		r.suppressed++
		return 0, false
	}
	n := r.suppressed
	r.last, r.suppressed = now, 0
	return n, true
}

package remoting

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// TLSClientConfig is the client side of RocketMQ's TLS settings
// (tls.enable with the tls.client.* keys), turned into a *tls.Config for
// ClientConfig.TLS by Load.
type TLSClientConfig struct {
	// CertFile and KeyFile are a PEM client certificate and unencrypted key
	// for servers that ask for one (tls.client.certPath, tls.client.keyPath).
	CertFile, KeyFile string
	// CAFile holds the PEM certificates the server's is verified against
	// (tls.client.trustCertPath); empty = the system roots.
	CAFile string
	// VerifyServer checks the server's certificate chain and name
	// (tls.client.authServer). Off, any server certificate is accepted, as
	// RocketMQ's clients do by default and the official Go client always does.
	VerifyServer bool
	// ServerName is checked against the certificate; empty = the dialed host.
	ServerName string
}

// Load reads the files into a TLS 1.2+ client config.
func (c TLSClientConfig) Load() (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName, InsecureSkipVerify: !c.VerifyServer}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, fmt.Errorf("%w: the client certificate and key are given together", ErrBadTLSConfig)
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: client certificate %s, key %s: %w", ErrBadTLSConfig, c.CertFile, c.KeyFile, err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	if c.CAFile != "" {
		pool, err := loadCertPool(c.CAFile)
		if err != nil {
			return nil, err
		}
		conf.RootCAs = pool
	}
	return conf, nil
}

// clientHandshake runs the TLS handshake on a freshly dialed nc, within
// timeout when it is positive. The
// certificate is checked against addr's host unless conf names a server or
// skips verification.
func clientHandshake(ctx context.Context, nc net.Conn, addr string, conf *tls.Config, timeout time.Duration) (net.Conn, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if conf.ServerName == "" && !conf.InsecureSkipVerify {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		conf = conf.Clone()
		conf.ServerName = host
	}
	tc := tls.Client(nc, conf)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("remoting: TLS handshake with %s: %w", addr, err)
	}
	return &tlsConn{Conn: tc}, nil
}

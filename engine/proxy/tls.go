package proxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"

	"github.com/brokerlab/brokerlab/engine/remoting"
)

// serverTLS builds the gRPC port's TLS config from the remoting TLS settings:
// the certificate files, or an ephemeral self-signed certificate for the
// listen host (RocketMQ's tls.test.mode.enable); a CA file and client-auth
// policy verify client certificates.
func serverTLS(cfg remoting.TLSConfig, listen string) (*tls.Config, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	if !cfg.Enabled() {
		cfg = remoting.TLSConfig{} // no files: the ephemeral certificate, no client auth
	}
	var cert tls.Certificate
	var err error
	if cfg.CertFile != "" {
		cert, err = tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
	} else {
		host, _, _ := net.SplitHostPort(listen)
		cert, err = selfSigned(host)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: certificate: %w", ErrBadConfig, err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2"}}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: no certificate in %s", ErrBadConfig, cfg.CAFile)
		}
		tc.ClientCAs = pool
	}
	switch cfg.ClientAuth {
	case remoting.ClientAuthRequire:
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	case remoting.ClientAuthOptional:
		tc.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return tc, nil
}

func selfSigned(host string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: "brokerlab grpc proxy"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	} else if host != "" && ip == nil {
		tmpl.DNSNames = append(tmpl.DNSNames, host)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

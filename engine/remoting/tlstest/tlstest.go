// Package tlstest makes certificate authorities and certificates at test
// time (ECDSA P-256, PEM files in a directory) for the TLS tests of the
// remoting server, the broker, the CLI and the official-client compat suite.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a self-signed certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// File is the CA certificate as PEM, for a trusted-CA setting.
	File string
}

// Leaf is an issued certificate and its key as PEM files.
type Leaf struct {
	Cert     *x509.Certificate
	CertFile string
	KeyFile  string
}

// Opts shape an issued certificate. Zero times mean "valid from an hour ago
// for a day".
type Opts struct {
	CommonName string
	NotBefore  time.Time
	NotAfter   time.Time
}

// NewCA makes a CA named cn and writes its certificate to dir/<cn>-ca.pem.
func NewCA(t testing.TB, dir, cn string) *CA {
	t.Helper()
	key := newKey(t)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, cn+"-ca.pem")
	writePEM(t, file, "CERTIFICATE", der)
	return &CA{Cert: cert, Key: key, File: file}
}

// Issue signs a certificate usable by servers and clients, for localhost,
// 127.0.0.1 and ::1, and writes dir/<name>.pem and dir/<name>-key.pem
// (replacing them atomically if they exist).
func (ca *CA) Issue(t testing.TB, dir, name string, o Opts) Leaf {
	t.Helper()
	key := newKey(t)
	now := time.Now()
	if o.NotBefore.IsZero() {
		o.NotBefore = now.Add(-time.Hour)
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = now.Add(24 * time.Hour)
	}
	if o.CommonName == "" {
		o.CommonName = name
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: o.CommonName},
		NotBefore:    o.NotBefore,
		NotAfter:     o.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	l := Leaf{Cert: cert, CertFile: filepath.Join(dir, name+".pem"), KeyFile: filepath.Join(dir, name+"-key.pem")}
	writePEM(t, l.KeyFile, "PRIVATE KEY", keyDER)
	writePEM(t, l.CertFile, "CERTIFICATE", der)
	return l
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// writePEM writes one PEM block through a temporary file and a rename.
func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"crypto/tls"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/engine/remoting"
)

// tlsFlags are the TLS settings of the broker and the name server: the
// server side of the listen port, and (broker only) the client side of the
// registration with the name servers.
type tlsFlags struct {
	mode, cert, key, ca, clientAuth string

	enable                          bool
	clientCert, clientKey, clientCA string
	verifyServer                    bool
}

// tlsFile holds the same settings in the broker config file under
// RocketMQ's property names (TlsSystemConfig).
type tlsFile struct {
	Mode           string `yaml:"tls.server.mode"`
	CertPath       string `yaml:"tls.server.certPath"`
	KeyPath        string `yaml:"tls.server.keyPath"`
	TrustCertPath  string `yaml:"tls.server.trustCertPath"`
	NeedClientAuth string `yaml:"tls.server.need.client.auth"`

	Enable              *bool  `yaml:"tls.enable"`
	ClientCertPath      string `yaml:"tls.client.certPath"`
	ClientKeyPath       string `yaml:"tls.client.keyPath"`
	ClientTrustCertPath string `yaml:"tls.client.trustCertPath"`
	ClientAuthServer    *bool  `yaml:"tls.client.authServer"`
}

// addServerTLSFlags registers the listen port's TLS flags.
func addServerTLSFlags(cmd *cobra.Command, f *tlsFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "tls-mode", string(remoting.TLSPermissive),
		"TLS on the listen port: disabled, permissive (TLS and plaintext, detected per connection) or enforcing (TLS only)")
	fl.StringVar(&f.cert, "tls-cert", "", "server certificate chain, PEM (default: an ephemeral self-signed certificate)")
	fl.StringVar(&f.key, "tls-key", "", "server private key, unencrypted PEM (with --tls-cert)")
	fl.StringVar(&f.ca, "tls-ca", "", "CA certificates, PEM, that client certificates are verified against")
	fl.StringVar(&f.clientAuth, "tls-client-auth", string(remoting.ClientAuthNone),
		"client certificates: none, optional (verified if sent) or require (needs --tls-ca)")
}

// addClientTLSFlags registers the flags of the broker's connections to the
// name servers.
func addClientTLSFlags(cmd *cobra.Command, f *tlsFlags) {
	fl := cmd.Flags()
	fl.BoolVar(&f.enable, "tls-enable", false, "register with the name servers over TLS")
	fl.StringVar(&f.clientCert, "tls-client-cert", "", "client certificate, PEM, presented to name servers that ask for one")
	fl.StringVar(&f.clientKey, "tls-client-key", "", "client private key, unencrypted PEM (with --tls-client-cert)")
	fl.StringVar(&f.clientCA, "tls-client-ca", "", "CA certificates, PEM, that name servers' certificates are verified against (implies --tls-verify-server)")
	fl.BoolVar(&f.verifyServer, "tls-verify-server", false, "verify the name servers' certificates (default: accept any, as RocketMQ clients do)")
}

// server merges the file under the flags set on the command line into the
// listen port's TLS config. An empty mode is permissive, RocketMQ's default.
func (f tlsFlags) server(changed func(string) bool, file tlsFile) (remoting.TLSConfig, error) {
	pick := func(flag, fromFile, flagValue string) string {
		if fromFile != "" && !changed(flag) {
			return fromFile
		}
		return flagValue
	}
	mode := pick("tls-mode", file.Mode, f.mode)
	if mode == "" {
		mode = string(remoting.TLSPermissive)
	}
	m, err := remoting.ParseTLSMode(mode)
	if err != nil {
		return remoting.TLSConfig{}, fmt.Errorf("--tls-mode: %w", err)
	}
	auth, err := remoting.ParseTLSClientAuth(pick("tls-client-auth", file.NeedClientAuth, f.clientAuth))
	if err != nil {
		return remoting.TLSConfig{}, fmt.Errorf("--tls-client-auth: %w", err)
	}
	cfg := remoting.TLSConfig{
		Mode:       m,
		CertFile:   pick("tls-cert", file.CertPath, f.cert),
		KeyFile:    pick("tls-key", file.KeyPath, f.key),
		CAFile:     pick("tls-ca", file.TrustCertPath, f.ca),
		ClientAuth: auth,
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("tls: %w", err)
	}
	return cfg, nil
}

// client is the broker's TLS config toward the name servers, nil unless
// --tls-enable (tls.enable).
func (f tlsFlags) client(changed func(string) bool, file tlsFile) (*tls.Config, error) {
	pick := func(flag, fromFile, flagValue string) string {
		if fromFile != "" && !changed(flag) {
			return fromFile
		}
		return flagValue
	}
	pickBool := func(flag string, fromFile *bool, flagValue bool) bool {
		if fromFile != nil && !changed(flag) {
			return *fromFile
		}
		return flagValue
	}
	if !pickBool("tls-enable", file.Enable, f.enable) {
		return nil, nil
	}
	c := remoting.TLSClientConfig{
		CertFile:     pick("tls-client-cert", file.ClientCertPath, f.clientCert),
		KeyFile:      pick("tls-client-key", file.ClientKeyPath, f.clientKey),
		CAFile:       pick("tls-client-ca", file.ClientTrustCertPath, f.clientCA),
		VerifyServer: pickBool("tls-verify-server", file.ClientAuthServer, f.verifyServer),
	}
	if c.CAFile != "" {
		c.VerifyServer = true
	}
	conf, err := c.Load()
	if err != nil {
		return nil, fmt.Errorf("tls client: %w", err)
	}
	return conf, nil
}

package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/engine/remoting"
)

// tlsFlags are the TLS settings of the broker and the name server: the
// server side of the listen port, and (broker only) the client side of the
// registration with the name servers.
type tlsFlags struct {
	configFile                      string // RocketMQ's tls.config.file (properties)
	mode, cert, key, ca, clientAuth string

	enable                          bool
	clientCert, clientKey, clientCA string
	verifyServer                    bool
}

// tlsFile holds the same settings in the broker config file, or in a
// RocketMQ tls.properties file (--tls-config-file), under RocketMQ's
// property names (TlsSystemConfig).
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
	fl.StringVar(&f.configFile, "tls-config-file", "",
		"RocketMQ tls.properties file (tls.server.*, tls.client.*, tls.enable keys); flags and the broker --config override it")
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
	file, err := f.withProperties(file)
	if err != nil {
		return remoting.TLSConfig{}, err
	}
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
	c, enable, err := f.clientSpec(changed, file)
	if err != nil || !enable {
		return nil, err
	}
	conf, err := c.Load()
	if err != nil {
		return nil, fmt.Errorf("tls client: %w", err)
	}
	return conf, nil
}

// clientSpec merges the file under the flags set on the command line into
// the name-server side's TLS settings and whether they are on (tls.enable).
func (f tlsFlags) clientSpec(changed func(string) bool, file tlsFile) (remoting.TLSClientConfig, bool, error) {
	file, err := f.withProperties(file)
	if err != nil {
		return remoting.TLSClientConfig{}, false, err
	}
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
	c := remoting.TLSClientConfig{
		CertFile:     pick("tls-client-cert", file.ClientCertPath, f.clientCert),
		KeyFile:      pick("tls-client-key", file.ClientKeyPath, f.clientKey),
		CAFile:       pick("tls-client-ca", file.ClientTrustCertPath, f.clientCA),
		VerifyServer: pickBool("tls-verify-server", file.ClientAuthServer, f.verifyServer),
	}
	if c.CAFile != "" {
		c.VerifyServer = true
	}
	return c, pickBool("tls-enable", file.Enable, f.enable), nil
}

// withProperties fills what file leaves unset from --tls-config-file.
func (f tlsFlags) withProperties(file tlsFile) (tlsFile, error) {
	if f.configFile == "" {
		return file, nil
	}
	raw, err := os.ReadFile(f.configFile)
	if err != nil {
		return file, fmt.Errorf("--tls-config-file: %w", err)
	}
	props, err := parseTLSProperties(raw)
	if err != nil {
		return file, fmt.Errorf("--tls-config-file %s: %w", f.configFile, err)
	}
	for _, p := range []struct{ dst, src *string }{
		{&file.Mode, &props.Mode}, {&file.CertPath, &props.CertPath}, {&file.KeyPath, &props.KeyPath},
		{&file.TrustCertPath, &props.TrustCertPath}, {&file.NeedClientAuth, &props.NeedClientAuth},
		{&file.ClientCertPath, &props.ClientCertPath}, {&file.ClientKeyPath, &props.ClientKeyPath},
		{&file.ClientTrustCertPath, &props.ClientTrustCertPath},
	} {
		if *p.dst == "" {
			*p.dst = *p.src
		}
	}
	if file.Enable == nil {
		file.Enable = props.Enable
	}
	if file.ClientAuthServer == nil {
		file.ClientAuthServer = props.ClientAuthServer
	}
	return file, nil
}

// parseTLSProperties reads a Java properties file of RocketMQ's TLS keys:
// "key=value" or "key: value" lines, "#" and "!" comments. Unknown keys are
// errors, as in --config; tls.test.mode.enable and tls.server.authClient are
// accepted and have no effect (without certificate files the server always
// uses an ephemeral certificate; a client certificate that is asked for is
// always verified against the CA), and key passwords are refused (encrypted
// private keys are not supported).
func parseTLSProperties(raw []byte) (tlsFile, error) {
	var p tlsFile
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			return p, fmt.Errorf("line %d: want key=value", n)
		}
		key, val := strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:])
		parseBool := func() (*bool, error) {
			b, err := strconv.ParseBool(val)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s=%q: want true or false", n, key, val)
			}
			return &b, nil
		}
		var err error
		switch key {
		case "tls.server.mode":
			p.Mode = val
		case "tls.server.certPath":
			p.CertPath = val
		case "tls.server.keyPath":
			p.KeyPath = val
		case "tls.server.trustCertPath":
			p.TrustCertPath = val
		case "tls.server.need.client.auth":
			p.NeedClientAuth = val
		case "tls.enable":
			p.Enable, err = parseBool()
		case "tls.client.certPath":
			p.ClientCertPath = val
		case "tls.client.keyPath":
			p.ClientKeyPath = val
		case "tls.client.trustCertPath":
			p.ClientTrustCertPath = val
		case "tls.client.authServer":
			p.ClientAuthServer, err = parseBool()
		case "tls.test.mode.enable", "tls.server.authClient":
			_, err = parseBool()
		case "tls.server.keyPassword", "tls.client.keyPassword":
			if val != "" {
				err = fmt.Errorf("line %d: %s: encrypted private keys are not supported (decrypt it: openssl pkey -in KEY -out PLAIN)", n, key)
			}
		default:
			err = fmt.Errorf("line %d: unknown key %q", n, key)
		}
		if err != nil {
			return p, err
		}
	}
	if err := sc.Err(); err != nil {
		return p, err
	}
	return p, nil
}

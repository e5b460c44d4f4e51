package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/remoting/tlstest"
)

// parsedBrokerConfig parses args as the broker command does and returns
// the TLS settings brokerConfig made of them.
func parsedBrokerConfig(t *testing.T, args ...string) (tlsCfg remoting.TLSConfig, nsTLS bool, err error) {
	t.Helper()
	cmd, f := brokerCommand()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	bcfg, _, err := brokerConfig(cmd, *f)
	return bcfg.Remoting.TLS, bcfg.NamesrvTLS != nil, err
}

func TestBrokerTLSSettings(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, dir, "cli")
	leaf := ca.Issue(t, dir, "broker", tlstest.Opts{})

	// Defaults: RocketMQ's permissive mode, no client certificates, plaintext registration.
	got, nsTLS, err := parsedBrokerConfig(t, "--store", dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Mode != remoting.TLSPermissive || got.ClientAuth != remoting.ClientAuthNone || got.CertFile != "" || nsTLS {
		t.Fatalf("defaults: %+v, namesrv TLS %v", got, nsTLS)
	}

	// The config file under RocketMQ's names.
	file := filepath.Join(dir, "broker.yaml")
	yaml := "store:\n  dir: " + dir + "\n" +
		"tls.server.mode: enforcing\n" +
		"tls.server.certPath: " + leaf.CertFile + "\n" +
		"tls.server.keyPath: " + leaf.KeyFile + "\n" +
		"tls.server.trustCertPath: " + ca.File + "\n" +
		"tls.server.need.client.auth: require\n" +
		"tls.enable: true\n" +
		"tls.client.certPath: " + leaf.CertFile + "\n" +
		"tls.client.keyPath: " + leaf.KeyFile + "\n" +
		"tls.client.trustCertPath: " + ca.File + "\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	got, nsTLS, err = parsedBrokerConfig(t, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	want := remoting.TLSConfig{Mode: remoting.TLSEnforcing, CertFile: leaf.CertFile, KeyFile: leaf.KeyFile, CAFile: ca.File,
		ClientAuth: remoting.ClientAuthRequire}
	if got != want || !nsTLS {
		t.Fatalf("from the file: %+v (namesrv TLS %v), want %+v", got, nsTLS, want)
	}
	// Flags override the file.
	got, nsTLS, err = parsedBrokerConfig(t, "--config", file, "--tls-mode", "permissive", "--tls-client-auth", "optional", "--tls-enable=false")
	if err != nil {
		t.Fatal(err)
	}
	if got.Mode != remoting.TLSPermissive || got.ClientAuth != remoting.ClientAuthOptional || got.CertFile != leaf.CertFile || nsTLS {
		t.Fatalf("flags over the file: %+v, namesrv TLS %v", got, nsTLS)
	}

	// A RocketMQ tls.properties file, under the YAML file's keys and the flags.
	props := filepath.Join(dir, "tls.properties")
	propsText := "# RocketMQ tls.properties\n" +
		"tls.test.mode.enable=false\n" +
		"tls.server.need.client.auth = optional\n" +
		"tls.server.keyPath=" + leaf.KeyFile + "\n" +
		"tls.server.certPath: " + leaf.CertFile + "\n" +
		"tls.server.authClient=false\n" +
		"tls.server.trustCertPath=" + ca.File + "\n" +
		"tls.client.authServer=true\n" +
		"tls.client.trustCertPath=" + ca.File + "\n" +
		"tls.enable=true\n"
	if err := os.WriteFile(props, []byte(propsText), 0o644); err != nil {
		t.Fatal(err)
	}
	got, nsTLS, err = parsedBrokerConfig(t, "--store", dir, "--tls-config-file", props, "--tls-mode", "enforcing")
	if err != nil {
		t.Fatal(err)
	}
	want = remoting.TLSConfig{Mode: remoting.TLSEnforcing, CertFile: leaf.CertFile, KeyFile: leaf.KeyFile, CAFile: ca.File,
		ClientAuth: remoting.ClientAuthOptional}
	if got != want || !nsTLS {
		t.Fatalf("from tls.properties: %+v (namesrv TLS %v), want %+v", got, nsTLS, want)
	}
	// The YAML file's keys win over the properties file's.
	got, _, err = parsedBrokerConfig(t, "--config", file, "--tls-config-file", props)
	if err != nil {
		t.Fatal(err)
	}
	if got.ClientAuth != remoting.ClientAuthRequire {
		t.Fatalf("--config under --tls-config-file: client auth %s, want the YAML file's require", got.ClientAuth)
	}
	for name, text := range map[string]string{
		"unknown key":  "tls.server.modus=enforcing\n",
		"key password": "tls.server.keyPassword=secret\n",
		"bad bool":     "tls.enable=maybe\n",
		"no separator": "tls.enable\n",
	} {
		bad := filepath.Join(dir, "bad.properties")
		if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := parsedBrokerConfig(t, "--store", dir, "--tls-config-file", bad); err == nil || !strings.Contains(err.Error(), "--tls-config-file") {
			t.Errorf("%s: error %v, want a --tls-config-file error", name, err)
		}
	}

	for _, bad := range [][]string{
		{"--store", dir, "--tls-mode", "strict"},
		{"--store", dir, "--tls-client-auth", "always"},
		{"--store", dir, "--tls-client-auth", "require"}, // no CA
		{"--store", dir, "--tls-cert", leaf.CertFile},    // no key
		{"--store", dir, "--tls-enable", "--tls-client-ca", filepath.Join(dir, "missing.pem")},
	} {
		if _, _, err := parsedBrokerConfig(t, bad...); err == nil || !strings.Contains(err.Error(), "tls") {
			t.Errorf("%v: error %v, want a tls error", bad, err)
		}
	}
}

// A TLS-enforcing name server (configured by a tls.properties file) and
// broker (by flags), run as processes: the broker
// registers over TLS with its client certificate, a TLS client is served by
// both, and a plaintext one is refused with a log line.
func TestTLSProcesses(t *testing.T) {
	t.Parallel() // a process test: its own ports and directories
	bin := cliBinary(t)
	dir := t.TempDir()
	ca := tlstest.NewCA(t, dir, "procs")
	srv := ca.Issue(t, dir, "server", tlstest.Opts{})
	cli := ca.Issue(t, dir, "client", tlstest.Opts{})
	serverTLS := []string{"--tls-mode", "enforcing", "--tls-cert", srv.CertFile, "--tls-key", srv.KeyFile,
		"--tls-ca", ca.File, "--tls-client-auth", "require"}

	// The name server reads the same settings from a RocketMQ tls.properties.
	props := filepath.Join(dir, "tls.properties")
	propsText := "tls.server.mode=enforcing\ntls.server.certPath=" + srv.CertFile + "\ntls.server.keyPath=" + srv.KeyFile +
		"\ntls.server.trustCertPath=" + ca.File + "\ntls.server.need.client.auth=require\n"
	if err := os.WriteFile(props, []byte(propsText), 0o644); err != nil {
		t.Fatal(err)
	}
	ns := start(t, bin, "namesrv", "--listen", "127.0.0.1:0", "--tls-config-file", props)
	nsAddr := ns.listenAddr(t)
	br := start(t, bin, append([]string{"broker", "--namesrv", nsAddr, "--listen", "127.0.0.1:0", "--store", t.TempDir(),
		"--segment-size", "8MiB", "--name", "broker-tls", "--tls-enable", "--tls-client-ca", ca.File,
		"--tls-client-cert", cli.CertFile, "--tls-client-key", cli.KeyFile}, serverTLS...)...)
	addr := br.listenAddr(t)

	conf, err := remoting.TLSClientConfig{CertFile: cli.CertFile, KeyFile: cli.KeyFile, CAFile: ca.File, VerifyServer: true}.Load()
	if err != nil {
		t.Fatal(err)
	}
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = slog.New(slog.DiscardHandler)
	ccfg.TLS = conf
	c := remoting.NewClient(ccfg)
	defer c.Close()
	create := remoting.ExtFields{"topic": "TlsT", "readQueueNums": "1", "writeQueueNums": "1", "perm": "6"}
	if resp := call(t, c, addr, protocol.ReqUpdateAndCreateTopic, create, nil); resp.Code != protocol.RespSuccess {
		t.Fatalf("create topic over TLS: %v", resp)
	}
	deadline := time.Now().Add(procLimit)
	for {
		rd, err := namesrv.GetRouteInfo(context.Background(), c, nsAddr, "TlsT")
		if err == nil && rd.BrokerDatas[0].BrokerName == "broker-tls" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("route never appeared over TLS: %v\nbroker log:\n%s", err, br.log())
		}
		time.Sleep(20 * time.Millisecond)
	}

	ccfg.TLS = nil
	plain := remoting.NewClient(ccfg)
	defer plain.Close()
	for _, a := range []string{nsAddr, addr} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := plain.InvokeSync(ctx, a, remoting.NewRequest(protocol.ReqGetBrokerClusterInfo, nil))
		cancel()
		if err == nil {
			t.Fatalf("plaintext request served by the enforcing server at %s", a)
		}
	}
	for _, p := range []*proc{ns, br} {
		deadline := time.Now().Add(procLimit)
		for !strings.Contains(p.log(), "refusing plaintext connection") {
			if time.Now().After(deadline) {
				t.Fatalf("no refusal logged:\n%s", p.log())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if code := br.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("broker exit code %d:\n%s", code, br.log())
	}
	if code := ns.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("namesrv exit code %d:\n%s", code, ns.log())
	}
}

package main

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func resolveNamesrvArgs(t *testing.T, args ...string) (namesrvSetup, error) {
	t.Helper()
	cmd, f := namesrvCommand()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("flags %v: %v", args, err)
	}
	return resolveNamesrv(cmd, *f)
}

// namesrv.properties maps onto the name server's config; unknown keys are
// named; flags win; --print-config reads back to the same configuration.
func TestNamesrvConf(t *testing.T) {
	conf := filepath.Join(rmqConf, "namesrv.properties")
	s, err := resolveNamesrvArgs(t, "-c", conf)
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.Remoting.Addr != "0.0.0.0:19876" || s.cfg.ScanInterval != 5*time.Second {
		t.Fatalf("config: addr %s scan %v", s.cfg.Remoting.Addr, s.cfg.ScanInterval)
	}
	if len(s.warnings) != 3 || !strings.Contains(s.warnings[0], "line 4: unknown key rocketmqHome=/opt/rocketmq") {
		t.Fatalf("warnings %q", s.warnings)
	}
	if s, err = resolveNamesrvArgs(t, "-c", conf, "--listen", "127.0.0.1:0"); err != nil || s.cfg.Remoting.Addr != "127.0.0.1:0" {
		t.Fatalf("--listen lost: %v %s", err, s.cfg.Remoting.Addr)
	}
	bad := writeConf(t, "ns.properties", "listenPort=70000\n")
	if _, err := resolveNamesrvArgs(t, "-c", bad); err == nil || !strings.Contains(err.Error(), "listenPort") {
		t.Fatalf("listenPort=70000: %v", err)
	}

	var out bytes.Buffer
	root := newRoot()
	root.SetOut(&out)
	root.SetArgs([]string{"namesrv", "-c", conf, "--print-config", "--tls-mode", "enforcing"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	first, err := resolveNamesrvArgs(t, "-c", conf, "--tls-mode", "enforcing")
	if err != nil {
		t.Fatal(err)
	}
	again, err := resolveNamesrvArgs(t, "-c", writeConf(t, "printed.properties", out.String()))
	if err != nil || len(again.warnings) != 0 {
		t.Fatalf("printed config: %v %q\n%s", err, again.warnings, out.String())
	}
	if a, b := namesrvProps(first), namesrvProps(again); !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip differs:\n%v\n%v", a, b)
	}
}

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBrokerConfigReplyKeys: the --config file switches SQL92 filtering and
// reply storage under RocketMQ's key names; both default to on.
func TestBrokerConfigReplyKeys(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "broker.yaml")
	load := func(yaml string) (bool, bool) {
		t.Helper()
		if err := os.WriteFile(file, []byte(yaml+"store:\n  dir: "+dir+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := newBrokerCmd()
		if err := cmd.ParseFlags([]string{"--config", file}); err != nil {
			t.Fatal(err)
		}
		f := brokerFlags{configFile: file, name: "broker-a", cluster: "DefaultCluster", listen: "127.0.0.1:10911",
			namesrv: "127.0.0.1:9876", writePath: "mmap", flushKind: "async", segmentSize: "1GiB"}
		bcfg, _, err := brokerConfig(cmd, f)
		if err != nil {
			t.Fatal(err)
		}
		return bcfg.EnablePropertyFilter, bcfg.StoreReplyMessage
	}
	if sql, store := load(""); !sql || !store {
		t.Fatalf("defaults: enablePropertyFilter %v storeReplyMessageEnable %v", sql, store)
	}
	if sql, store := load("enablePropertyFilter: false\nstoreReplyMessageEnable: false\n"); sql || store {
		t.Fatalf("switched off: enablePropertyFilter %v storeReplyMessageEnable %v", sql, store)
	}
}

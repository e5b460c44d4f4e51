package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBrokerConfigTransactionKeys: the --config file sets the transaction
// check knobs under RocketMQ's key names, and a bad duration is refused.
func TestBrokerConfigTransactionKeys(t *testing.T) {
	dir := t.TempDir()
	load := func(yaml string) error {
		t.Helper()
		file := filepath.Join(dir, "broker.yaml")
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
		if err == nil && (bcfg.TransactionCheckInterval != 5*time.Second || bcfg.TransactionTimeout != 2*time.Second || bcfg.TransactionCheckMax != 3) {
			t.Fatalf("transaction knobs: interval %v timeout %v max %d", bcfg.TransactionCheckInterval, bcfg.TransactionTimeout, bcfg.TransactionCheckMax)
		}
		return err
	}
	if err := load("transactionCheckInterval: 5s\ntransactionTimeOut: 2s\ntransactionCheckMax: 3\n"); err != nil {
		t.Fatal(err)
	}
	if err := load("transactionCheckInterval: 5000\n"); err == nil || !strings.Contains(err.Error(), "transactionCheckInterval") {
		t.Fatalf("a duration without a unit: %v", err)
	}
}

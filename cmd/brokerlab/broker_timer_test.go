package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
)

// TestBrokerConfigTimerKeys: the --config file sets the timer and lite pull
// knobs under RocketMQ's key names; out-of-range values are refused.
func TestBrokerConfigTimerKeys(t *testing.T) {
	dir := t.TempDir()
	load := func(yaml string) (broker.Config, error) {
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
		return bcfg, err
	}
	def := broker.DefaultConfig()
	c, err := load("")
	if err != nil || c.TimerEnable != def.TimerEnable || c.TimerPrecision != time.Second || c.LitePullEnable != true {
		t.Fatalf("defaults: %v, timer %v precision %v lite %v", err, c.TimerEnable, c.TimerPrecision, c.LitePullEnable)
	}
	c, err = load("timerWheelEnable: false\ntimerPrecisionMs: 200\ntimerMaxDelaySec: 3600\ntimerFlushIntervalMs: 500\nlitePullMessageEnable: false\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.TimerEnable || c.TimerPrecision != 200*time.Millisecond || c.TimerMaxDelay != time.Hour ||
		c.TimerFlushInterval != 500*time.Millisecond || c.LitePullEnable {
		t.Fatalf("timer knobs: enable %v precision %v max %v flush %v lite %v",
			c.TimerEnable, c.TimerPrecision, c.TimerMaxDelay, c.TimerFlushInterval, c.LitePullEnable)
	}
	for _, bad := range []string{"timerPrecisionMs: 0\n", "timerPrecisionMs: 5000\n", "timerMaxDelaySec: -1\n", "timerFlushIntervalMs: 0\n"} {
		key := bad[:strings.IndexByte(bad, ':')]
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), key) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

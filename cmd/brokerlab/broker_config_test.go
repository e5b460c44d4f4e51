package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
)

func TestBrokerConfigFileAndFlagOverrides(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "broker.yaml")
	yaml := `name: broker-y
cluster: yc
listen: 127.0.0.1:20911
namesrv: "10.0.0.1:9876;10.0.0.2:9876"
store:
  dir: ` + dir + `
  writePath: pool
  flush: sync
  segmentSize: 64MiB
  flushInterval: 100ms
autoCreateTopic: false
defaultTopicQueueNums: 2
sendWorkers: 3
sendQueueMaxWait: 50ms
maxReconsumeTimes: 5
delayLevels: "1s 2s"
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := newBrokerCmd()
	if err := cmd.ParseFlags([]string{"--config", file, "--flush", "group", "--name", "from-flag"}); err != nil {
		t.Fatal(err)
	}
	var f brokerFlags
	f.configFile, _ = cmd.Flags().GetString("config")
	for name, dst := range map[string]*string{"name": &f.name, "cluster": &f.cluster, "listen": &f.listen, "broker-ip": &f.brokerIP,
		"namesrv": &f.namesrv, "store": &f.storeDir, "write-path": &f.writePath, "flush": &f.flushKind, "segment-size": &f.segmentSize} {
		*dst, _ = cmd.Flags().GetString(name)
	}
	bcfg, scfg, err := brokerConfig(cmd, f)
	if err != nil {
		t.Fatal(err)
	}
	if bcfg.BrokerName != "from-flag" || bcfg.ClusterName != "yc" || bcfg.ListenAddr != "127.0.0.1:20911" {
		t.Fatalf("names/listen: %+v", bcfg)
	}
	if !slices.Equal(bcfg.NamesrvAddrs, []string{"10.0.0.1:9876", "10.0.0.2:9876"}) {
		t.Fatalf("namesrv %v", bcfg.NamesrvAddrs)
	}
	if scfg.Root != dir || scfg.CommitLog.Path != iopath.Pool || scfg.CommitLog.Flush.Kind != flush.Group ||
		scfg.CommitLog.SegmentSize != 64<<20 || scfg.CommitLog.Flush.Interval != 100*time.Millisecond {
		t.Fatalf("store config: root %s path %s flush %s seg %d interval %v", scfg.Root, scfg.CommitLog.Path,
			scfg.CommitLog.Flush.Kind, scfg.CommitLog.SegmentSize, scfg.CommitLog.Flush.Interval)
	}
	if bcfg.AutoCreateTopic || bcfg.DefaultTopicQueueNums != 2 || bcfg.SendWorkers != 3 ||
		bcfg.SendQueueMaxWait != 50*time.Millisecond || bcfg.MaxReconsumeTimes != 5 || len(bcfg.DelayLevels) != 2 {
		t.Fatalf("tunables: %+v", bcfg)
	}

	// JSON works too.
	jsonFile := filepath.Join(dir, "broker.json")
	if err := os.WriteFile(jsonFile, []byte(`{"name":"j","namesrv":["1.2.3.4:9876"],"store":{"dir":"`+dir+`"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = newBrokerCmd()
	_ = cmd.ParseFlags([]string{"--config", jsonFile})
	f = brokerFlags{configFile: jsonFile, name: "broker-a", cluster: "DefaultCluster", listen: "127.0.0.1:10911",
		namesrv: "127.0.0.1:9876", writePath: "mmap", flushKind: "async", segmentSize: "1GiB"}
	bcfg, scfg, err = brokerConfig(cmd, f)
	if err != nil {
		t.Fatal(err)
	}
	if bcfg.BrokerName != "j" || !slices.Equal(bcfg.NamesrvAddrs, []string{"1.2.3.4:9876"}) || scfg.CommitLog.SegmentSize != 1<<30 {
		t.Fatalf("json config: %+v / seg %d", bcfg, scfg.CommitLog.SegmentSize)
	}
}

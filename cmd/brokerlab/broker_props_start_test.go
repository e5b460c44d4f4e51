package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/internal/mqadmin"
)

// runInProcess runs the brokerlab command line args until the returned
// stop is called or the test ends; stop cancels it and waits for a clean
// return.
func runInProcess(t *testing.T, args ...string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	root := newRoot()
	root.SetArgs(args)
	go func() { done <- root.ExecuteContext(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%v: %v", args, err)
				}
			case <-time.After(procLimit):
				t.Errorf("%v did not stop", args)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// freeLoopbackPort is a port nothing listened on a moment ago.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// A name server from namesrv.properties and a broker from RocketMQ's
// 2m-2s-sync broker-a.properties (plus the keys a test host needs: loopback
// addresses, a temporary store, 1 MiB segments) start; the broker registers
// with the configured cluster, name and id, and reports the configured
// role, segment size, flush type and retention over GET_BROKER_CONFIG.
func TestBrokerConfStartsBrokerAndNamesrv(t *testing.T) {
	dir := t.TempDir()
	nsPort := freeLoopbackPort(t)
	nsAddr := "127.0.0.1:" + strconv.Itoa(nsPort)
	nsConf := filepath.Join(dir, "namesrv.properties")
	if err := os.WriteFile(nsConf, []byte("bindAddress=127.0.0.1\nlistenPort="+strconv.Itoa(nsPort)+"\nscanNotActiveBrokerInterval=5000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runInProcess(t, "namesrv", "-c", nsConf, "--log-level", "error")

	sample, err := os.ReadFile(filepath.Join(rmqConf, "2m-2s-sync/broker-a.properties"))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "broker-a.properties")
	extra := "\nnamesrvAddr=" + nsAddr + "\nbindAddress=127.0.0.1\nlistenPort=0\nstorePathRootDir=" + filepath.Join(dir, "store") +
		"\nmapedFileSizeCommitLog=1048576\nwritePath=pwrite\n"
	if err := os.WriteFile(conf, append(sample, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	runInProcess(t, "broker", "-c", conf, "--log-level", "error")

	adm := mqadmin.New(mqadmin.Config{NamesrvAddrs: []string{nsAddr}, Timeout: 2 * time.Second})
	defer adm.Close()
	var addr string
	deadline := time.Now().Add(procLimit)
	for addr == "" {
		if time.Now().After(deadline) {
			t.Fatal("broker-a did not register with the name server")
		}
		ci, err := adm.ClusterInfo(context.Background())
		if err == nil {
			if bd, ok := ci.BrokerAddrTable["broker-a"]; ok && bd.Cluster == "DefaultCluster" {
				addr = bd.BrokerAddrs[0]
			}
		}
		if addr == "" {
			time.Sleep(20 * time.Millisecond)
		}
	}
	cfg, err := adm.BrokerConfig(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"brokerClusterName": "DefaultCluster", "brokerName": "broker-a", "brokerId": "0", "brokerRole": "SYNC_MASTER",
		"mappedFileSizeCommitLog": "1048576", "flushDiskType": "ASYNC_FLUSH", "deleteWhen": "04", "fileReservedTime": "48",
		"diskMaxUsedSpaceRatio": "75", "writePath": "pwrite", "storePathRootDir": filepath.Join(dir, "store"),
	} {
		if cfg[k] != want {
			t.Errorf("GET_BROKER_CONFIG %s = %q, want %q", k, cfg[k], want)
		}
	}
	info, err := adm.RuntimeInfo(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"commitLogDiskRatio", "consumeQueueDiskRatio", "commitLogDiskRatio_" + filepath.Join(dir, "store", "commitlog")} {
		if r, err := strconv.ParseFloat(info[k], 64); err != nil || r < 0 || r > 1 {
			t.Errorf("runtime info %s = %q", k, info[k])
		}
	}
}

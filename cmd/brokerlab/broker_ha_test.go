package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

// TestSyncMasterKill9: a SYNC_MASTER with asynchronous flush and its slave
// as separate processes; producers send until the master is killed with
// SIGKILL. Every send the master acknowledged (SEND_OK) is in the slave's
// store, byte for byte: durability by replication, not by fsync.
func TestSyncMasterKill9(t *testing.T) {
	t.Parallel() // a process test: its own ports and directories
	bin := cliBinary(t)
	ns := start(t, bin, "namesrv", "--listen", "127.0.0.1:0")
	nsAddr := ns.listenAddr(t)
	common := []string{"--namesrv", nsAddr, "--listen", "127.0.0.1:0", "--flush", "async", "--segment-size", "1MiB",
		"--broker-name", "broker-k", "--cluster", "ck"}
	master := start(t, bin, append([]string{"broker", "--store", t.TempDir(), "--role", "SYNC_MASTER", "--ha-listen", "127.0.0.1:0"}, common...)...)
	maddr := master.listenAddr(t)
	slaveDir := t.TempDir()
	slave := start(t, bin, append([]string{"broker", "--store", slaveDir, "--role", "SLAVE", "--broker-id", "1"}, common...)...)
	slave.listenAddr(t)

	c := remoting.NewClient(remoting.DefaultClientConfig())
	defer c.Close()
	create := remoting.ExtFields{"topic": "KillT", "readQueueNums": "4", "writeQueueNums": "4", "perm": "6"}
	if resp := call(t, c, maddr, protocol.ReqUpdateAndCreateTopic, create, nil); resp.Code != protocol.RespSuccess {
		t.Fatalf("create topic: %v", resp)
	}
	send := func(ctx context.Context, q int32, body []byte) (*remoting.Command, error) {
		h := protocol.SendMessageHeader{ProducerGroup: "pg", Topic: "KillT", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
			QueueID: q, BornTimestamp: time.Now().UnixMilli()}
		req := remoting.NewRequest(protocol.ReqSendMessageV2, h.ExtFields(true))
		req.Body = body
		return c.InvokeSync(ctx, maddr, req)
	}
	// The slave learns the master's HA address at its registration.
	deadline := time.Now().Add(procLimit)
	for {
		resp, err := send(context.Background(), 0, []byte("probe"))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Code == protocol.RespSuccess {
			break
		}
		if resp.Code != protocol.RespSlaveNotAvailable || time.Now().After(deadline) {
			t.Fatalf("probe send: %d %s\nmaster:\n%s\nslave:\n%s", resp.Code, resp.Remark, master.log(), slave.log())
		}
		time.Sleep(50 * time.Millisecond)
	}

	type acked struct {
		phys int64
		body []byte
	}
	var mu sync.Mutex
	var got []acked
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for i := 0; i < 100000; i++ {
				body := make([]byte, 100+rng.IntN(4000))
				for j := range body {
					body[j] = byte(rng.Uint32())
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				resp, err := send(ctx, int32(g), body)
				cancel()
				if err != nil {
					return // the master is gone
				}
				if resp.Code != protocol.RespSuccess {
					continue
				}
				_, phys, err := record.ParseOffsetMsgID(resp.ExtFields["msgId"])
				if err != nil {
					t.Errorf("msgId %q: %v", resp.ExtFields["msgId"], err)
					return
				}
				mu.Lock()
				got = append(got, acked{phys, body})
				mu.Unlock()
			}
		}()
	}
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 400 {
			break
		}
		if time.Now().After(deadline.Add(procLimit)) {
			t.Fatalf("only %d acknowledged sends", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := master.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	master.wait(t)
	wg.Wait()
	if code := slave.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("slave exit code %d:\n%s", code, slave.log())
	}

	cfg := store.DefaultConfig(slaveDir)
	cfg.CommitLog.SegmentSize = 1 << 20
	st, err := store.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mu.Lock()
	defer mu.Unlock()
	for _, a := range got {
		_, rec, err := st.LookMessageByOffset(a.phys)
		if err != nil {
			t.Fatalf("acknowledged message at %d is not on the slave (slave ends at %d): %v", a.phys, st.MaxPhyOffset(), err)
		}
		if !bytes.Equal(rec.Body, a.body) {
			t.Fatalf("slave's message at %d differs", a.phys)
		}
	}
	t.Logf("%d acknowledged sends, all on the slave (%s)", len(got), fmt.Sprint(st.MaxPhyOffset()))
}

// TestBrokerHAFlags: the replication flags and config-file keys reach the
// broker config; flags win over the file; bad values are refused.
func TestBrokerHAFlags(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/broker.yaml"
	if err := os.WriteFile(file, []byte("brokerRole: SLAVE\nbrokerId: 2\nhaMasterAddress: 10.0.0.9:10912\nslaveReadEnable: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	parse := func(args ...string) (broker.Config, error) {
		cmd := newBrokerCmd()
		if err := cmd.ParseFlags(append([]string{"--store", dir}, args...)); err != nil {
			t.Fatal(err)
		}
		var f brokerFlags
		f.configFile, _ = cmd.Flags().GetString("config")
		for name, dst := range map[string]*string{"name": &f.name, "store": &f.storeDir, "write-path": &f.writePath,
			"flush": &f.flushKind, "segment-size": &f.segmentSize, "role": &f.ha.role, "ha-listen": &f.ha.haListen,
			"ha-master": &f.ha.haMaster, "broker-name": &f.ha.brokerName} {
			*dst, _ = cmd.Flags().GetString(name)
		}
		f.ha.brokerID, _ = cmd.Flags().GetInt64("broker-id")
		f.ha.slaveRead, _ = cmd.Flags().GetBool("slave-read")
		f.ha.slaveTimeout, _ = cmd.Flags().GetDuration("slave-timeout")
		bcfg, _, err := brokerConfig(cmd, f)
		return bcfg, err
	}
	c, err := parse("--config", file)
	if err != nil || c.Role != broker.Slave || c.BrokerID != 2 || c.HAMasterAddr != "10.0.0.9:10912" || !c.SlaveReadEnable {
		t.Fatalf("from the file: %+v %v", c, err)
	}
	c, err = parse("--config", file, "--role", "sync_master", "--broker-id", "0", "--ha-listen", "127.0.0.1:0",
		"--broker-name", "broker-z", "--slave-timeout", "500ms")
	if err != nil || c.Role != broker.SyncMaster || c.BrokerID != 0 || c.HA.ListenAddr != "127.0.0.1:0" ||
		c.BrokerName != "broker-z" || c.SlaveTimeout != 500*time.Millisecond {
		t.Fatalf("flags over the file: %+v %v", c, err)
	}
	for _, bad := range [][]string{{"--role", "LEADER"}, {"--role", "SLAVE"}, {"--slave-timeout", "0s"}} {
		if _, err := parse(bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

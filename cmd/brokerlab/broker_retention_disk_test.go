package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/internal/mqadmin"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

// mountTmpfs mounts a size-byte tmpfs (a small real file system: statfs
// reports its use, writes beyond it fail) and unmounts it at cleanup. It
// skips, with the reason, where the test cannot mount.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("mounting a tmpfs needs root; running as uid %d (engine/store's injected-usage tests cover the logic)", os.Geteuid())
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(size, 10), "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("mount -t tmpfs failed (no mount permission in this container?): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
			_ = exec.Command("umount", "-l", mnt).Run()
		}
	})
	return mnt
}

// fillTo appends zeros to ballast until the file system holding it is at
// least ratio full (used / (used + available), as the store measures).
func fillTo(t *testing.T, ballast string, ratio float64) {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(ballast), &st); err != nil {
		t.Fatal(err)
	}
	bs := int64(st.Bsize)
	used, avail := int64(st.Blocks-st.Bfree)*bs, int64(st.Bavail)*bs
	need := int64(ratio*float64(used+avail)) - used + bs
	if need <= 0 {
		return
	}
	f, err := os.OpenFile(ballast, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, need)); err != nil {
		t.Fatalf("ballast of %d bytes: %v", need, err)
	}
}

// On a 64 MiB tmpfs, a broker started from a broker.conf with RocketMQ's
// default ratios: above diskSpaceCleanForciblyRatio (85 %) segments go
// whatever their age (the commit log's min offset moves, sends go on);
// above diskSpaceWarningLevelRatio (90 %) sends are refused with
// SERVICE_NOT_AVAILABLE and the log does not grow; with space back sends
// are accepted again, and the store reopens with no corruption at the
// offset the broker reported.
func TestBrokerConfRetentionOnSmallDisk(t *testing.T) {
	mnt := mountTmpfs(t, 64<<20)
	root := filepath.Join(mnt, "store")
	port := strconv.Itoa(freeLoopbackPort(t))
	addr := "127.0.0.1:" + port
	conf := writeConf(t, "broker.conf", "brokerClusterName=DiskCluster\nbrokerName=broker-d\nbrokerId=0\nbrokerRole=ASYNC_MASTER\n"+
		"flushDiskType=ASYNC_FLUSH\nbindAddress=127.0.0.1\nlistenPort="+port+"\nstorePathRootDir="+root+"\n"+
		"mapedFileSizeCommitLog=1048576\nwritePath=pwrite\ncleanResourceInterval=50\ndeleteWhen=04\nfileReservedTime=72\n"+
		"diskMaxUsedSpaceRatio=75\ndiskSpaceCleanForciblyRatio=85\ndiskSpaceWarningLevelRatio=90\n"+
		"maxHashSlotNum=1000\nmaxIndexNum=4000\n") // the default index file (over 400 MB) does not fit
	stop := runInProcess(t, "broker", "-c", conf, "--namesrv", "", "--log-level", "error")

	ccfg := remoting.DefaultClientConfig()
	cl := remoting.NewClient(ccfg)
	defer cl.Close()
	body := make([]byte, 64<<10)
	send := func() (int32, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h := protocol.SendMessageHeader{ProducerGroup: "diskPG", Topic: "DiskT", DefaultTopic: protocol.DefaultTopic,
			DefaultTopicQueueNums: 1, QueueID: 0, BornTimestamp: time.Now().UnixMilli()}
		req := remoting.NewRequest(protocol.ReqSendMessageV2, h.ExtFields(true))
		req.Body = body
		resp, err := cl.InvokeSync(ctx, addr, req)
		if err != nil {
			return 0, err
		}
		return resp.Code, nil
	}
	adm := mqadmin.New(mqadmin.Config{Timeout: 2 * time.Second})
	defer adm.Close()
	info := func(key string) int64 {
		t.Helper()
		m, err := adm.RuntimeInfo(context.Background(), addr)
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseInt(m[key], 10, 64)
		if err != nil {
			t.Fatalf("runtime info %s = %q", key, m[key])
		}
		return v
	}
	eventually := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	eventually("the broker to accept sends", func() bool { c, err := send(); return err == nil && c == protocol.RespSuccess })
	for range 80 { // about 5 MiB: several 1 MiB segments
		if c, err := send(); err != nil || c != protocol.RespSuccess {
			t.Fatalf("send: %v %s", err, protocol.ResponseCodeName(c))
		}
	}
	if minOff := info("commitLogMinOffset"); minOff != 0 {
		t.Fatalf("min offset %d before any cleaning", minOff)
	}

	// Above 85 %: young segments go all the same; sends are still taken.
	ballast := filepath.Join(mnt, "ballast")
	fillTo(t, ballast, 0.87)
	eventually("forced cleaning to move the min offset", func() bool { return info("commitLogMinOffset") >= 4<<20 })
	if c, err := send(); err != nil || c != protocol.RespSuccess {
		t.Fatalf("send at 87%%: %v %s", err, protocol.ResponseCodeName(c))
	}

	// Above 90 %: refused with SERVICE_NOT_AVAILABLE, nothing appended.
	fillTo(t, ballast, 0.93)
	eventually("sends to be refused", func() bool { c, err := send(); return err == nil && c == protocol.RespServiceNotAvailable })
	maxOff := info("commitLogMaxOffset")
	for range 5 {
		if c, err := send(); err != nil || c != protocol.RespServiceNotAvailable {
			t.Fatalf("send on a full disk: %v %s", err, protocol.ResponseCodeName(c))
		}
	}
	if got := info("commitLogMaxOffset"); got != maxOff {
		t.Fatalf("the log grew from %d to %d on a full disk", maxOff, got)
	}

	// Space back: sends are taken again.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	eventually("sends to be accepted again", func() bool { c, err := send(); return err == nil && c == protocol.RespSuccess })
	maxOff = info("commitLogMaxOffset")
	minOff := info("commitLogMinOffset")
	stop()

	cfg := store.DefaultConfig(root)
	cfg.CommitLog.SegmentSize = 1 << 20
	cfg.CleanInterval = 0
	cfg.Index.MaxHashSlots, cfg.Index.MaxIndexNum = 1000, 4000
	s, err := store.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	if rec := s.Recovery(); rec.Corruption != nil || s.MaxPhyOffset() != maxOff || s.MinPhyOffset() != minOff {
		t.Fatalf("reopened: corruption %v, offsets [%d, %d), broker reported [%d, %d)", rec.Corruption,
			s.MinPhyOffset(), s.MaxPhyOffset(), minOff, maxOff)
	}
}

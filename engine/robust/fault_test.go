package robust

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
)

// Fault injection seen from the wire (issue 7): the store runs over
// faultfs, the broker answers producers with the documented response codes
// (rocketmq-store.md §8.1), stays up, keeps serving earlier messages, and
// after the fault clears a restart on the same store recovers every
// acknowledged message.

// faultBroker starts a broker whose store (path, policy, 64 KiB segments)
// goes through a fault injector.
func faultBroker(t *testing.T, path iopath.Kind, pol flush.Kind, mutate func(*store.Config)) (*brokerEnv, *faultfs.Injector) {
	inj := faultfs.NewInjector(7)
	e := startBroker(t, func(_ *broker.Config, s *store.Config) {
		*s = testStoreConfig(s.Root, path, pol)
		s.FS = faultfs.Wrap(vfs.Default, inj)
		s.CommitLog.SegmentSize = 64 << 10
		s.CommitLog.Flush.LeastPages = 0
		if mutate != nil {
			mutate(s)
		}
	})
	e.createTopic("FAULT", 2)
	return e, inj
}

func segmentsOf(e *brokerEnv) string {
	return commitlog.SegmentDir(e.scfg.Root) + string(filepath.Separator)
}

// ackedSet remembers acknowledged sends by queue and offset.
type ackedSet map[int32]map[int64][]byte

func (a ackedSet) add(t *testing.T, resp *remoting.Command, body []byte) {
	t.Helper()
	q, err1 := resp.ExtFields.Int32("queueId")
	off, err2 := resp.ExtFields.Int64("queueOffset")
	if err1 != nil || err2 != nil {
		t.Fatalf("acknowledgement without queueId/queueOffset: %v", resp.ExtFields)
	}
	if a[q] == nil {
		a[q] = map[int64][]byte{}
	}
	a[q][off] = body
}

// check pulls every queue and finds each acknowledged body at its offset.
func (a ackedSet) check(t *testing.T, e *brokerEnv, topic string) {
	t.Helper()
	for q, offs := range a {
		var want int64
		for off := range offs {
			want = max(want, off+1)
		}
		got := e.pullQueue(e.client, topic, q, want)
		byOff := map[int64][]byte{}
		for _, p := range got {
			byOff[p.offset] = p.body
		}
		for off, body := range offs {
			if !bytes.Equal(byOff[off], body) {
				t.Fatalf("%s/%d@%d: acknowledged %q, served %q", topic, q, off, body, byOff[off])
			}
		}
	}
}

// A failed fdatasync/msync: the send gets SERVICE_NOT_AVAILABLE (14), every
// later send too (the log's error is sticky), pulls of earlier messages
// work; after a restart without the fault every acknowledged message is
// served and sends succeed again. Every write path under group commit.
func TestBrokerFaultFlushError(t *testing.T) {
	t.Parallel()
	for _, path := range iopath.Kinds() {
		t.Run("path="+string(path), func(t *testing.T) {
			t.Parallel()
			e, inj := faultBroker(t, path, flush.Group, nil)
			acked := ackedSet{}
			for i := 0; i < 20; i++ {
				body := []byte(fmt.Sprintf("before-%d", i))
				resp := e.send("FAULT", int32(i%2), "", body)
				wantCode(t, "send before the fault", resp, protocol.RespSuccess)
				acked.add(t, resp, body)
			}
			op := vfs.OpSync
			if path == iopath.Mmap {
				op = vfs.OpMsync
			}
			inj.Add(faultfs.Rule{Op: op, PathContains: segmentsOf(e), Err: syscall.EIO})
			resp := e.send("FAULT", 0, "", []byte("meets the fault"))
			wantCode(t, "send meeting a failed flush", resp, protocol.RespServiceNotAvailable)
			if !strings.Contains(resp.Remark, "input/output error") {
				t.Fatalf("remark %q does not name the I/O error", resp.Remark)
			}
			inj.Clear()
			wantCode(t, "send after the fault cleared (sticky)", e.send("FAULT", 1, "", []byte("x")), protocol.RespServiceNotAvailable)
			acked.check(t, e, "FAULT")

			_ = e.stop() // the store's close reports the sticky error
			e.start()
			acked.check(t, e, "FAULT")
			resp = e.send("FAULT", 0, "", []byte("after restart"))
			wantCode(t, "send after the restart", resp, protocol.RespSuccess)
		})
	}
}

// A failed segment creation (ENOSPC from fallocate) is SYSTEM_ERROR (1)
// (CREATE_MAPPED_FILE_FAILED); it is not sticky: once space returns, sends
// succeed without a restart.
func TestBrokerFaultSegmentCreation(t *testing.T) {
	t.Parallel()
	e, inj := faultBroker(t, iopath.Pwrite, flush.Group, nil)
	inj.Add(faultfs.Rule{Op: vfs.OpAllocate, PathContains: segmentsOf(e), When: faultfs.FromNth(2), Err: syscall.ENOSPC})
	acked := ackedSet{}
	body := bytes.Repeat([]byte("s"), 2000)
	var resp *remoting.Command
	for i := 0; i < 200; i++ {
		resp = e.send("FAULT", 0, "", body)
		if resp.Code != protocol.RespSuccess {
			break
		}
		acked.add(t, resp, body)
	}
	wantCode(t, "send needing a new segment on a full disk", resp, protocol.RespSystemError)
	if !strings.Contains(resp.Remark, "CREATE_MAPPED_FILE_FAILED") || !strings.Contains(resp.Remark, "no space left") {
		t.Fatalf("remark %q", resp.Remark)
	}
	acked.check(t, e, "FAULT")
	inj.Clear()
	resp = e.send("FAULT", 0, "", body)
	wantCode(t, "send once space returned", resp, protocol.RespSuccess)
	acked.add(t, resp, body)
	acked.check(t, e, "FAULT")
}

// Disk usage above 90 %: SERVICE_NOT_AVAILABLE (14) before any file
// operation; pulls keep working; at or below 85 % sends succeed again.
func TestBrokerFaultDiskFull(t *testing.T) {
	t.Parallel()
	var usage atomic.Uint64
	usage.Store(math.Float64bits(0.5))
	e, _ := faultBroker(t, iopath.Mmap, flush.Async, func(s *store.Config) {
		s.DiskUsage = func(string) (float64, error) { return math.Float64frombits(usage.Load()), nil }
	})
	es, ok := e.b.Store().(broker.EngineStore)
	if !ok {
		t.Fatal("broker store is not an engine/store Store")
	}
	st := es.EngineStore()
	acked := ackedSet{}
	resp := e.send("FAULT", 0, "", []byte("before"))
	wantCode(t, "send", resp, protocol.RespSuccess)
	acked.add(t, resp, []byte("before"))
	usage.Store(math.Float64bits(0.95))
	if rep, err := st.CleanOnce(time.Now()); err != nil || !rep.DiskFull {
		t.Fatalf("clean pass at 95 %%: %+v %v", rep, err)
	}
	end := st.CommitLog().MaxOffset()
	resp = e.send("FAULT", 0, "", []byte("refused"))
	wantCode(t, "send on a full disk", resp, protocol.RespServiceNotAvailable)
	if !strings.Contains(resp.Remark, "disk full") {
		t.Fatalf("remark %q does not say the disk is full", resp.Remark)
	}
	if st.CommitLog().MaxOffset() != end {
		t.Fatalf("a refused send was appended to the commit log")
	}
	acked.check(t, e, "FAULT")
	usage.Store(math.Float64bits(0.85))
	if rep, _ := st.CleanOnce(time.Now()); rep.DiskFull {
		t.Fatalf("still full at 85 %%")
	}
	resp = e.send("FAULT", 0, "", []byte("after"))
	wantCode(t, "send after space returned", resp, protocol.RespSuccess)
	acked.add(t, resp, []byte("after"))
	acked.check(t, e, "FAULT")
}

// A flush slower than SyncFlushTimeout under group commit: FLUSH_DISK_TIMEOUT
// (10), which RocketMQ counts as "send OK" (stored, durability unknown):
// the reply carries msgId and queueOffset, and the message is served.
func TestBrokerFaultSlowFlush(t *testing.T) {
	t.Parallel()
	e, inj := faultBroker(t, iopath.Pwrite, flush.Group, func(s *store.Config) {
		// Margins that hold on a loaded machine: the warm-up send's real
		// flush stays well under the timeout, the injected one well over.
		s.CommitLog.Flush.SyncFlushTimeout = time.Second
	})
	wantCode(t, "send", e.send("FAULT", 0, "", []byte("warm")), protocol.RespSuccess)
	id := inj.Add(faultfs.Rule{Op: vfs.OpSync, PathContains: segmentsOf(e), Delay: 3 * time.Second})
	resp := e.send("FAULT", 0, "", []byte("slow"))
	wantCode(t, "send behind a slow flush", resp, protocol.RespFlushDiskTimeout)
	if resp.ExtFields["msgId"] == "" {
		t.Fatalf("FLUSH_DISK_TIMEOUT without msgId: %v", resp.ExtFields)
	}
	inj.Remove(id)
	acked := ackedSet{}
	acked.add(t, resp, []byte("slow"))
	acked.check(t, e, "FAULT")
}

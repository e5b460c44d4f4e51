package store

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
)

// An index file that cannot be preallocated (ENOSPC, as the default
// ~420 MB index on a 64 MiB tmpfs) does not stall dispatch: every
// acknowledged message reaches its consume queue, the failure is counted,
// and once space returns the index takes new keys again. (Not parallel:
// it shortens indexRetryBackoff.)
func TestIndexENOSPCDoesNotStallDispatch(t *testing.T) {
	defer func(d time.Duration) { indexRetryBackoff = d }(indexRetryBackoff)
	indexRetryBackoff = 20 * time.Millisecond
	cfg, inj := faultStoreConfig(t, iopath.Pwrite, flush.Sync, 47)
	inj.Add(faultfs.Rule{Op: vfs.OpAllocate, PathContains: filepath.Join(cfg.Root, "index") + string(filepath.Separator),
		When: faultfs.Always(), Err: syscall.ENOSPC})
	s := openStore(t, cfg)
	defer mustClose(t, s)
	rng := rand.New(rand.NewPCG(47, 48))
	var end int64
	const n = 20
	for i := range n {
		r, err := s.Put(context.Background(), faultMsg(rng, i))
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		end = r.WroteOffset + r.WroteBytes
	}
	waitDispatchedTo(t, s, end)
	var queued int64
	for q := range int32(faultQueues) {
		queued += s.GetMaxOffsetInQueue(faultTopic, q)
	}
	if queued != n {
		t.Fatalf("consume queues hold %d messages, want %d", queued, n)
	}
	if st := s.Stats(); st.IndexErrors == 0 || st.IndexSkippedRecords == 0 || st.DispatchErrors != 0 {
		t.Fatalf("index errors %d, skipped %d, dispatch errors %d", st.IndexErrors, st.IndexSkippedRecords, st.DispatchErrors)
	}

	// Space returns: after the backoff the index takes keys again.
	inj.Clear()
	deadline := time.Now().Add(5 * time.Second)
	for i := n; ; i++ {
		m := faultMsg(rng, i)
		if _, err := s.Put(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		key := "k" + strconv.Itoa(i)
		for poll := time.Now().Add(200 * time.Millisecond); time.Now().Before(poll); time.Sleep(5 * time.Millisecond) {
			if res, err := s.QueryMessage(faultTopic, key, 1, 0, time.Now().Add(time.Hour).UnixMilli()); err == nil && len(res.Offsets) == 1 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the index never took a key after space returned (stats %+v)", s.Stats())
		}
	}
}

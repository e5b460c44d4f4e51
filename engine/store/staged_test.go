package store

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/brokerlab/brokerlab/engine/record"
)

// TestPutStaged: PutStaged hands on a wait exactly when the policy makes a
// waiting producer wait outside the append lock (group commits), never for
// WAIT=false; the waits, run concurrently after all the appends, return
// Put's result; every message is stored and readable in order; and a wait
// run after Close reports FLUSH_DISK_TIMEOUT (stored, durability not
// known to the wait) instead of blocking.
func TestPutStaged(t *testing.T) {
	forEachConfig(t, func(t *testing.T, cfg Config) {
		s := openStore(t, cfg)
		closed := false
		defer func() {
			if !closed {
				mustClose(t, s)
			}
		}()
		rng := rand.New(rand.NewPCG(3, 4))
		kind := cfg.CommitLog.Flush.Kind
		const n = 20
		msgs := make([]*record.Message, n)
		waits := make([]func() (PutResult, error), n)
		for i := range msgs {
			msgs[i] = newMsg(rng, "staged", 0, i, 300, "")
			if i == n-1 { // the last producer does not wait
				msgs[i].Properties = string(record.AppendProperty([]byte(msgs[i].Properties), record.PropertyWaitStoreMsgOK, "false"))
			}
			res, wait, err := s.PutStaged(context.Background(), msgs[i])
			if err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
			if want := waitsOutsideLock(kind) && i < n-1; (wait != nil) != want {
				t.Fatalf("put %d under %s: wait handed on %v, want %v", i, kind, wait != nil, want)
			}
			if res.QueueOffset != int64(i) || res.Status != PutOK {
				t.Fatalf("append %d: %+v", i, res)
			}
			waits[i] = wait
		}
		var wg sync.WaitGroup
		for i, wait := range waits {
			if wait == nil {
				continue
			}
			wg.Go(func() {
				res, err := wait()
				if err != nil || res.Status != PutOK || res.QueueOffset != int64(i) {
					t.Errorf("wait %d: %+v %v", i, res, err)
				}
			})
		}
		wg.Wait()
		waitDispatched(t, s)
		got := pullAll(t, s, "staged", 0)
		for i, m := range msgs {
			rec, err := record.Decode(got[int64(i)], true)
			if err != nil || !bytes.Equal(rec.Body, m.Body) || rec.QueueOffset != int64(i) {
				t.Fatalf("message %d not stored as sent (%v)", i, err)
			}
		}

		if !waitsOutsideLock(kind) {
			return
		}
		_, wait, err := s.PutStaged(context.Background(), newMsg(rng, "staged", 0, n, 300, ""))
		if err != nil || wait == nil {
			t.Fatalf("append before close: wait %v, %v", wait != nil, err)
		}
		mustClose(t, s)
		closed = true
		res, err := wait()
		if res.Status != FlushDiskTimeout || StatusOf(err) != FlushDiskTimeout || !errors.Is(err, ErrClosed) {
			t.Fatalf("wait after close: %+v %v", res, err)
		}
	})
}

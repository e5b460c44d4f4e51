package store

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/record"
)

// TestPutStages: every put reports its store stages — a lock hold, a
// non-negative lock wait, and a flush wait exactly when the policy makes
// the producer wait outside the append lock (group, rmqgroup; sync flushes
// under the lock, async does not wait) — and lock wait + hold + flush wait
// never exceed the put's own duration.
func TestPutStages(t *testing.T) {
	forEachConfig(t, func(t *testing.T, cfg Config) {
		s := openStore(t, cfg)
		defer mustClose(t, s)
		rng := rand.New(rand.NewPCG(1, 2))
		var mu sync.Mutex
		var wg sync.WaitGroup
		const producers, each = 4, 10
		msgs := make([][]*record.Message, producers)
		for p := range producers {
			for i := range each {
				msgs[p] = append(msgs[p], newMsg(rng, "stages", int32(p%2), i, 200, ""))
			}
		}
		var failures []string
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, m := range msgs[p] {
					start := time.Now()
					res, err := s.Put(context.Background(), m)
					took := time.Since(start)
					mu.Lock()
					switch {
					case err != nil:
						failures = append(failures, "put: "+err.Error())
					case res.LockHeld <= 0 || res.LockWait < 0 || res.FlushWait < 0:
						failures = append(failures, "bad stage durations")
					case res.LockWait+res.LockHeld+res.FlushWait > took:
						failures = append(failures, "stages exceed the put")
					case waitsOutsideLock(cfg.CommitLog.Flush.Kind) != (res.FlushWait > 0):
						failures = append(failures, "flush wait does not match the policy")
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(failures) > 0 {
			t.Fatalf("%d of %d puts: first: %s", len(failures), producers*each, failures[0])
		}
	})
}

// waitsOutsideLock: the policies whose producers wait for a flush after
// releasing the append lock.
func waitsOutsideLock(k flush.Kind) bool { return k != flush.Sync && k != flush.Async }

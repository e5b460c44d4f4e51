package store

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDeleteTopicData deletes a topic with data and offsets, re-creates it,
// and checks that nothing old comes back: not at once, not after a restart
// whose recovery rebuilds every consume queue from the whole commit log (the
// consume-queue directory is removed), and not through key queries.
func TestDeleteTopicData(t *testing.T) {
	forEachConfig(t, func(t *testing.T, cfg Config) {
		rng := rand.New(rand.NewPCG(7, 8))
		s := openStore(t, cfg)
		for i := range 40 {
			mustPut(t, s, newMsg(rng, "T", int32(i%2), i, 200, "a"))
			if i%4 == 0 {
				mustPut(t, s, newMsg(rng, "U", 0, i, 200, "a"))
			}
		}
		waitDispatched(t, s)
		if err := s.DeleteTopicData("T"); err != nil {
			t.Fatal(err)
		}
		check := func(when string, wantNew int64) {
			t.Helper()
			for q := range int32(2) {
				want := int64(0)
				if q == 0 {
					want = wantNew
				}
				if got := s.GetMaxOffsetInQueue("T", q); got != want {
					t.Fatalf("%s: max offset T/%d = %d, want %d", when, q, got, want)
				}
			}
			if _, err := os.Stat(filepath.Join(cfg.Root, "consumequeue", "T", "1")); !os.IsNotExist(err) {
				t.Fatalf("%s: T/1's consume-queue directory is there (%v)", when, err)
			}
			if got := s.GetMaxOffsetInQueue("U", 0); got != 10 {
				t.Fatalf("%s: U changed: max offset %d", when, got)
			}
			res, err := s.QueryMessage("T", "k2", 32, 0, time.Now().Add(time.Hour).UnixMilli())
			if err == nil && len(res.Buffer) > 0 {
				t.Fatalf("%s: a deleted message is found by key", when)
			}
		}
		check("deleted", 0)
		m := newMsg(rng, "T", 0, 1000, 200, "new")
		if r := mustPut(t, s, m); r.QueueOffset != 0 {
			t.Fatalf("first put after deletion at queue offset %d", r.QueueOffset)
		}
		waitDispatched(t, s)
		check("re-created", 1)
		got := pullAll(t, s, "T", 0)
		if len(got) != 1 {
			t.Fatalf("re-created T/0 serves %d messages", len(got))
		}
		mustClose(t, s)

		// Rebuild every consume queue from the commit log.
		if err := os.RemoveAll(filepath.Join(cfg.Root, "consumequeue")); err != nil {
			t.Fatal(err)
		}
		s = openStore(t, cfg)
		defer mustClose(t, s)
		waitDispatched(t, s)
		check("rebuilt", 1)
		if got := pullAll(t, s, "T", 0); len(got) != 1 {
			t.Fatalf("rebuilt T/0 serves %d messages", len(got))
		}
	})
}

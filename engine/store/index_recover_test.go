package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/vfs/strictfs"
)

// TestIndexTruncationSurvivesNextCut: an index file made durable when it
// filled can name records a power cut then took from the commit log (under
// async flush the dispatcher indexes records before they are flushed). The
// checkpoint's index time must not vouch for such a file, and the entries
// recovery truncates must not come back after the next cut: otherwise the
// stale full file is kept and the records re-appended at those offsets are
// never indexed.
func TestIndexTruncationSurvivesNextCut(t *testing.T) {
	root := t.TempDir()
	fs := strictfs.New()
	if err := fs.MkdirAllDurable(root); err != nil {
		t.Fatal(err)
	}
	cfg := powerLossConfig(t, root, fs, iopath.Pwrite, flush.Async)
	cfg.CommitLog.Flush.Interval = time.Hour // only the explicit Flush below makes records durable
	cfg.Logger = quietLogger
	rng := rand.New(rand.NewPCG(1, 2))
	put := func(s *Store, i int) {
		t.Helper()
		if _, err := s.Put(context.Background(), newMsg(rng, powerLossTopic, 0, i, 100, "")); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	cut := func(s *Store) {
		t.Helper()
		fs.Cut(strictfs.CutOptions{Tear: strictfs.TearNone})
		_ = s.Close() // the power is off: Close fails but releases everything
		fs = fs.AfterCut()
		cfg.FS = fs
	}

	s := openStore(t, cfg)
	for i := 0; i < 10; i++ {
		put(s, i)
	}
	if _, err := s.CommitLog().Flush(); err != nil {
		t.Fatal(err)
	}
	durable := s.CommitLog().MaxOffset()
	// 40 more records, two keys each: the first index file (63 entries)
	// fills, is msynced and reported, naming records that are not durable.
	for i := 10; i < 50; i++ {
		put(s, i)
	}
	waitDispatched(t, s)
	waitIndexFileReported(t, s)
	if ts := s.indexTS.Load(); ts != 0 {
		t.Fatalf("index time %d vouches for a file naming records the log has not flushed", ts)
	}
	cut(s)

	// Recovery 1 keeps 10 records; the next ones are durable when acknowledged.
	cfg.CommitLog.Flush = flush.DefaultConfig(flush.Sync)
	s = openStore(t, cfg)
	if got := s.Recovery().End; got != durable {
		t.Fatalf("recovered end %d, want %d", got, durable)
	}
	for i := 100; i < 105; i++ {
		put(s, i)
	}
	waitDispatched(t, s)
	cut(s)

	s = openStore(t, cfg)
	defer mustClose(t, s)
	for _, i := range []int{0, 9, 100, 101, 102, 103, 104} {
		key := fmt.Sprintf("k%d", i)
		res, err := s.QueryMessage(powerLossTopic, key, 8, 0, 1<<62)
		if err != nil {
			t.Fatalf("query %s: %v", key, err)
		}
		if len(res.Offsets) != 1 {
			t.Errorf("key %s: index answers %v, want one record; recovery %+v", key, res.Offsets, s.Recovery())
		}
	}
}

// TestIndexTimeFollowsLogDurability: a full index file's end time enters
// the checkpoint only once the commit log is durable past its records.
func TestIndexTimeFollowsLogDurability(t *testing.T) {
	root := t.TempDir()
	fs := strictfs.New()
	if err := fs.MkdirAllDurable(root); err != nil {
		t.Fatal(err)
	}
	cfg := powerLossConfig(t, root, fs, iopath.Pwrite, flush.Async)
	cfg.CommitLog.Flush.Interval = time.Hour
	cfg.Logger = quietLogger
	s := openStore(t, cfg)
	defer mustClose(t, s)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 40; i++ {
		if _, err := s.Put(context.Background(), newMsg(rng, powerLossTopic, 0, i, 100, "")); err != nil {
			t.Fatal(err)
		}
	}
	waitDispatched(t, s)
	waitIndexFileReported(t, s)
	if ts := s.indexTS.Load(); ts != 0 {
		t.Fatalf("index time %d before the log is flushed", ts)
	}
	if _, err := s.CommitLog().Flush(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.indexTS.Load() == 0 { // the checkpoint loop advances it
		if time.Now().After(deadline) {
			t.Fatal("index time never advanced after the log was flushed")
		}
		time.Sleep(time.Millisecond)
	}
	if ts, end := s.indexTS.Load(), s.idx.Files()[0].EndTimestamp; ts != end {
		t.Fatalf("index time %d, want the full file's end %d", ts, end)
	}
}

// waitIndexFileReported waits until a full index file was msynced and
// reported to the store.
func waitIndexFileReported(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.vouch.mu.Lock()
		n := len(s.vouch.pending)
		s.vouch.mu.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no full index file was reported")
		}
		time.Sleep(time.Millisecond)
	}
}

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/vfs/strictfs"
)

// Power-loss tests (issue 15): the store runs over strictfs, an in-memory
// file system that keeps only what was made durable (fdatasync, msync of a
// mapped range, directory entries after the directory's fsync). A workload
// of producers plus topic and consumer-offset updates runs; at a random
// moment the power is cut (optionally tearing the last unsynced write of
// each file at a 512-byte sector boundary, or keeping an in-order prefix of
// the unsynced sectors and directory operations), and the store is reopened
// on what the disk would hold after the reboot. Each cut's recovery must
// show:
//
//   - sync and group: every acknowledged message present with identical
//     bytes; async: the log is a clean prefix (every record valid, queue
//     offsets contiguous) and whatever survived is what was acknowledged;
//   - no record that fails its CRC is ever served;
//   - consume queues agree with the log (every unit names its record) and
//     the key index does too (every record found by its key; every index
//     hit is a record of the log);
//   - the config files (WriteConfigFile, as the broker writes topics.json
//     and consumerOffset.json) decode (old or new, never torn): every
//     topic whose write returned is there, and the offsets are at least
//     the last persisted ones;
//   - data that survived one recovery survives the next ones.
//
// Cycles chain: each recovery's disk is the next cycle's starting point
// (a fresh disk every powerLossChain cycles). The default run makes
// powerLossCuts cuts per write path × flush policy; -long (or
// BROKERLAB_LONG=1) makes powerLossLongCuts.

const (
	powerLossCuts     = 25
	powerLossLongCuts = 1000
	powerLossChain    = 10
	powerLossTopic    = "PLOSS"
	powerLossQueues   = 4
	powerLossWorkers  = 3
	powerLossPerCycle = 12 // puts per worker and cycle
	powerLossGroup    = "plg"
)

// powerLossConfig is a small store over fs: 16 KiB segments, 32-unit
// consume-queue files, 64-entry index files, fast checkpoints and
// consume-queue flushes so that a cut lands between all kinds of writes.
func powerLossConfig(t testing.TB, root string, fs *strictfs.FS, path iopath.Kind, pol flush.Kind) Config {
	cfg := testConfig(t, root, path, pol)
	cfg.FS = fs
	cfg.CommitLog.SegmentSize = 16 << 10
	pool := iopath.NewBufferPool(4, cfg.CommitLog.SegmentSize)
	t.Cleanup(func() { pool.Close() })
	cfg.CommitLog.IO.Pool = pool
	cfg.CommitLog.IO.CommitInterval = 2 * time.Millisecond
	cfg.CommitLog.Flush.Interval = 2 * time.Millisecond
	cfg.ConsumeQueue = consumequeue.Config{UnitsPerFile: 32}
	cfg.Index = index.Config{MaxHashSlots: 32, MaxIndexNum: 64, MaxQueryNum: 64}
	cfg.MessageIndexSafe = true
	cfg.CheckpointInterval = 3 * time.Millisecond
	cfg.FlushConsumeQueueInterval = 2 * time.Millisecond
	cfg.FlushConsumeQueueThoroughInterval = 5 * time.Millisecond
	cfg.RecoveryTimeMargin = time.Millisecond
	return cfg
}

// plTally is what the cuts of one write path × policy showed.
type plTally struct {
	cuts, acked, ackedLost, survivedAsync, corruptServed int
	tears                                                map[strictfs.Tear]int
	lostBytes, tornBytes                                 int64
	lostDirOps                                           int
	indexMissing                                         int
	topicsCreated, offsetsPersisted                      int
}

var (
	plMu      sync.Mutex
	plResults = map[string]*plTally{}
)

// plState is what survives from cycle to cycle: messages and metadata that
// must be found after every later cut.
type plState struct {
	must       map[ackKey]string // queue/offset → body hash
	topicsMust map[string]bool   // created (call returned nil)
	topicsSeen map[string]bool   // ever attempted
	offsetMust int64             // last persisted consumer offset
	offsetMax  int64             // last committed consumer offset
	nextKey    int
	// Completed topic creations and offset persists (for the report).
	created, persisted int
}

func newPLState() *plState {
	return &plState{must: map[ackKey]string{}, topicsMust: map[string]bool{}, topicsSeen: map[string]bool{}, offsetMust: -1, offsetMax: -1}
}

func TestPowerLoss(t *testing.T) {
	cuts := powerLossCuts
	if longCrash() {
		cuts = powerLossLongCuts
	}
	t.Run("matrix", func(t *testing.T) {
		for _, path := range iopath.Kinds() {
			for _, pol := range flush.AllKinds() {
				t.Run(fmt.Sprintf("path=%s/flush=%s", path, pol), func(t *testing.T) {
					skipNoDSync(t, path, pol)
					t.Parallel()
					powerLossCycles(t, path, pol, cuts)
				})
			}
		}
	})
	plMu.Lock()
	defer plMu.Unlock()
	keys := make([]string, 0, len(plResults))
	for k := range plResults {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r := plResults[k]
		t.Logf("POWERLOSS %s cuts=%d acked=%d acked_lost=%d async_survived=%d corrupt_served=%d tears(none/last/prefix)=%d/%d/%d unsynced_bytes_lost=%d torn_bytes_kept=%d dir_ops_lost=%d index_entries_missing=%d topics=%d offset_saves=%d",
			k, r.cuts, r.acked, r.ackedLost, r.survivedAsync, r.corruptServed,
			r.tears[strictfs.TearNone], r.tears[strictfs.TearLast], r.tears[strictfs.TearPrefix],
			r.lostBytes, r.tornBytes, r.lostDirOps, r.indexMissing, r.topicsCreated, r.offsetsPersisted)
	}
}

func powerLossCycles(t *testing.T, path iopath.Kind, pol flush.Kind, cuts int) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	root := t.TempDir() // real, for the lock file only; data lives in strictfs
	tally := &plTally{tears: map[strictfs.Tear]int{}}
	var fs *strictfs.FS
	var st *plState
	var s *Store
	open := func() *Store {
		s, err := Open(powerLossConfig(t, root, fs, path, pol))
		if errors.Is(err, iopath.ErrUnsupported) {
			t.Skipf("write path %s unsupported: %v", path, err)
		}
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return s
	}
	defer func() {
		if s != nil {
			_ = s.Close()
		}
	}()
	for c := 0; c < cuts; c++ {
		if c%powerLossChain == 0 {
			if s != nil {
				if err := s.Close(); err != nil {
					t.Fatalf("cut %d: clean close: %v", c, err)
				}
			}
			if st != nil {
				tally.topicsCreated, tally.offsetsPersisted = tally.topicsCreated+st.created, tally.offsetsPersisted+st.persisted
			}
			fs, st = strictfs.New(), newPLState()
			if err := fs.MkdirAllDurable(root); err != nil {
				t.Fatal(err)
			}
			s = open()
		}
		tear := strictfs.Tear(rng.IntN(3))
		acks := powerLossWorkload(t, c, s, fs, st, rng, strictfs.CutOptions{Tear: tear, Rand: rand.New(rand.NewPCG(seed, uint64(c)))})
		_ = s.Close() // the machine is off: Close fails, but must release everything
		s = nil
		fs = fs.AfterCut()
		fst := fs.Stats()
		tally.cuts++
		tally.tears[tear]++
		tally.lostBytes += fst.LostBytes
		tally.tornBytes += fst.TornBytes
		tally.lostDirOps += fst.LostDirOps
		tally.acked += len(acks)
		// The recovered store goes on to the next cycle's workload: the
		// next cut lands on a recovered store.
		s = open()
		maxes := checkPowerLossRecovery(t, c, s, fs, root, st, acks, tally, pol != flush.Async)
		lost := 0
		for k, h := range acks {
			if k.off < maxes[k.q] {
				st.must[k] = h
				if pol == flush.Async {
					tally.survivedAsync++
				}
			} else {
				lost++
			}
		}
		tally.ackedLost += lost
		if pol != flush.Async && lost > 0 {
			t.Fatalf("cut %d (tear %v): %d acknowledged messages lost under %s", c, tear, lost, pol)
		}
	}
	tally.topicsCreated, tally.offsetsPersisted = tally.topicsCreated+st.created, tally.offsetsPersisted+st.persisted
	plMu.Lock()
	plResults[fmt.Sprintf("path=%s flush=%s", path, pol)] = tally
	plMu.Unlock()
}

// powerLossWorkload runs producers and a metadata writer, cuts the power
// after a random number of acknowledgements, waits for them to stop and
// returns the acknowledged messages.
func powerLossWorkload(t *testing.T, c int, s *Store, fs *strictfs.FS, st *plState, rng *rand.Rand, opts strictfs.CutOptions) map[ackKey]string {
	total := powerLossWorkers * powerLossPerCycle
	cutAt := int64(rng.IntN(total + 1))
	spin := rng.IntN(64)
	var ackCount atomic.Int64
	reached := make(chan struct{})
	var reachOnce sync.Once
	if cutAt == 0 {
		reachOnce.Do(func() { close(reached) })
	}
	cutDone := make(chan struct{})
	go func() { // the cutter
		defer close(cutDone)
		<-reached
		for i := 0; i < spin; i++ {
			runtime.Gosched()
		}
		fs.Cut(opts)
	}()
	var mu sync.Mutex
	acks := map[ackKey]string{}
	var wg sync.WaitGroup
	base := st.nextKey
	st.nextKey += total
	for g := 0; g < powerLossWorkers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), uint64(g)))
			for i := 0; i < powerLossPerCycle; i++ {
				key := base + g*powerLossPerCycle + i
				m := newMsg(r, powerLossTopic, int32(r.IntN(powerLossQueues)), key, 400, "")
				res, err := s.Put(context.Background(), m)
				if err != nil {
					return
				}
				mu.Lock()
				acks[ackKey{m.QueueID, res.QueueOffset}] = bodyHash(m.Body)
				mu.Unlock()
				if ackCount.Add(1) == cutAt {
					reachOnce.Do(func() { close(reached) })
				}
			}
		}(g)
	}
	// The metadata writer, as the broker's tables write their files: a
	// topic per round, then a consumer offset.
	wg.Add(1)
	go func() {
		defer wg.Done()
		topics := maps.Clone(st.topicsMust)
		for i := 0; i < 4; i++ {
			name := fmt.Sprintf("PLT_%d_%d", c, i)
			st.topicsSeen[name] = true
			topics[name] = true
			if err := plWrite(s, plTopicsFile, topics); err != nil {
				return
			}
			st.topicsMust[name] = true
			st.created++
			st.offsetMax++
			v := st.offsetMax
			if err := plWrite(s, plOffsetsFile, map[string]int64{powerLossGroup: v}); err != nil {
				return
			}
			st.offsetMust = v
			st.persisted++
		}
	}()
	wg.Wait()
	reachOnce.Do(func() { close(reached) })
	<-cutDone
	return acks
}

// checkPowerLossRecovery checks a store reopened after a cut (see the file
// comment) and returns each queue's recovered max offset. With durable
// (sync, group, rmqgroup) every record of the recovered log must be found
// by its key; under async misses are only counted (see GUARANTEES.md).
func checkPowerLossRecovery(t *testing.T, c int, s *Store, fs *strictfs.FS, root string, st *plState, acked map[ackKey]string, tally *plTally, durable bool) map[int32]int64 {
	t.Helper()
	if !s.Recovery().Abnormal {
		t.Fatalf("cut %d: recovery was not abnormal after a power cut", c)
	}
	log := s.CommitLog()
	next := map[int32]int64{}
	byOffset := map[int64]record.Record{}
	keys := map[string]int64{}
	walkLog(t, log, func(off int64, raw []byte, rec record.Record) {
		if _, err := record.Decode(raw, true); err != nil {
			t.Fatalf("cut %d: recovered record at %d fails its check: %v", c, off, err)
		}
		if string(rec.Topic) != powerLossTopic {
			t.Fatalf("cut %d: record at %d: topic %q", c, off, rec.Topic)
		}
		if rec.QueueOffset != next[rec.QueueID] {
			t.Fatalf("cut %d: queue %d: record at %d has queue offset %d, want %d (not a clean prefix)", c, rec.QueueID, off, rec.QueueOffset, next[rec.QueueID])
		}
		next[rec.QueueID]++
		byOffset[off] = rec
		if k, ok := rec.Property(record.PropertyKeys); ok {
			first, _, _ := strings.Cut(string(k), " ")
			keys[first] = off
		}
	})
	for q := int32(0); q < powerLossQueues; q++ {
		if got := s.GetMaxOffsetInQueue(powerLossTopic, q); got != next[q] {
			t.Fatalf("cut %d: queue %d: consume queue max %d, commit log holds %d", c, q, got, next[q])
		}
		if next[q] == 0 {
			continue
		}
		cq, err := s.cq.Queue(powerLossTopic, q, false)
		if err != nil {
			t.Fatal(err)
		}
		for off := int64(0); off < next[q]; off++ {
			u, err := cq.Get(off)
			if err != nil {
				t.Fatalf("cut %d: queue %d unit %d: %v", c, q, off, err)
			}
			rec, ok := byOffset[u.PhyOffset]
			if !ok || rec.QueueID != q || rec.QueueOffset != off || rec.TotalSize != u.Size {
				for o := int64(0); o < next[q]; o++ {
					u, _ := cq.Get(o)
					t.Logf("unit %d: %+v", o, u)
				}
				t.Fatalf("cut %d: queue %d unit %d names %d (size %d), not its record; recovery %+v", c, q, off, u.PhyOffset, u.Size, s.Recovery())
			}
		}
		for off, raw := range pullAll(t, s, powerLossTopic, q) {
			rec, err := record.Decode(raw, true)
			if err != nil {
				tally.corruptServed++
				t.Fatalf("cut %d: served record %d/%d fails its CRC: %v", c, q, off, err)
			}
			h, ok := st.must[ackKey{q, off}]
			if !ok {
				h, ok = acked[ackKey{q, off}]
			}
			if ok && h != bodyHash(rec.Body) {
				tally.corruptServed++
				t.Fatalf("cut %d: queue %d offset %d: served body differs from the acknowledged one", c, q, off)
			}
		}
	}
	for k := range st.must {
		if k.off >= next[k.q] {
			t.Fatalf("cut %d: message %d/%d, present after an earlier recovery or acknowledged under a durable policy, lost (queue holds %d)", c, k.q, k.off, next[k.q])
		}
	}
	// The index: every record found by its key, every hit a record.
	if s.idx != nil {
		for key, off := range keys {
			offs, _, _, err := s.idx.Query(powerLossTopic, key, 64, 0, 1<<62)
			if err != nil {
				t.Fatalf("cut %d: index query %s: %v", c, key, err)
			}
			found := false
			for _, o := range offs {
				if _, ok := byOffset[o]; !ok {
					t.Fatalf("cut %d: index entry for %s names %d, not a record of the log", c, key, o)
				}
				found = found || o == off
			}
			if !found {
				tally.indexMissing++
				if durable {
					rec := byOffset[off]
					k := ackKey{rec.QueueID, rec.QueueOffset}
					_, earlier := st.must[k]
					_, now := acked[k]
					t.Errorf("cut %d: the key index misses record %d/%d at %d (key %s; acknowledged this cycle %v, kept from an earlier one %v); recovery %+v",
						c, rec.QueueID, rec.QueueOffset, off, key, now, earlier, s.Recovery())
				}
			}
		}
	}
	checkPowerLossMetadata(t, c, s, fs, root, st, tally)
	return next
}

// checkPowerLossMetadata: the JSON files decode, hold every completed
// update, and nothing that was never written.
func checkPowerLossMetadata(t *testing.T, c int, s *Store, fs *strictfs.FS, root string, st *plState, tally *plTally) {
	t.Helper()
	for _, p := range []string{ConfigPath(root, plTopicsFile), ConfigPath(root, plOffsetsFile)} {
		for _, name := range []string{p, p + ".bak"} {
			b, err := readFile(fs, name)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				t.Fatalf("cut %d: read %s: %v", c, name, err)
			}
			var v map[string]any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("cut %d: %s is torn (%d bytes): %v", c, filepath.Base(name), len(b), err)
			}
		}
	}
	have := map[string]bool{}
	if err := plRead(s, plTopicsFile, &have); err != nil {
		t.Fatalf("cut %d: %v", c, err)
	}
	for name := range have {
		if !st.topicsSeen[name] {
			t.Fatalf("cut %d: topic %q was never created", c, name)
		}
	}
	for name := range st.topicsMust {
		if !have[name] {
			t.Fatalf("cut %d: topic %s, whose creation returned, lost", c, name)
		}
	}
	offsets := map[string]int64{powerLossGroup: -1}
	if err := plRead(s, plOffsetsFile, &offsets); err != nil {
		t.Fatalf("cut %d: %v", c, err)
	}
	got := offsets[powerLossGroup]
	if got < st.offsetMust || got > st.offsetMax {
		t.Fatalf("cut %d: consumer offset %d, want between the last persisted %d and the last committed %d", c, got, st.offsetMust, st.offsetMax)
	}
	// Whatever survived is now the state: a later cut must keep it.
	st.offsetMust = got
	for name := range have {
		st.topicsMust[name] = true
	}
}

// The power-loss run's config files.
const (
	plTopicsFile  = "topics.json"
	plOffsetsFile = "consumerOffset.json"
)

// plWrite replaces a config file with v's JSON.
func plWrite(s *Store, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.WriteConfigFile(name, b)
}

// plRead decodes a config file into v (left as is when there is none).
func plRead[T any](s *Store, name string, v *T) error {
	_, err := s.ReadConfigFile(name, func(b []byte) error {
		var d T
		if err := json.Unmarshal(b, &d); err != nil {
			return err
		}
		*v = d
		return nil
	})
	return err
}

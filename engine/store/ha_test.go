package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/segment"
)

// shipReplica copies the master's log to the slave the way a stream does:
// from the slave's offset, in chunks of random size cut anywhere (frames
// never span segments), until the slave has everything the master
// committed.
func shipReplica(t *testing.T, rng *rand.Rand, master, slave *Store, fullCopy bool) {
	t.Helper()
	from, err := master.ReplicaStart(slave.ReplicaOffset(), fullCopy)
	if err != nil {
		t.Fatalf("replica start: %v", err)
	}
	buf := make([]byte, 40000)
	for guard := 0; guard < 1_000_000; guard++ {
		n, err := master.ReplicaRead(buf[:1+rng.IntN(len(buf))], from)
		if err != nil {
			t.Fatalf("replica read at %d: %v", from, err)
		}
		if n == 0 {
			if from >= master.CommitLog().MaxOffset() {
				return
			}
			master.CommitLog().Flush() // the pool path commits later
			continue
		}
		if err := slave.ReplicaAppend(from, buf[:n]); err != nil {
			t.Fatalf("replica append at %d: %v", from, err)
		}
		from += int64(n)
		if got := slave.ReplicaOffset(); got != from {
			t.Fatalf("slave reports %d after appending up to %d", got, from)
		}
	}
	t.Fatal("shipping did not finish")
}

// sameSegments asserts that two stores hold byte-identical commit-log
// segments (the slave's may start later) up to the slave's end.
func sameSegments(t *testing.T, master, slave *Store) {
	t.Helper()
	ms, ss := master.CommitLog().Segments(), slave.CommitLog().Segments()
	if len(ss) == 0 {
		t.Fatal("slave has no segments")
	}
	byStart := map[int64]*segment.Segment{}
	for _, s := range ms {
		byStart[s.Start()] = s
	}
	end := slave.CommitLog().MaxOffset()
	for _, s := range ss {
		m := byStart[s.Start()]
		if m == nil {
			t.Fatalf("slave segment %d has no master segment", s.Start())
		}
		n := min(s.Size(), end-s.Start())
		if n <= 0 {
			continue
		}
		a, b := make([]byte, n), make([]byte, n)
		if _, err := m.Appender().ReadAt(a, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Appender().ReadAt(b, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			i := 0
			for a[i] == b[i] {
				i++
			}
			t.Fatalf("segment %d differs at byte %d", s.Start(), i)
		}
	}
}

// slaveConfig is cfg for another root, with its own buffer pool.
func slaveConfig(t *testing.T, cfg Config) Config {
	c := cfg
	c.Root = t.TempDir()
	if cfg.CommitLog.IO.Pool != nil {
		pool := iopath.NewBufferPool(4, cfg.CommitLog.SegmentSize)
		t.Cleanup(func() { pool.Close() })
		c.CommitLog.IO.Pool = pool
	}
	return c
}

func putRandom(t *testing.T, rng *rand.Rand, s *Store, n, from int) []stored {
	var out []stored
	for i := from; i < from+n; i++ {
		m := newMsg(rng, "T", int32(i%3), i, 3000, "tag")
		r := mustPut(t, s, m)
		out = append(out, stored{topic: "T", queueID: int32(i % 3), offset: r.QueueOffset, phys: r.WroteOffset, body: m.Body, uniq: r.UniqKey})
	}
	return out
}

func checkServes(t *testing.T, s *Store, want []stored) {
	t.Helper()
	waitDispatched(t, s)
	got := map[int32]map[int64][]byte{}
	for q := int32(0); q < 3; q++ {
		got[q] = pullAll(t, s, "T", q)
	}
	for _, w := range want {
		raw, ok := got[w.queueID][w.offset]
		if !ok {
			t.Fatalf("slave does not serve %s/%d@%d", w.topic, w.queueID, w.offset)
		}
		checkRecord(t, raw, w)
	}
}

// TestReplicaByteIdentical: random-size messages across many segment rolls,
// shipped in chunks cut anywhere, make a slave log byte-identical to the
// master's whose consume queues serve the same messages, on every write
// path × flush policy; puts on the slave are refused.
func TestReplicaByteIdentical(t *testing.T) {
	forEachConfig(t, func(t *testing.T, cfg Config) {
		rng := rand.New(rand.NewPCG(1, 2))
		master := openStore(t, cfg)
		defer mustClose(t, master)
		scfg := slaveConfig(t, cfg)
		slave := openStore(t, scfg)
		defer mustClose(t, slave)
		slave.SetSlave(true)

		var want []stored
		for round := 0; round < 3; round++ {
			want = append(want, putRandom(t, rng, master, 60, round*60)...)
			shipReplica(t, rng, master, slave, true)
		}
		if segs := len(master.CommitLog().Segments()); segs < 3 {
			t.Fatalf("only %d segments: the test must cross rolls", segs)
		}
		if slave.CommitLog().MaxOffset() != master.CommitLog().MaxOffset() {
			t.Fatalf("slave ends at %d, master at %d", slave.CommitLog().MaxOffset(), master.CommitLog().MaxOffset())
		}
		sameSegments(t, master, slave)
		checkServes(t, slave, want)

		_, err := slave.Put(t.Context(), newMsg(rng, "T", 0, 0, 10, ""))
		if StatusOf(err) != ServiceNotAvailable || !errors.Is(err, ErrSlave) {
			t.Fatalf("put on a slave: %v", err)
		}
	})
}

// TestReplicaPartialRecordAndRestart: a record cut by the stream is not
// served until complete; a slave closed (or crashed) mid-record reopens at
// its last complete record and resumes from there.
func TestReplicaPartialRecordAndRestart(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Async)
			master := openStore(t, cfg)
			defer mustClose(t, master)
			want := putRandom(t, rng, master, 40, 0)
			scfg := slaveConfig(t, cfg)
			slave := openStore(t, scfg)
			slave.SetSlave(true)

			// Ship up to the middle of record 20.
			cut := want[20].phys + 10
			buf := make([]byte, 4096)
			for off := int64(0); off < cut; {
				n, err := master.ReplicaRead(buf[:min(int64(len(buf)), cut-off)], off)
				if err != nil || n == 0 {
					t.Fatalf("read at %d: %d %v", off, n, err)
				}
				if err := slave.ReplicaAppend(off, buf[:n]); err != nil {
					t.Fatal(err)
				}
				off += int64(n)
			}
			if slave.ReplicaOffset() != cut || slave.MaxPhyOffset() != want[20].phys {
				t.Fatalf("slave at %d published %d, want %d and %d", slave.ReplicaOffset(), slave.MaxPhyOffset(), cut, want[20].phys)
			}
			checkServes(t, slave, want[:20])
			if _, ok := pullAll(t, slave, "T", want[20].queueID)[want[20].offset]; ok {
				t.Fatal("a half-received record is served")
			}
			if err := slave.ReplicaAppend(cut+1, buf[:1]); !errors.Is(err, commitlog.ErrRawOffset) {
				t.Fatalf("append past the raw end: %v", err)
			}
			if crash {
				crashStore(t, slave)
			} else {
				mustClose(t, slave)
			}
			slave = openStore(t, scfg)
			defer mustClose(t, slave)
			slave.SetSlave(true)
			if got := slave.ReplicaOffset(); got != want[20].phys {
				t.Fatalf("reopened slave reports %d, want the last complete record's end %d", got, want[20].phys)
			}
			shipReplica(t, rng, master, slave, false)
			sameSegments(t, master, slave)
			checkServes(t, slave, want)
		})
	}
}

// crashStore abandons a store as a killed process would (no final flush of
// consume queues, abort file kept): the commit log's bytes stay in the page
// cache or file.
func crashStore(t *testing.T, s *Store) {
	t.Helper()
	s.closed.Store(true)
	close(s.bgStop)
	s.bgWG.Wait()
	close(s.disp.stop)
	<-s.disp.done
	s.abandon()
}

// TestReplicaFreshSlaveStartsAtLastSegment: an empty slave of a master with
// several segments receives (RocketMQ's rule) only the last segment, or
// with a full copy everything; either way its consume queues serve what it
// holds.
func TestReplicaFreshSlaveStartsAtLastSegment(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("full=%v", full), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			cfg := testConfig(t, t.TempDir(), iopath.Pwrite, flush.Group)
			master := openStore(t, cfg)
			defer mustClose(t, master)
			want := putRandom(t, rng, master, 150, 0)
			scfg := slaveConfig(t, cfg)
			slave := openStore(t, scfg)
			defer mustClose(t, slave)
			slave.SetSlave(true)
			shipReplica(t, rng, master, slave, full)
			segSize := cfg.CommitLog.SegmentSize
			last := master.MaxPhyOffset() - master.MaxPhyOffset()%segSize
			wantMin := last
			if full {
				wantMin = 0
			}
			if slave.MinPhyOffset() != wantMin || last == 0 {
				t.Fatalf("slave starts at %d, want %d (master's last segment %d)", slave.MinPhyOffset(), wantMin, last)
			}
			sameSegments(t, master, slave)
			var held []stored
			for _, w := range want {
				if w.phys >= wantMin {
					held = append(held, w)
				}
			}
			checkServes(t, slave, held)
		})
	}
}

// TestCheckReplicaOffset: where a stream may start, and the divergence
// cases the master refuses.
func TestCheckReplicaOffset(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Async)
	master := openStore(t, cfg)
	defer mustClose(t, master)
	want := putRandom(t, rng, master, 60, 0)
	for _, ok := range []int64{want[5].phys, want[30].phys, master.MaxPhyOffset(), cfg.CommitLog.SegmentSize} {
		if err := master.CheckReplicaOffset(ok); err != nil {
			t.Errorf("offset %d: %v", ok, err)
		}
	}
	// A blank: the end of the last record of the first segment.
	var blankAt int64
	for i := range want[:len(want)-1] {
		if want[i+1].phys == cfg.CommitLog.SegmentSize {
			blankAt = want[i].phys + int64(len(mustRecord(t, master, want[i].phys)))
		}
	}
	if blankAt == 0 {
		t.Fatal("no record starts the second segment")
	}
	if err := master.CheckReplicaOffset(blankAt); err != nil {
		t.Errorf("blank at %d: %v", blankAt, err)
	}
	if err := master.CheckReplicaOffset(master.MaxPhyOffset() + 100); !errors.Is(err, ErrReplicaAhead) {
		t.Errorf("ahead: %v", err)
	}
	if err := master.CheckReplicaOffset(want[7].phys + 3); !errors.Is(err, ErrReplicaDiverged) {
		t.Errorf("mid-record: %v", err)
	}
	if _, err := master.ReplicaStart(want[7].phys+3, false); !errors.Is(err, ErrReplicaDiverged) {
		t.Errorf("ReplicaStart mid-record: %v", err)
	}
}

func mustRecord(t *testing.T, s *Store, phys int64) []byte {
	t.Helper()
	raw, _, err := s.LookMessageByOffset(phys)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestReplicaDivergedBytes: bytes that are not a valid log at their offset
// make the slave's log unwritable (sticky), and a reopened slave recovers
// to its last valid record.
func TestReplicaDivergedBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Async)
	master := openStore(t, cfg)
	defer mustClose(t, master)
	want := putRandom(t, rng, master, 10, 0)
	scfg := slaveConfig(t, cfg)
	slave := openStore(t, scfg)
	slave.SetSlave(true)
	end := want[5].phys
	buf := make([]byte, end+200)
	if _, err := master.ReplicaRead(buf[:end], 0); err != nil {
		t.Fatal(err)
	}
	// The next record, with its PHYSICALOFFSET field pointing elsewhere.
	if _, err := master.ReplicaRead(buf[end:], end); err != nil {
		t.Fatal(err)
	}
	buf[end+28+7] ^= 1 // PHYSICALOFFSET's low byte (record header offset 28)
	if err := slave.ReplicaAppend(0, buf); !errors.Is(err, ErrReplicaDiverged) {
		t.Fatalf("diverged bytes: %v", err)
	}
	if err := slave.ReplicaAppend(slave.ReplicaOffset(), buf[:1]); !errors.Is(err, commitlog.ErrNotWritable) {
		t.Fatalf("append after divergence: %v", err)
	}
	if slave.MaxPhyOffset() != end {
		t.Fatalf("published %d, want %d", slave.MaxPhyOffset(), end)
	}
	_ = slave.Close() // the abort file stays: the log saw an error
	if _, err := os.Stat(filepath.Join(scfg.Root, "abort")); err != nil {
		t.Fatalf("abort file: %v", err)
	}
	slave = openStore(t, scfg)
	defer mustClose(t, slave)
	if slave.ReplicaOffset() != end {
		t.Fatalf("reopened at %d, want %d", slave.ReplicaOffset(), end)
	}
}

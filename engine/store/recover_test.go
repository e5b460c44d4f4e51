package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
)

// filled is a closed store holding n messages over queues T/0..2.
type filled struct {
	cfg  Config
	puts []PutResult
	msgs []*record.Message
}

func fillAndClose(t *testing.T, path iopath.Kind, n, maxBody int) filled {
	t.Helper()
	cfg := testConfig(t, t.TempDir(), path, flush.Sync)
	s := openStore(t, cfg)
	rng := rand.New(rand.NewPCG(11, uint64(n)))
	f := filled{cfg: cfg}
	for i := 0; i < n; i++ {
		m := newMsg(rng, "T", int32(i%3), i, maxBody, "")
		f.puts = append(f.puts, mustPut(t, s, m))
		f.msgs = append(f.msgs, m)
	}
	mustClose(t, s)
	return f
}

// segmentPath is the segment file holding a commit-log offset.
func (f filled) segmentPath(off int64) string {
	size := f.cfg.CommitLog.SegmentSize
	return filepath.Join(f.cfg.Root, "commitlog", fmt.Sprintf("%020d", off-off%size))
}

func (f filled) posInSegment(off int64) int64 { return off % f.cfg.CommitLog.SegmentSize }

// simulateCrash makes the next Open recover abnormally from the oldest
// segment: the abort file is back and the checkpoint is zero.
func simulateCrash(t *testing.T, root string) {
	t.Helper()
	if err := os.WriteFile(AbortPath(root), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(CheckpointPath(root), make([]byte, checkpointSize), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkRecoveredPrefix checks that the store holds exactly the first keep
// messages (by put order), served with identical bytes, and that new puts
// continue each queue's offsets.
func checkRecoveredPrefix(t *testing.T, s *Store, f filled, keep int) {
	t.Helper()
	if got := s.CommitLog().MaxOffset(); keep < len(f.puts) && got != f.puts[keep].WroteOffset {
		t.Fatalf("recovered end %d, want %d", got, f.puts[keep].WroteOffset)
	}
	count := map[int32]int64{}
	for i := 0; i < keep; i++ {
		count[f.msgs[i].QueueID]++
	}
	for q := int32(0); q < 3; q++ {
		recs := pullAll(t, s, "T", q)
		if int64(len(recs)) != count[q] || s.GetMaxOffsetInQueue("T", q) != count[q] {
			t.Fatalf("queue %d: %d messages served, max offset %d, want %d", q, len(recs), s.GetMaxOffsetInQueue("T", q), count[q])
		}
		expectStatus(t, get(t, s, "T", q, count[q], 32, 1<<20, nil), OffsetOverflowOne, count[q])
	}
	for i := 0; i < keep; i++ {
		r, m := f.puts[i], f.msgs[i]
		res := get(t, s, "T", m.QueueID, r.QueueOffset, 1, 1<<20, nil)
		if res.Status != Found {
			t.Fatalf("message %d: %v", i, res.Status)
		}
		checkRecord(t, res.Buffer, stored{"T", m.QueueID, r.QueueOffset, r.WroteOffset, m.Body, r.UniqKey})
	}
	if keep < len(f.puts) {
		lost := f.puts[keep]
		if ends := s.idx.Files(); len(ends) > 0 && ends[len(ends)-1].EndPhyOffset >= lost.WroteOffset {
			t.Fatalf("index still ends at %d, past the recovered end %d", ends[len(ends)-1].EndPhyOffset, lost.WroteOffset)
		}
		if res, _ := s.QueryMessage("T", lost.UniqKey, 64, 0, time.Now().UnixMilli()+1000); len(res.Offsets) != 0 {
			t.Fatalf("the cut message is still found by key")
		}
	}
	for q := int32(0); q < 3; q++ {
		if r := mustPut(t, s, fixedMsg("T", q, 10, "")); r.QueueOffset != count[q] {
			t.Fatalf("queue %d: new put at offset %d, want %d", q, r.QueueOffset, count[q])
		}
	}
}

func checkCorruptionReport(t *testing.T, s *Store, f filled, off int64) {
	t.Helper()
	c := s.Recovery().Corruption
	if c == nil {
		t.Fatalf("no corruption reported: %+v", s.Recovery())
	}
	if c.Path != f.segmentPath(off) || c.Offset != off {
		t.Fatalf("corruption reported in %s at %d, want %s at %d", c.Path, c.Offset, f.segmentPath(off), off)
	}
	if !IsCorruption(c) {
		t.Fatalf("report is not a corruption error")
	}
}

// A torn last record (second half zeroed, or garbage after its header) on a
// closed store: recovery cuts the log before it, names its segment and
// offset, and cuts its consume-queue unit and index entries — with the
// normal (clean-start) scan and with the abnormal one.
func TestTornTail(t *testing.T) {
	for _, path := range iopath.Kinds() {
		for _, mode := range []string{"zeroed", "garbage"} {
			for _, crash := range []bool{false, true} {
				t.Run(fmt.Sprintf("path=%s/%s/crash=%v", path, mode, crash), func(t *testing.T) {
					t.Parallel()
					f := fillAndClose(t, path, 60, 1500)
					last := f.puts[len(f.puts)-1]
					seg := f.segmentPath(last.WroteOffset)
					fh, err := os.OpenFile(seg, os.O_RDWR, 0)
					if err != nil {
						t.Fatal(err)
					}
					pos := f.posInSegment(last.WroteOffset)
					switch mode {
					case "zeroed":
						_, err = fh.WriteAt(make([]byte, last.WroteBytes/2), pos+last.WroteBytes-last.WroteBytes/2)
					case "garbage":
						junk := bytes.Repeat([]byte{0x5A, 0xA5, 0x13}, int(last.WroteBytes))
						_, err = fh.WriteAt(junk, pos+4)
					}
					if err != nil {
						t.Fatal(err)
					}
					fh.Close()
					if crash {
						simulateCrash(t, f.cfg.Root)
					}
					s := openStore(t, f.cfg)
					defer mustClose(t, s)
					if s.Recovery().Abnormal != crash {
						t.Fatalf("abnormal=%v", s.Recovery().Abnormal)
					}
					checkCorruptionReport(t, s, f, last.WroteOffset)
					if s.Recovery().CommitLog.ZeroedBytes == 0 {
						t.Fatalf("the garbage was not zeroed")
					}
					checkRecoveredPrefix(t, s, f, len(f.puts)-1)
				})
			}
		}
	}
}

// A byte flipped inside a middle record's body: recovery (abnormal scan
// from the oldest segment, or the clean scan when the record is in the last
// two segments) truncates at the last valid record before it; the flipped
// record is never served.
func TestCorruptMiddleRecord(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) {
			t.Parallel()
			f := fillAndClose(t, iopath.Pwrite, 120, 2000)
			// Clean start scans the last two segments: pick a record there.
			lastSeg := f.puts[len(f.puts)-1].WroteOffset / f.cfg.CommitLog.SegmentSize
			victim := -1
			for i, r := range f.puts {
				if r.WroteOffset/f.cfg.CommitLog.SegmentSize == lastSeg-1 && len(f.msgs[i].Body) > 100 {
					victim = i
					break
				}
			}
			if crash {
				victim = len(f.puts) / 3
				for len(f.msgs[victim].Body) < 100 {
					victim++
				}
				simulateCrash(t, f.cfg.Root)
			}
			v := f.puts[victim]
			flipByte(t, f.segmentPath(v.WroteOffset), f.posInSegment(v.WroteOffset)+100)
			s := openStore(t, f.cfg)
			defer mustClose(t, s)
			checkCorruptionReport(t, s, f, v.WroteOffset)
			checkRecoveredPrefix(t, s, f, victim)
		})
	}
}

// A flipped byte in a segment the clean-start scan does not read is caught
// when the record is read: reported with segment and offset, never served.
func TestCorruptOldSegmentNeverServed(t *testing.T) {
	f := fillAndClose(t, iopath.Mmap, 120, 2000)
	v := f.puts[2]
	flipByte(t, f.segmentPath(v.WroteOffset), f.posInSegment(v.WroteOffset)+100)
	s := openStore(t, f.cfg)
	defer mustClose(t, s)
	if s.Recovery().Corruption != nil {
		t.Fatalf("the clean scan read the first segment")
	}
	q := f.msgs[2].QueueID
	_, err := s.GetMessage("g", "T", q, v.QueueOffset, 32, 1<<20, nil)
	var ce *CorruptionError
	if !errorsAs(err, &ce) || ce.Offset != v.WroteOffset || ce.Path != f.segmentPath(v.WroteOffset) {
		t.Fatalf("get of the flipped record: %v", err)
	}
	for off := int64(0); off < s.GetMaxOffsetInQueue("T", q); off++ {
		res, err := s.GetMessage("g", "T", q, off, 32, 1<<20, nil)
		if err != nil {
			continue
		}
		for _, m := range res.Messages {
			if m.PhysOffset == v.WroteOffset {
				t.Fatalf("flipped record served at queue offset %d", m.QueueOffset)
			}
		}
	}
}

// Lost consume-queue files are rebuilt from the commit log at open.
func TestRecoverRebuildsLostConsumeQueues(t *testing.T) {
	f := fillAndClose(t, iopath.Pool, 90, 1500)
	if err := os.RemoveAll(filepath.Join(f.cfg.Root, "consumequeue")); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, f.cfg)
	defer mustClose(t, s)
	if s.Recovery().Redispatched != 90 || s.Recovery().DispatchFrom != 0 {
		t.Fatalf("recovery %+v", s.Recovery())
	}
	checkRecoveredPrefix(t, s, f, 90)
}

// Abnormal recovery starts at the newest segment whose first record is no
// newer than the checkpoint's min timestamp (minus 3 s), and the checkpoint
// file holds the five fields big-endian in a 4096-byte page.
func TestRecoverFromCheckpointSegment(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Group)
	s := openStore(t, cfg)
	var firstTS []int64 // store time of each segment's first record
	var starts []int64
	var firstKey string
	for i := 0; len(starts) < 5; i++ {
		r := mustPut(t, s, fixedMsg("T", int32(i%2), 3000, ""))
		if i == 0 {
			firstKey = r.UniqKey
		}
		if len(starts) == 0 || r.WroteOffset/cfg.CommitLog.SegmentSize != starts[len(starts)-1]/cfg.CommitLog.SegmentSize {
			starts = append(starts, r.WroteOffset)
			firstTS = append(firstTS, r.StoreTimestamp)
			time.Sleep(5 * time.Millisecond)
		}
	}
	last := mustPut(t, s, fixedMsg("T", 0, 10, ""))
	waitDispatched(t, s)
	mustClose(t, s)

	raw, err := os.ReadFile(CheckpointPath(cfg.Root))
	if err != nil || len(raw) != checkpointSize {
		t.Fatalf("checkpoint file: %d bytes, %v", len(raw), err)
	}
	cp := decodeCheckpoint(raw)
	if cp.PhysicMsgTimestamp != last.StoreTimestamp || cp.LogicsMsgTimestamp != last.StoreTimestamp || cp.ConfirmPhyOffset != last.WroteOffset+last.WroteBytes {
		t.Fatalf("checkpoint after close %+v, last record at %d stored %d", cp, last.WroteOffset, last.StoreTimestamp)
	}

	// Pretend the checkpoint was last written while segment 3 was current.
	cp.PhysicMsgTimestamp = firstTS[3] + 3000
	cp.LogicsMsgTimestamp = firstTS[3] + 3000
	cp.encode(raw)
	if err := os.WriteFile(CheckpointPath(cfg.Root), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(AbortPath(cfg.Root), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, cfg)
	rep := s.Recovery()
	if !rep.Abnormal || rep.ScanFrom != starts[3] || rep.Corruption != nil {
		t.Fatalf("scan from %d, want %d (segment starts %v): %+v", rep.ScanFrom, starts[3], starts, rep)
	}
	if rep.Redispatched == 0 || rep.End != last.WroteOffset+last.WroteBytes {
		t.Fatalf("recovery %+v", rep)
	}
	for q := int32(0); q < 2; q++ {
		recs := pullAll(t, s, "T", q)
		if int64(len(recs)) != s.GetMaxOffsetInQueue("T", q) {
			t.Fatalf("queue %d: %d served of %d", q, len(recs), s.GetMaxOffsetInQueue("T", q))
		}
	}
	mustClose(t, s)

	// With MessageIndexSafe the scan also goes back to the checkpoint's
	// index time (0: no index file ever filled), so the index entries lost
	// with the deleted index files are rebuilt.
	cfg.MessageIndexSafe = true
	if err := os.WriteFile(CheckpointPath(cfg.Root), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(AbortPath(cfg.Root), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, cfg)
	defer mustClose(t, s)
	if rep := s.Recovery(); rep.ScanFrom != 0 || rep.IndexFilesDeleted == 0 {
		t.Fatalf("index-safe recovery scanned from %d, deleted %d index files", rep.ScanFrom, rep.IndexFilesDeleted)
	}
	res, err := s.QueryMessage("T", firstKey, 64, 0, time.Now().UnixMilli()+1000)
	if err != nil || len(res.Offsets) != 1 || res.Offsets[0] != 0 {
		t.Fatalf("first message by key after index-safe recovery: %v %v", res.Offsets, err)
	}
}

package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/segment"
)

var bornHost = netip.MustParseAddrPort("10.1.2.3:40000")

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// testConfig is a small store: 64 KiB segments, 64-unit consume-queue
// files, 256-entry index files, no background cleaner, 10 % disk usage.
func testConfig(t testing.TB, dir string, path iopath.Kind, pol flush.Kind) Config {
	t.Helper()
	cfg := DefaultConfig(dir)
	cfg.CommitLog.Path = path
	cfg.CommitLog.Flush = flush.DefaultConfig(pol)
	cfg.CommitLog.Flush.Interval = 5 * time.Millisecond
	cfg.CommitLog.SegmentSize = 64 << 10
	pool := iopath.NewBufferPool(4, cfg.CommitLog.SegmentSize)
	t.Cleanup(func() { pool.Close() })
	cfg.CommitLog.IO.Pool = pool
	cfg.ConsumeQueue = consumequeue.Config{UnitsPerFile: 64}
	cfg.Index = index.Config{MaxHashSlots: 64, MaxIndexNum: 256, MaxQueryNum: 64}
	cfg.ReadCacheBytes = 1 << 20
	cfg.ReadCacheBlockSize = 4096
	cfg.Logger = quietLogger
	cfg.CleanInterval = 0
	cfg.DeleteFileInterval = 0
	cfg.DiskUsage = func(string) (float64, error) { return 0.10, nil }
	return cfg
}

// skipNoDSync skips a write path × flush policy pair the commit log refuses:
// the dsync policy on a write path without a durable write (mmap, pool).
func skipNoDSync(t testing.TB, path iopath.Kind, pol flush.Kind) {
	t.Helper()
	if pol.DurableWrites() && !iopath.SupportsDSync(path) {
		t.Skipf("flush=%s needs a durable write (RWF_DSYNC), which write path %s has not: the commit log refuses the pair (iopath.ErrNoDSync)", pol, path)
	}
}

func openStore(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := Open(cfg)
	if errors.Is(err, iopath.ErrUnsupported) {
		t.Skipf("write path %s unsupported on this file system: %v", cfg.CommitLog.Path, err)
	}
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

func mustClose(t testing.TB, s *Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// forEachConfig runs body over every write path × flush policy.
func forEachConfig(t *testing.T, body func(t *testing.T, cfg Config)) {
	for _, path := range iopath.Kinds() {
		for _, pol := range flush.AllKinds() {
			t.Run(fmt.Sprintf("path=%s/flush=%s", path, pol), func(t *testing.T) {
				skipNoDSync(t, path, pol)
				t.Parallel()
				body(t, testConfig(t, t.TempDir(), path, pol))
			})
		}
	}
}

// newMsg returns a message for topic/queue with a random body of 1..maxBody
// bytes, KEYS "k<i> all" and TAGS tag.
func newMsg(rng *rand.Rand, topic string, queueID int32, i, maxBody int, tag string) *record.Message {
	body := make([]byte, 1+rng.IntN(maxBody))
	for j := range body {
		body[j] = byte(rng.Uint32())
	}
	props := map[string]string{record.PropertyKeys: fmt.Sprintf("k%d all", i)}
	if tag != "" {
		props[record.PropertyTags] = tag
	}
	return &record.Message{
		Topic: topic, QueueID: queueID, Flag: int32(i), Body: body,
		Properties: record.EncodeProperties(props), BornTimestamp: time.Now().UnixMilli(), BornHost: bornHost,
	}
}

func mustPut(t testing.TB, s *Store, m *record.Message) PutResult {
	t.Helper()
	r, err := s.Put(context.Background(), m)
	if err != nil {
		t.Fatalf("put %s/%d: %v", m.Topic, m.QueueID, err)
	}
	return r
}

func waitDispatched(t testing.TB, s *Store) {
	t.Helper()
	if !s.WaitDispatched(10 * time.Second) {
		t.Fatalf("dispatch stuck at %d of %d", s.DispatchedOffset(), s.CommitLog().MaxOffset())
	}
}

// stored is what a test remembers about a put.
type stored struct {
	topic   string
	queueID int32
	offset  int64
	phys    int64
	body    []byte
	uniq    string
}

// checkRecord verifies that rec (raw bytes) is the stored message.
func checkRecord(t testing.TB, raw []byte, want stored) {
	t.Helper()
	rec, err := record.Decode(raw, true)
	if err != nil {
		t.Fatalf("%s/%d@%d: served record does not decode: %v", want.topic, want.queueID, want.offset, err)
	}
	if string(rec.Topic) != want.topic || rec.QueueID != want.queueID || rec.QueueOffset != want.offset ||
		!bytes.Equal(rec.Body, want.body) || (want.phys >= 0 && rec.PhysicalOffset != want.phys) {
		t.Fatalf("%s/%d@%d: served %s/%d@%d phys %d (want phys %d), body equal %v", want.topic, want.queueID, want.offset,
			rec.Topic, rec.QueueID, rec.QueueOffset, rec.PhysicalOffset, want.phys, bytes.Equal(rec.Body, want.body))
	}
	if rec.BodyCRC != crc32.ChecksumIEEE(rec.Body)&0x7FFFFFFF {
		t.Fatalf("body CRC mismatch")
	}
	if want.uniq != "" {
		if k, _ := rec.Property(record.PropertyUniqKey); string(k) != want.uniq {
			t.Fatalf("UNIQ_KEY %q, want %q", k, want.uniq)
		}
	}
}

// pullAll reads a queue from its min offset to its max with GetMessage and
// returns the raw records by queue offset.
func pullAll(t testing.TB, s *Store, topic string, queueID int32) map[int64][]byte {
	t.Helper()
	out := map[int64][]byte{}
	off := s.GetMinOffsetInQueue(topic, queueID)
	if off < 0 {
		return out
	}
	for guard := 0; guard < 1_000_000; guard++ {
		res, err := s.GetMessage("g", topic, queueID, off, 32, 1<<20, nil)
		if err != nil {
			t.Fatalf("get %s/%d@%d: %v", topic, queueID, off, err)
		}
		switch res.Status {
		case Found:
			for _, m := range res.Messages {
				out[m.QueueOffset] = bytes.Clone(res.Buffer[m.Pos : m.Pos+int(m.Size)])
			}
		case OffsetOverflowOne, NoMessageInQueue:
			return out
		case NoMatchedMessage, OffsetFoundNull, MessageWasRemoving:
		default:
			t.Fatalf("get %s/%d@%d: status %v", topic, queueID, off, res.Status)
		}
		if res.NextBeginOffset <= off {
			t.Fatalf("get %s/%d@%d: next %d does not advance (%v)", topic, queueID, off, res.NextBeginOffset, res.Status)
		}
		off = res.NextBeginOffset
	}
	t.Fatalf("pullAll did not finish")
	return nil
}

// withUniqKeyFor is m as stored when it had no UNIQ_KEY (the key's length
// is fixed, so sizes match).
func withUniqKeyFor(m *record.Message) *record.Message {
	var cp record.Message
	c, _ := withUniqKey(m, &cp, netip.AddrPort{})
	c2 := *c
	c2.StoreHost = netip.MustParseAddrPort("127.0.0.1:10911")
	return &c2
}

type segmentT = segment.Segment

var errorsAs = errors.As

// flipByte inverts one byte of a file.
func flipByte(t testing.TB, path string, pos int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], pos); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xFF
	if _, err := f.WriteAt(b[:], pos); err != nil {
		t.Fatal(err)
	}
}

// walkLog calls fn for every record of the commit log, oldest first,
// skipping end-of-segment blanks; a record that does not read, or that
// claims another physical offset, fails the test. rec and raw alias a
// buffer reused by the next call.
func walkLog(t testing.TB, log *commitlog.Log, fn func(off int64, raw []byte, rec record.Record)) {
	t.Helper()
	var buf []byte
	for off := log.MinOffset(); off < log.MaxOffset(); {
		var rec record.Record
		var err error
		buf, rec, err = log.ReadRecord(off, buf)
		if errors.Is(err, record.ErrBlank) {
			off = log.RollNextFile(off)
			continue
		}
		if err != nil {
			t.Fatalf("recovered log at %d: %v", off, err)
		}
		if rec.PhysicalOffset != off {
			t.Fatalf("record at %d claims physical offset %d", off, rec.PhysicalOffset)
		}
		fn(off, buf[:rec.TotalSize], rec)
		off += int64(rec.TotalSize)
	}
}

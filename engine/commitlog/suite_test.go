package commitlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/segment"
	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
)

// forEachConfig runs body over every write path × flush policy.
func forEachConfig(t *testing.T, body func(t *testing.T, cfg Config)) {
	for _, path := range iopath.Kinds() {
		for _, pol := range flush.AllKinds() {
			t.Run(fmt.Sprintf("path=%s/flush=%s", path, pol), func(t *testing.T) {
				if pol.DurableWrites() && !iopath.SupportsDSync(path) {
					t.Skipf("flush=%s needs a durable write, which write path %s has not (iopath.ErrNoDSync)", pol, path)
				}
				t.Parallel()
				cfg := DefaultConfig(t.TempDir())
				cfg.Path = path
				cfg.Flush = flush.DefaultConfig(pol)
				cfg.Flush.Interval = 5 * time.Millisecond
				cfg.SegmentSize = 64 << 10
				cfg.IO.Pool = iopath.NewBufferPool(4, cfg.SegmentSize)
				// These tests assert behaviour, not timing: on a loaded
				// machine under -race a queue of sync appenders can wait
				// over the 1 s back-pressure limit (tested on its own).
				cfg.BusyTimeout = -1
				body(t, cfg)
			})
		}
	}
}

func openLog(t *testing.T, cfg Config) *Log {
	t.Helper()
	l, err := Open(cfg)
	if errors.Is(err, iopath.ErrUnsupported) {
		t.Skipf("write path %s unsupported on this file system: %v", cfg.Path, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var born = netip.MustParseAddrPort("10.1.2.3:40000")

func msg(rng *rand.Rand, i int, maxBody int) *record.Message {
	body := make([]byte, 1+rng.IntN(maxBody))
	for j := range body {
		body[j] = byte(rng.Uint32())
	}
	return &record.Message{
		Topic:         fmt.Sprintf("topic-%d", i%3),
		QueueID:       int32(i % 4),
		Flag:          int32(i),
		Body:          body,
		Properties:    record.EncodeProperties(map[string]string{"KEYS": fmt.Sprintf("k%d", i), "TAGS": "t"}),
		BornTimestamp: 1700000000000 + int64(i),
		BornHost:      born,
	}
}

func checkRecord(t *testing.T, l *Log, r Result, m *record.Message) {
	t.Helper()
	_, rec, err := l.ReadRecord(r.PhysOffset, nil)
	if err != nil {
		t.Fatalf("read %d: %v", r.PhysOffset, err)
	}
	if !bytes.Equal(rec.Body, m.Body) || string(rec.Topic) != m.Topic || rec.QueueID != m.QueueID ||
		rec.QueueOffset != r.QueueOffset || rec.PhysicalOffset != r.PhysOffset || rec.TotalSize != r.Size ||
		string(rec.Properties) != m.Properties || rec.StoreTimestamp != r.StoreTimestamp || rec.BornHost != m.BornHost {
		t.Fatalf("record at %d does not match what was appended", r.PhysOffset)
	}
	if rec.BodyCRC != crc32.ChecksumIEEE(m.Body)&0x7FFFFFFF {
		t.Fatalf("record at %d: body CRC %x", r.PhysOffset, rec.BodyCRC)
	}
	if r.MsgID() != record.OffsetMsgID(l.cfg.StoreHost, r.PhysOffset) {
		t.Fatalf("msg id %s", r.MsgID())
	}
}

// Many records of random sizes across several rolls; every full segment
// ends with a blank; everything reads back; reopen finds the end.
func TestAppendAcrossRolls(t *testing.T) {
	forEachConfig(t, func(t *testing.T, cfg Config) {
		var rolls []RollEvent
		cfg.OnRoll = func(e RollEvent) { rolls = append(rolls, e) }
		l := openLog(t, cfg)
		rng := rand.New(rand.NewPCG(1, 2))
		var rs []Result
		var ms []*record.Message
		for i := 0; i < 120; i++ {
			m := msg(rng, i, 6000)
			r, err := l.Append(context.Background(), m, int64(i))
			if err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
			rs, ms = append(rs, r), append(ms, m)
		}
		if len(l.Segments()) < 4 {
			t.Fatalf("only %d segments for ~360 KiB in 64 KiB segments", len(l.Segments()))
		}
		if len(rolls) != len(l.Segments()) {
			t.Fatalf("%d roll events for %d segments", len(rolls), len(l.Segments()))
		}
		for i := range rs {
			checkRecord(t, l, rs[i], ms[i])
			if i > 0 && rs[i].PhysOffset < rs[i-1].PhysOffset+int64(rs[i-1].Size) {
				t.Fatalf("records overlap")
			}
		}
		// The files hold what was committed (pool: the background commit of
		// a full segment's buffer may still be running; direct: the staging
		// buffers' writes): wait for the full segments' bytes to reach them.
		full := l.Segments()[:len(l.Segments())-1]
		for deadline := time.Now().Add(10 * time.Second); l.CommittedOffset() < full[len(full)-1].End(); {
			if time.Now().After(deadline) {
				t.Fatalf("committed offset %d never reached the full segments' end %d", l.CommittedOffset(), full[len(full)-1].End())
			}
			time.Sleep(time.Millisecond)
		}
		for _, s := range full {
			checkBlankEnd(t, s)
		}
		end := l.MaxOffset()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l2 := openLog(t, cfg)
		defer l2.Close()
		if l2.MaxOffset() != end {
			t.Fatalf("reopen: max offset %d, want %d (report %+v)", l2.MaxOffset(), end, l2.Report())
		}
		for i := range rs {
			checkRecord(t, l2, rs[i], ms[i])
		}
		m := msg(rng, 999, 100)
		r, err := l2.Append(context.Background(), m, 120)
		if err != nil || r.PhysOffset != end {
			t.Fatalf("append after reopen at %d (want %d): %v", r.PhysOffset, end, err)
		}
		checkRecord(t, l2, r, m)
	})
}

// checkBlankEnd verifies a full segment ends with [remaining][BLANK] and
// zeros, reading the file itself.
func checkBlankEnd(t *testing.T, s *segment.Segment) {
	t.Helper()
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	pos := 0
	for pos < len(data) {
		total := int(int32(binary.BigEndian.Uint32(data[pos:])))
		magic := binary.BigEndian.Uint32(data[pos+4:])
		if magic == 0xCBD43194 {
			if total != len(data)-pos {
				t.Fatalf("%s: blank at %d says %d bytes, %d remain", s.Path(), pos, total, len(data)-pos)
			}
			if !bytes.Equal(data[pos+8:], make([]byte, len(data)-pos-8)) {
				t.Fatalf("%s: bytes after the blank are not zero", s.Path())
			}
			return
		}
		if magic != 0xDAA320A7 || total <= 0 {
			t.Fatalf("%s: bad record at %d (magic %x size %d)", s.Path(), pos, magic, total)
		}
		pos += total
	}
	t.Fatalf("%s: full segment without a blank record", s.Path())
}

// The bytes on disk are RocketMQ's record, built here by hand from the spec.
func TestByteExactOnDisk(t *testing.T) {
	forEachConfig(t, func(t *testing.T, cfg Config) {
		cfg.StoreHost = netip.MustParseAddrPort("10.0.0.5:10911")
		l := openLog(t, cfg)
		defer l.Close()
		props := "TAGS\x01TagA\x02WAIT\x01true\x02UNIQ_KEY\x017F000001000018B4AAC2197A2C0000\x02"
		m := &record.Message{Topic: "TopicTest", QueueID: 3, Body: []byte("hello"), Properties: props,
			BornTimestamp: 1700000000000, BornHost: netip.MustParseAddrPort("127.0.0.1:54321")}
		// A first record so that the one under test is not at offset 0.
		if _, err := l.Append(context.Background(), msg(rand.New(rand.NewPCG(3, 4)), 0, 100), 0); err != nil {
			t.Fatal(err)
		}
		r, err := l.Append(context.Background(), m, 42)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, 0, 165)
		be32 := func(v uint32) { want = binary.BigEndian.AppendUint32(want, v) }
		be64 := func(v uint64) { want = binary.BigEndian.AppendUint64(want, v) }
		be32(165)                  // TOTALSIZE = 91+5+9+60
		be32(0xDAA320A7)           // MAGICCODE v1
		be32(0x3610A686)           // BODYCRC of "hello"
		be32(3)                    // QUEUEID
		be32(0)                    // FLAG
		be64(42)                   // QUEUEOFFSET
		be64(uint64(r.PhysOffset)) // PHYSICALOFFSET
		be32(0)                    // SYSFLAG
		be64(1700000000000)        // BORNTIMESTAMP
		want = append(want, 127, 0, 0, 1)
		be32(54321)                    // BORNHOST
		be64(uint64(r.StoreTimestamp)) // STORETIMESTAMP
		want = append(want, 10, 0, 0, 5)
		be32(10911) // STOREHOSTADDRESS
		be32(0)     // RECONSUMETIMES
		be64(0)     // PREPARED TRANSACTION OFFSET
		be32(5)
		want = append(want, "hello"...)
		want = append(want, 9)
		want = append(want, "TopicTest"...)
		want = binary.BigEndian.AppendUint16(want, 60)
		want = append(want, props...)
		if err := l.Close(); err != nil { // make it visible in the file
			t.Fatal(err)
		}
		seg := filepath.Join(SegmentDir(cfg.Dir), segment.Name(0))
		data, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		got := data[r.PhysOffset : r.PhysOffset+int64(r.Size)]
		if !bytes.Equal(got, want) {
			t.Fatalf("on-disk record:\n got %x\nwant %x", got, want)
		}
		wantID := fmt.Sprintf("0A00000500002A9F%016X", r.PhysOffset)
		if r.MsgID() != wantID {
			t.Fatalf("msg id %s, want %s", r.MsgID(), wantID)
		}
	})
}

// A record that does not fit gets the end-of-file blank and goes to the
// next segment.
func TestEOFBlank(t *testing.T) {
	forEachConfig(t, func(t *testing.T, cfg Config) {
		l := openLog(t, cfg)
		defer l.Close()
		m := &record.Message{Topic: "T", Body: make([]byte, 30000), BornHost: born}
		r1, err := l.Append(context.Background(), m, 0)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := l.Append(context.Background(), m, 1)
		if err != nil {
			t.Fatal(err)
		}
		if r2.PhysOffset != r1.PhysOffset+int64(r1.Size) {
			t.Fatalf("second record at %d", r2.PhysOffset)
		}
		// A third does not fit: blank, then the next segment.
		r3, err := l.Append(context.Background(), m, 2)
		if err != nil {
			t.Fatal(err)
		}
		if r3.PhysOffset != cfg.SegmentSize {
			t.Fatalf("third record at %d, want %d (start of the 2nd segment)", r3.PhysOffset, cfg.SegmentSize)
		}
		blankAt := r2.PhysOffset + int64(r2.Size)
		_, rec, err := l.ReadRecord(blankAt, nil)
		if !errors.Is(err, record.ErrBlank) || int64(rec.TotalSize) != cfg.SegmentSize-blankAt {
			t.Fatalf("read at %d: %v, size %d", blankAt, err, rec.TotalSize)
		}
		if l.RollNextFile(blankAt) != cfg.SegmentSize {
			t.Fatalf("RollNextFile(%d) = %d", blankAt, l.RollNextFile(blankAt))
		}
		if st := l.Stats(); st.Blanks != 1 || st.Appends != 3 {
			t.Fatalf("stats %+v", st)
		}
		l.Flush()
		checkBlankEnd(t, l.Segments()[0])
	})
}

// Concurrent appenders (run with -race): distinct, non-overlapping records,
// each read back intact.
func TestConcurrentAppenders(t *testing.T) {
	forEachConfig(t, func(t *testing.T, cfg Config) {
		cfg.SegmentSize = 256 << 10
		cfg.IO.Pool = iopath.NewBufferPool(4, cfg.SegmentSize)
		l := openLog(t, cfg)
		defer l.Close()
		const workers, per = 8, 60
		var mu sync.Mutex
		type pair struct {
			r Result
			m *record.Message
		}
		var all []pair
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 9))
				for i := 0; i < per; i++ {
					m := msg(rng, w*per+i, 2000)
					r, err := l.Append(context.Background(), m, int64(w*per+i))
					if err != nil {
						t.Error(err)
						return
					}
					if cfg.Flush.Kind != flush.Async && l.FlushedOffset() < r.PhysOffset+int64(r.Size) {
						t.Errorf("acknowledged before flushed under %s", cfg.Flush.Kind)
					}
					mu.Lock()
					all = append(all, pair{r, m})
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		seen := map[int64]bool{}
		for _, p := range all {
			if seen[p.r.PhysOffset] {
				t.Fatalf("two appends at %d", p.r.PhysOffset)
			}
			seen[p.r.PhysOffset] = true
			checkRecord(t, l, p.r, p.m)
		}
		if len(all) != workers*per {
			t.Fatalf("%d results", len(all))
		}
	})
}

// Bad input gets a clear status and nothing is written.
func TestBadInputStatuses(t *testing.T) {
	forEachConfig(t, func(t *testing.T, cfg Config) {
		cfg.MaxBodySize = 1000
		l := openLog(t, cfg)
		defer l.Close()
		ok := func() *record.Message { return &record.Message{Topic: "T", Body: []byte("x"), BornHost: born} }
		cases := []struct {
			name string
			mod  func(m *record.Message)
			want Status
		}{
			{"body over max", func(m *record.Message) { m.Body = make([]byte, 1001) }, MessageIllegal},
			{"bad topic chars", func(m *record.Message) { m.Topic = "a b" }, MessageIllegal},
			{"empty topic", func(m *record.Message) { m.Topic = "" }, MessageIllegal},
			{"topic too long", func(m *record.Message) { m.Topic = strings.Repeat("t", 128) }, MessageIllegal},
			{"properties too long", func(m *record.Message) {
				m.Properties = "K\x01" + strings.Repeat("v", 40000) + "\x02"
			}, PropertiesSizeExceeded},
		}
		for _, c := range cases {
			m := ok()
			c.mod(m)
			_, err := l.Append(context.Background(), m, 0)
			if got := StatusOf(err); got != c.want {
				t.Errorf("%s: status %v (%v), want %v", c.name, got, err, c.want)
			}
		}
		if l.MaxOffset() != 0 {
			t.Fatalf("bad input wrote %d bytes", l.MaxOffset())
		}
		// A record bigger than a segment can never fit.
		cfg2 := cfg
		_ = cfg2
		m := ok()
		m.Body = make([]byte, 999)
		if _, err := l.Append(context.Background(), m, 0); err != nil {
			t.Fatalf("valid append: %v", err)
		}
		// An empty body is a valid record (BODYLENGTH 0, BODYCRC 0), as
		// Java's encoder writes a batch's empty items; the broker refuses
		// single sends without body before the log (record.Validate).
		m = ok()
		m.Body = nil
		r, err := l.Append(context.Background(), m, 1)
		if err != nil {
			t.Fatalf("empty body: %v", err)
		}
		_, rec, err := l.ReadRecord(r.PhysOffset, nil)
		if err != nil || len(rec.Body) != 0 || rec.BodyCRC != 0 || rec.QueueOffset != 1 {
			t.Fatalf("empty body read back: body %q crc %#x, %v", rec.Body, rec.BodyCRC, err)
		}
	})
}

func TestRecordLargerThanSegment(t *testing.T) {
	cfg := DefaultConfig(t.TempDir())
	cfg.SegmentSize = 8192
	l := openLog(t, cfg)
	defer l.Close()
	_, err := l.Append(context.Background(), &record.Message{Topic: "T", Body: make([]byte, 9000), BornHost: born}, 0)
	if StatusOf(err) != MessageIllegal {
		t.Fatalf("status %v (%v)", StatusOf(err), err)
	}
}

// A failed flush is sticky: the failing append and every later one get
// SERVICE_NOT_AVAILABLE wrapping the I/O error, also after the fault clears.
// Under dsync the failing operation is the append's durable write.
func TestStickyFlushError(t *testing.T) {
	forEachConfig(t, func(t *testing.T, cfg Config) {
		inj := faultfs.NewInjector(1)
		cfg.FS = faultfs.Wrap(vfs.Default, inj)
		cfg.Flush.LeastPages = 0
		l := openLog(t, cfg)
		defer l.Close()
		rng := rand.New(rand.NewPCG(5, 6))
		if _, err := l.Append(context.Background(), msg(rng, 0, 100), 0); err != nil {
			t.Fatal(err)
		}
		id := inj.Add(faultfs.Rule{Op: vfs.OpSync, Err: syscall.EIO})
		id2 := inj.Add(faultfs.Rule{Op: vfs.OpMsync, Err: syscall.EIO})
		ids := []faultfs.RuleID{id, id2}
		if cfg.Flush.Kind.DurableWrites() {
			// dsync: the durable write is the flush.
			ids = append(ids, inj.Add(faultfs.Rule{Op: vfs.OpWrite, Err: syscall.EIO}))
		}
		var err error
		deadline := time.Now().Add(10 * time.Second)
		for i := 1; err == nil && time.Now().Before(deadline); i++ {
			_, err = l.Append(context.Background(), msg(rng, i, 100), int64(i))
			if cfg.Flush.Kind == flush.Async && err == nil {
				time.Sleep(2 * time.Millisecond)
			}
		}
		if !errors.Is(err, syscall.EIO) || StatusOf(err) != ServiceNotAvailable {
			t.Fatalf("err = %v (status %v), want SERVICE_NOT_AVAILABLE wrapping EIO", err, StatusOf(err))
		}
		for _, id := range ids {
			inj.Remove(id)
		}
		for i := 0; i < 3; i++ {
			_, err := l.Append(context.Background(), msg(rng, 100+i, 100), 0)
			if !errors.Is(err, syscall.EIO) {
				t.Fatalf("append after the fault cleared: %v, want sticky EIO", err)
			}
		}
		if _, err := l.Flush(); !errors.Is(err, syscall.EIO) {
			t.Fatalf("Flush after failure: %v", err)
		}
	})
}

// Back pressure: while the append lock's holder has held it longer than
// BusyTimeout, a new append is refused at once with OS_PAGE_CACHE_BUSY,
// without waiting for the lock, and writes nothing.
func TestOSPageCacheBusy(t *testing.T) {
	inj := faultfs.NewInjector(1)
	cfg := DefaultConfig(t.TempDir())
	cfg.FS = faultfs.Wrap(vfs.Default, inj)
	cfg.Path = iopath.Pwrite
	cfg.Flush = flush.DefaultConfig(flush.Sync)
	cfg.SegmentSize = 1 << 20
	cfg.BusyTimeout = 50 * time.Millisecond
	l := openLog(t, cfg)
	defer l.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	inj.Add(faultfs.Rule{Op: vfs.OpSync, When: faultfs.OnlyNth(1), Delay: 2 * time.Second})
	slow := make(chan error, 1)
	go func() { _, err := l.Append(context.Background(), msg(rng, 0, 100), 0); slow <- err }()
	for l.LockHeldFor() <= cfg.BusyTimeout {
		time.Sleep(time.Millisecond)
	}
	_, err := l.Append(context.Background(), msg(rand.New(rand.NewPCG(9, 9)), 1, 100), 1)
	if StatusOf(err) != OSPageCacheBusy {
		t.Fatalf("append behind a 2 s flush: %v, want OS_PAGE_CACHE_BUSY", err)
	}
	select {
	case <-slow:
		t.Fatalf("the refusal waited for the append lock instead of failing fast")
	default:
	}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Appends != 1 || st.BusyRefused != 1 {
		t.Fatalf("appends %d, refused %d: the refused append must write nothing", st.Appends, st.BusyRefused)
	}
	// Once the holder is done, appends go through again.
	if _, err := l.Append(context.Background(), msg(rand.New(rand.NewPCG(9, 9)), 1, 100), 1); err != nil {
		t.Fatalf("append after the slow one: %v", err)
	}
}

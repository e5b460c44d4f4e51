package store

import (
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
)

// fixedMsg is a message with a body of exactly n bytes.
func fixedMsg(topic string, q int32, n int, tag string) *record.Message {
	props := map[string]string{}
	if tag != "" {
		props[record.PropertyTags] = tag
	}
	body := make([]byte, n)
	for i := range body {
		body[i] = byte(i * 7)
	}
	return &record.Message{Topic: topic, QueueID: q, Body: body, Properties: record.EncodeProperties(props),
		BornTimestamp: time.Now().UnixMilli(), BornHost: bornHost}
}

func get(t *testing.T, s *Store, topic string, q int32, off int64, n, bytes int, f MessageFilter) GetResult {
	t.Helper()
	res, err := s.GetMessage("g", topic, q, off, n, bytes, f)
	if err != nil {
		t.Fatalf("get %s/%d@%d: %v", topic, q, off, err)
	}
	return res
}

func expectStatus(t *testing.T, res GetResult, status GetMessageStatus, next int64) {
	t.Helper()
	if res.Status != status || res.NextBeginOffset != next {
		t.Fatalf("status %v next %d, want %v next %d", res.Status, res.NextBeginOffset, status, next)
	}
}

// Every GetMessageStatus with RocketMQ's nextBeginOffset rule.
func TestGetStatuses(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Async)
	s := openStore(t, cfg)
	defer mustClose(t, s)

	expectStatus(t, get(t, s, "NOPE", 0, 0, 32, 1<<20, nil), NoMatchedLogicQueue, 0)
	if _, err := s.cq.Queue("EMPTY", 3, true); err != nil { // a queue without messages
		t.Fatal(err)
	}
	expectStatus(t, get(t, s, "EMPTY", 3, 0, 32, 1<<20, nil), NoMessageInQueue, 0)

	for i := 0; i < 10; i++ {
		mustPut(t, s, fixedMsg("T", 0, 100, "a"))
	}
	waitDispatched(t, s)
	expectStatus(t, get(t, s, "T", 0, 10, 32, 1<<20, nil), OffsetOverflowOne, 10)
	expectStatus(t, get(t, s, "T", 0, 15, 32, 1<<20, nil), OffsetOverflowBadly, 10)
	expectStatus(t, get(t, s, "T", 0, -1, 32, 1<<20, nil), OffsetTooSmall, 0)
	res := get(t, s, "T", 0, 3, 4, 1<<20, nil)
	expectStatus(t, res, Found, 7)
	if len(res.Messages) != 4 || res.MinOffset != 0 || res.MaxOffset != 10 {
		t.Fatalf("%d messages, min %d max %d", len(res.Messages), res.MinOffset, res.MaxOffset)
	}
	for i, m := range res.Messages {
		if m.QueueOffset != int64(3+i) {
			t.Fatalf("message %d has queue offset %d", i, m.QueueOffset)
		}
		checkRecord(t, res.Buffer[m.Pos:m.Pos+int(m.Size)], stored{"T", 0, m.QueueOffset, m.PhysOffset, fixedMsg("T", 0, 100, "").Body, ""})
	}
	expectStatus(t, get(t, s, "T", 0, 0, 32, 1<<20, NewTagFilter("zzz")), NoMatchedMessage, 10)

	// MESSAGE_WAS_REMOVING: units whose commit-log segments were deleted
	// (the consume queue not cleaned yet). 100 records of ~3.1 KiB fill 5
	// segments; the first 4 hold queue offsets 0..79, so the whole first
	// consume-queue file (offsets 0..63) refers to removed bytes.
	for i := 0; i < 100; i++ {
		mustPut(t, s, fixedMsg("R", 0, 3000, ""))
	}
	waitDispatched(t, s)
	first := s.CommitLog().Segments()[4].Start()
	if n, err := s.CommitLog().DeleteOldest(4, func(seg *segmentT) bool { return true }); err != nil || n != 4 {
		t.Fatalf("delete: %d %v", n, err)
	}
	if s.CommitLog().MinOffset() != first {
		t.Fatalf("min offset %d, want %d", s.CommitLog().MinOffset(), first)
	}
	expectStatus(t, get(t, s, "R", 0, 0, 32, 1<<20, nil), MessageWasRemoving, 64)
	res = get(t, s, "R", 0, 64, 32, 1<<20, nil)
	if res.Status != Found || res.Messages[0].PhysOffset < first {
		t.Fatalf("after the removed part: %v, first phys %d", res.Status, res.Messages[0].PhysOffset)
	}

	// OFFSET_FOUND_NULL: a unit far ahead leaves consume-queue files
	// 1 and 2 (offsets 64..191) uncreated.
	q, err := s.cq.Queue("G", 0, true)
	if err != nil {
		t.Fatal(err)
	}
	u := consumequeue.Unit{PhyOffset: res.Messages[0].PhysOffset, Size: res.Messages[0].Size}
	if err := q.Put(0, u); err != nil {
		t.Fatal(err)
	}
	u.PhyOffset += int64(u.Size)
	if err := q.Put(200, u); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, get(t, s, "G", 0, 100, 32, 1<<20, nil), OffsetFoundNull, 128)

	st := s.Stats()
	for _, name := range []string{"FOUND", "NO_MATCHED_LOGIC_QUEUE", "NO_MESSAGE_IN_QUEUE", "OFFSET_OVERFLOW_ONE",
		"OFFSET_OVERFLOW_BADLY", "OFFSET_TOO_SMALL", "NO_MATCHED_MESSAGE", "MESSAGE_WAS_REMOVING", "OFFSET_FOUND_NULL"} {
		if st.GetStatus[name] == 0 {
			t.Fatalf("no %s counted: %v", name, st.GetStatus)
		}
	}
}

// The tag filter selects by the units' tags hash codes.
func TestTagFilter(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Pwrite, flush.Async)
	s := openStore(t, cfg)
	defer mustClose(t, s)
	tags := []string{"A", "B", "C", ""}
	for i := 0; i < 40; i++ {
		mustPut(t, s, fixedMsg("T", 0, 50, tags[i%4]))
	}
	waitDispatched(t, s)
	pull := func(expr string) []int64 {
		var offs []int64
		for off := int64(0); off < 40; {
			res := get(t, s, "T", 0, off, 32, 1<<20, NewTagFilter(expr))
			for _, m := range res.Messages {
				offs = append(offs, m.QueueOffset)
				rec, err := record.Decode(res.Buffer[m.Pos:m.Pos+int(m.Size)], true)
				if err != nil {
					t.Fatal(err)
				}
				if tg, _ := rec.Property(record.PropertyTags); expr != "*" && string(tg) != "A" && string(tg) != "C" {
					t.Fatalf("filter %q served tag %q", expr, tg)
				}
			}
			off = res.NextBeginOffset
		}
		return offs
	}
	if got := pull("A"); len(got) != 10 || got[0] != 0 || got[1] != 4 {
		t.Fatalf("A: %v", got)
	}
	if got := pull("A || C"); len(got) != 20 {
		t.Fatalf("A || C: %d messages", len(got))
	}
	if got := pull("*"); len(got) != 40 {
		t.Fatalf("*: %d messages", len(got))
	}
	f := NewTagFilter("X||Y")
	if len(f.Tags()) != 2 || f.MatchesConsumeQueue(record.TagsCode("A")) || !f.MatchesConsumeQueue(record.TagsCode("Y")) {
		t.Fatalf("X||Y filter: %v", f.Tags())
	}
}

// Pull caps: 32 messages / 256 KiB when the data is within 40 % of RAM from
// the log's end, 8 / 64 KiB otherwise (RAM injected), and the caller's
// own count and byte limits.
func TestPullCapsHotAndCold(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		ram                  int64
		countCap, bytesLimit int
		suggestSlave         bool
	}{
		{"hot", 1 << 40, 32, 256 << 10, false},
		{"cold", 1 << 10, 8, 64 << 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Async)
			cfg.TotalMemoryBytes = tc.ram
			cfg.CommitLog.SegmentSize = 1 << 20
			s := openStore(t, cfg)
			defer mustClose(t, s)
			for i := 0; i < 100; i++ {
				mustPut(t, s, fixedMsg("small", 0, 100, ""))
			}
			var bigSize int64
			for i := 0; i < 40; i++ {
				bigSize = mustPut(t, s, fixedMsg("big", 0, 10000, "")).WroteBytes
			}
			waitDispatched(t, s)
			res := get(t, s, "small", 0, 0, 100, 64<<20, nil)
			if len(res.Messages) != tc.countCap || res.NextBeginOffset != int64(tc.countCap) {
				t.Fatalf("small: %d messages, next %d, want %d", len(res.Messages), res.NextBeginOffset, tc.countCap)
			}
			if res.SuggestPullingFromSlave != tc.suggestSlave {
				t.Fatalf("suggestPullingFromSlave %v", res.SuggestPullingFromSlave)
			}
			res = get(t, s, "big", 0, 0, 100, 64<<20, nil)
			if want := tc.bytesLimit / int(bigSize); len(res.Messages) != want {
				t.Fatalf("big: %d messages of %d bytes, want %d", len(res.Messages), bigSize, want)
			}
			if got := get(t, s, "small", 0, 0, 5, 64<<20, nil); len(got.Messages) != 5 {
				t.Fatalf("maxMsgNums 5: %d", len(got.Messages))
			}
			if got := get(t, s, "big", 0, 0, 100, int(3*bigSize), nil); len(got.Messages) != 3 {
				t.Fatalf("maxBytes 3 records: %d", len(got.Messages))
			}
			if got := get(t, s, "big", 0, 0, 100, 1, nil); len(got.Messages) != 1 {
				t.Fatalf("a first message over maxBytes is still served: %d", len(got.Messages))
			}
		})
	}
}

// A record whose bytes were damaged after it was dispatched is reported as
// corruption naming segment and offset, and never served.
func TestGetNeverServesCorruptRecord(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Pwrite, flush.Sync)
	s := openStore(t, cfg)
	defer mustClose(t, s)
	var rs []PutResult
	for i := 0; i < 5; i++ {
		rs = append(rs, mustPut(t, s, fixedMsg("T", 0, 200, "")))
	}
	waitDispatched(t, s)
	seg := s.CommitLog().Segments()[0]
	flipByte(t, seg.Path(), rs[2].WroteOffset-seg.Start()+100) // inside the body
	res := get(t, s, "T", 0, 0, 32, 1<<20, nil)
	if res.Status != Found || len(res.Messages) != 2 || res.NextBeginOffset != 2 {
		t.Fatalf("before the corrupt record: %v, %d messages, next %d", res.Status, len(res.Messages), res.NextBeginOffset)
	}
	_, err := s.GetMessage("g", "T", 0, 2, 32, 1<<20, nil)
	var ce *CorruptionError
	if !IsCorruption(err) || !errorsAs(err, &ce) || ce.Path != seg.Path() || ce.Offset != rs[2].WroteOffset {
		t.Fatalf("corrupt record: %v", err)
	}
	if _, _, err := s.LookMessageByOffset(rs[2].WroteOffset); !IsCorruption(err) {
		t.Fatalf("lookup of the corrupt record: %v", err)
	}
	if s.Stats().GetCorrupt == 0 {
		t.Fatalf("corrupt reads not counted")
	}
}

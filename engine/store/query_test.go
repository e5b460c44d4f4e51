package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
)

// Index lookups by KEYS entry and by UNIQ_KEY, across index-file rolls,
// within a time range.
func TestQueryMessageByKey(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Group)
	s := openStore(t, cfg)
	defer mustClose(t, s)
	rng := rand.New(rand.NewPCG(3, 3))
	var rs []PutResult
	var bodies [][]byte
	for i := 0; i < 300; i++ {
		m := newMsg(rng, "T", int32(i%2), i, 200, "")
		rs = append(rs, mustPut(t, s, m))
		bodies = append(bodies, m.Body)
	}
	mustPut(t, s, newMsg(rng, "OTHER", 0, 5, 10, "")) // same key, other topic
	waitDispatched(t, s)
	if n := len(s.idx.Files()); n < 3 {
		t.Fatalf("only %d index files (3 keys per message, 256 entries per file)", n)
	}
	now := time.Now().UnixMilli()
	for _, i := range []int{0, 5, 150, 299} {
		res, err := s.QueryMessage("T", fmt.Sprintf("k%d", i), 64, 0, now+1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Offsets) != 1 || res.Offsets[0] != rs[i].WroteOffset {
			t.Fatalf("k%d: offsets %v, want [%d]", i, res.Offsets, rs[i].WroteOffset)
		}
		rec, err := record.Decode(res.Buffer, true)
		if err != nil || !bytes.Equal(rec.Body, bodies[i]) {
			t.Fatalf("k%d: record %v", i, err)
		}
		byUniq, err := s.QueryMessage("T", rs[i].UniqKey, 64, 0, now+1000)
		if err != nil || len(byUniq.Offsets) != 1 || byUniq.Offsets[0] != rs[i].WroteOffset {
			t.Fatalf("uniq key of %d: %v %v", i, byUniq.Offsets, err)
		}
	}
	all, err := s.QueryMessage("T", "all", 1000, 0, now+1000)
	if err != nil || len(all.Offsets) != 64 {
		t.Fatalf("key on every message: %d results (max 64), %v", len(all.Offsets), err)
	}
	if all.Offsets[0] != rs[299].WroteOffset {
		t.Fatalf("newest first: got %d, want %d", all.Offsets[0], rs[299].WroteOffset)
	}
	if all.IndexLastUpdatePhyOffset <= 0 || all.IndexLastUpdateTimestamp <= 0 {
		t.Fatalf("index last update %d/%d", all.IndexLastUpdatePhyOffset, all.IndexLastUpdateTimestamp)
	}
	if res, _ := s.QueryMessage("T", "k5", 64, now+60_000, now+120_000); len(res.Offsets) != 0 {
		t.Fatalf("a time range after every message found %v", res.Offsets)
	}
	if res, _ := s.QueryMessage("T", "nosuchkey", 64, 0, now+1000); len(res.Offsets) != 0 {
		t.Fatalf("unknown key found %v", res.Offsets)
	}
}

// VIEW_MESSAGE_BY_ID: the offset message id decodes to the record.
func TestLookMessageByMsgID(t *testing.T) {
	forEachConfig(t, func(t *testing.T, cfg Config) {
		s := openStore(t, cfg)
		defer mustClose(t, s)
		rng := rand.New(rand.NewPCG(4, 4))
		var rs []PutResult
		var ms []*record.Message
		for i := 0; i < 40; i++ {
			m := newMsg(rng, "T", 0, i, 4000, "")
			rs, ms = append(rs, mustPut(t, s, m)), append(ms, m)
		}
		waitDispatched(t, s)
		for i, r := range rs {
			raw, rec, err := s.LookMessageByMsgID(r.MsgID())
			if err != nil {
				t.Fatalf("%d: %v", i, err)
			}
			if !bytes.Equal(rec.Body, ms[i].Body) || int64(len(raw)) != r.WroteBytes || rec.PhysicalOffset != r.WroteOffset {
				t.Fatalf("%d: wrong record", i)
			}
		}
		if _, _, err := s.LookMessageByMsgID("nothex"); err == nil {
			t.Fatalf("bad id accepted")
		}
		if _, _, err := s.LookMessageByOffset(s.CommitLog().MaxOffset() + 100); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("offset past the end: %v", err)
		}
	})
}

// SEARCH_OFFSET_BY_TIMESTAMP over several consume-queue files, compared
// with the store timestamps the puts returned.
func TestSearchOffsetByTime(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Pwrite, flush.Async)
	s := openStore(t, cfg)
	defer mustClose(t, s)
	var ts []int64
	for g := 0; g < 15; g++ {
		for i := 0; i < 10; i++ {
			ts = append(ts, mustPut(t, s, fixedMsg("T", 0, 50, "")).StoreTimestamp)
		}
		time.Sleep(3 * time.Millisecond)
	}
	waitDispatched(t, s)
	lower := func(q int64) int64 {
		for i, v := range ts {
			if v >= q {
				return int64(i)
			}
		}
		return int64(len(ts))
	}
	upper := func(q int64) int64 {
		r := int64(0)
		for i, v := range ts {
			if v <= q {
				r = int64(i)
			}
		}
		return r
	}
	for _, q := range []int64{ts[0], ts[15], ts[64], ts[70] + 1, ts[100] - 1, ts[149]} {
		got, err := s.GetOffsetInQueueByTime("T", 0, q, BoundaryLower)
		if err != nil || got != lower(q) {
			t.Fatalf("lower(%d): %d %v, want %d", q, got, err, lower(q))
		}
		got, err = s.GetOffsetInQueueByTime("T", 0, q, BoundaryUpper)
		if err != nil || got != upper(q) {
			t.Fatalf("upper(%d): %d %v, want %d", q, got, err, upper(q))
		}
	}
	if got, _ := s.GetOffsetInQueueByTime("T", 0, ts[0]-1000, BoundaryLower); got != 0 {
		t.Fatalf("before everything: %d", got)
	}
	if got, _ := s.GetOffsetInQueueByTime("T", 0, ts[149]+1000, BoundaryLower); got != 150 {
		t.Fatalf("after everything: %d", got)
	}
	if got, _ := s.GetOffsetInQueueByTime("NOPE", 0, ts[0], BoundaryLower); got != 0 {
		t.Fatalf("unknown queue: %d", got)
	}
	if e, err := s.GetEarliestMessageTime("T", 0); err != nil || e != ts[0] {
		t.Fatalf("earliest %d %v, want %d", e, err, ts[0])
	}
	if e, err := s.GetMessageStoreTimestamp("T", 0, 77); err != nil || e != ts[77] {
		t.Fatalf("store time of 77: %d %v", e, err)
	}
	if e, err := s.CommitLogEarliestTime(); err != nil || e != ts[0] {
		t.Fatalf("commit log earliest %d %v", e, err)
	}
}

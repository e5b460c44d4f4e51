package store

import (
	"context"
	"testing"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
)

// TestEmptyBodyPutGetRecover: messages with an empty body (a batch's empty
// items in Java; a retry or a due delayed message re-put from one) are
// stored with BODYLENGTH 0 and BODYCRC 0, dispatched, served by GetMessage,
// LookMessageByOffset and QueryMessage, and found again by a normal and by
// an abnormal (crash) recovery.
func TestEmptyBodyPutGetRecover(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Pool, flush.Sync)
	s := openStore(t, cfg)
	ctx := context.Background()
	msg := func(i int, body []byte) *record.Message {
		return &record.Message{Topic: "E", Flag: int32(i), Body: body, BornHost: bornHost,
			Properties: record.EncodeProperties(map[string]string{record.PropertyKeys: "empty" + string(rune('0'+i)), record.PropertyTags: "t"})}
	}
	single, err := s.Put(ctx, msg(0, nil))
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if _, err := s.PutBatch(ctx, []*record.Message{msg(1, []byte("x")), msg(2, []byte{}), msg(3, nil)}); err != nil {
		t.Fatalf("put batch: %v", err)
	}
	waitDispatched(t, s)

	check := func(s *Store, what string) {
		t.Helper()
		got := pullAll(t, s, "E", 0)
		if len(got) != 4 {
			t.Fatalf("%s: %d records, want 4", what, len(got))
		}
		for off, raw := range got {
			want := stored{topic: "E", offset: off, phys: -1}
			if off == 1 {
				want.body = []byte("x")
			}
			checkRecord(t, raw, want) // decodes with the CRC check
			rec, _ := record.Decode(raw, true)
			if rec.Flag != int32(off) || (off != 1 && (len(rec.Body) != 0 || rec.BodyCRC != 0)) {
				t.Fatalf("%s: offset %d: flag %d body %q crc %#x", what, off, rec.Flag, rec.Body, rec.BodyCRC)
			}
		}
		_, rec, err := s.LookMessageByOffset(single.WroteOffset)
		if err != nil || len(rec.Body) != 0 || rec.BodyCRC != 0 || rec.QueueOffset != 0 {
			t.Fatalf("%s: LookMessageByOffset: body %q crc %#x offset %d, %v", what, rec.Body, rec.BodyCRC, rec.QueueOffset, err)
		}
		q, err := s.QueryMessage("E", "empty3", 8, 0, 1<<62)
		if err != nil || len(q.Offsets) != 1 {
			t.Fatalf("%s: query by key: %d found, %v", what, len(q.Offsets), err)
		}
		if r, err := record.Decode(q.Buffer, true); err != nil || len(r.Body) != 0 || r.Flag != 3 {
			t.Fatalf("%s: queried record: flag %d body %q, %v", what, r.Flag, r.Body, err)
		}
	}
	check(s, "after put")
	mustClose(t, s)

	s = openStore(t, cfg)
	check(s, "after a clean restart")
	mustClose(t, s)

	simulateCrash(t, cfg.Root)
	s = openStore(t, cfg)
	defer mustClose(t, s)
	if rep := s.Recovery(); !rep.Abnormal || rep.Corruption != nil || rep.End != s.CommitLog().MaxOffset() {
		t.Fatalf("crash recovery %+v", rep)
	}
	check(s, "after crash recovery")
	// The queue continues after the recovered empty records.
	if r := mustPut(t, s, msg(4, nil)); r.QueueOffset != 4 {
		t.Fatalf("next put at queue offset %d, want 4", r.QueueOffset)
	}
}

package main

import (
	"os"
	"path/filepath"
	"testing"
)

func mkAck(cycle int, flush string, q int32, off int64, id string) ack {
	return ack{cycle: cycle, flush: flush, topic: "T", queueID: q, offset: off, bodySHA: "sha-" + id, uniq: "u-" + id, seq: "s-" + id}
}

func storedAs(a ack) stored { return stored{bodySHA: a.bodySHA, uniq: a.uniq, seq: a.seq} }

func TestCheckAcks(t *testing.T) {
	surv := mkAck(0, "group", 0, 0, "a")
	group := mkAck(1, "group", 0, 1, "b")
	async1 := mkAck(1, "async", 1, 0, "c")
	async2 := mkAck(1, "async", 1, 1, "d")
	maxOff := map[queueSlot]int64{{"T", 0, 0}: 2, {"T", 1, 0}: 1}
	found := map[queueSlot]stored{surv.slot(): storedAs(surv), group.slot(): storedAs(group), async1.slot(): storedAs(async1)}

	var res checkResult
	next := checkAcks([]ack{surv}, []ack{group, async1, async2}, found, maxOff, false, &res)
	if res.lost != 0 || res.corrupt != 0 || res.asyncLost != 1 || res.acknowledged != 3 || res.required != 2 {
		t.Fatalf("clean prefix: %+v", res)
	}
	if len(next) != 3 {
		t.Fatalf("survivors %v, want the three present", next)
	}

	res = checkResult{}
	checkAcks(nil, []ack{async1, async2}, found, maxOff, true, &res)
	if res.lost != 1 {
		t.Fatalf("strict async: %+v, want the missing one lost", res)
	}

	res = checkResult{}
	delete(found, group.slot())
	checkAcks([]ack{surv}, []ack{group}, found, maxOff, false, &res)
	if res.lost != 1 {
		t.Fatalf("missing group ack: %+v", res)
	}

	res = checkResult{}
	found[group.slot()] = stored{bodySHA: "other", uniq: "other", seq: "other"}
	checkAcks(nil, []ack{group}, found, maxOff, false, &res)
	if res.corrupt != 1 {
		t.Fatalf("slot holding another message: %+v", res)
	}

	res = checkResult{}
	gapFound := map[queueSlot]stored{async2.slot(): storedAs(async2)}
	checkAcks(nil, []ack{async1, async2}, gapFound, maxOff, false, &res)
	if res.corrupt != 1 {
		t.Fatalf("async loss below a present message: %+v, want it flagged as not a clean prefix", res)
	}
}

func TestAckFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acks")
	in := []ack{mkAck(0, "sync", 0, 0, "a"), mkAck(3, "async", 2, 7, "b")}
	if err := writeAcks(path, in); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("ACK 4 async T 1") // a torn last line is ignored
	f.Close()
	out, err := readAcks(path)
	if err != nil || len(out) != 2 || out[0] != in[0] || out[1] != in[1] {
		t.Fatalf("read back %v, %v", out, err)
	}
	if missing, err := readAcks(filepath.Join(t.TempDir(), "none")); err != nil || missing != nil {
		t.Fatalf("missing file: %v %v", missing, err)
	}
}

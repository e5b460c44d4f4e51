package consumequeue

import (
	"encoding/hex"
	"math"
	"testing"
)

// The consume-queue unit of the worked example in rocketmq-store.md §1.7:
// phyOffset 1073741824, TOTALSIZE 165, tagsCode "TagA".hashCode() = 2598919.
func TestUnitEncodingWorkedExample(t *testing.T) {
	u := Unit{PhyOffset: 1073741824, Size: 0xa5, TagsCode: 2598919}
	var b [UnitSize]byte
	u.Encode(b[:])
	const want = "0000000040000000" + "000000a5" + "000000000027a807"
	if got := hex.EncodeToString(b[:]); got != want {
		t.Fatalf("encoding = %s, want %s", got, want)
	}
	if back := DecodeUnit(b[:]); back != u {
		t.Fatalf("decode = %+v, want %+v", back, u)
	}
}

func TestUnitOnDiskBytes(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 10)
	if err := q.Put(0, Unit{PhyOffset: 1073741824, Size: 0xa5, TagsCode: 2598919}); err != nil {
		t.Fatal(err)
	}
	// A negative tags hash is sign-extended.
	if err := q.Put(1, Unit{PhyOffset: 1073741824 + 0xa5, Size: 10, TagsCode: -2}); err != nil {
		t.Fatal(err)
	}
	b := readFileBytes(t, segPath(q, 0))
	if len(b) != 200 {
		t.Fatalf("file size %d, want 200 (preallocated)", len(b))
	}
	want := "0000000040000000000000a5000000000027a807" +
		"00000000400000a50000000afffffffffffffffe"
	if got := hex.EncodeToString(b[:40]); got != want {
		t.Fatalf("file bytes = %s, want %s", got, want)
	}
}

func TestBlankUnit(t *testing.T) {
	var b [UnitSize]byte
	BlankUnit.Encode(b[:])
	if got := hex.EncodeToString(b[:]); got != "00000000000000007fffffff0000000000000000" {
		t.Fatalf("blank = %s", got)
	}
	if !BlankUnit.IsBlank() || (Unit{Size: math.MaxInt32, PhyOffset: 1}).IsBlank() {
		t.Fatal("IsBlank wrong")
	}
}

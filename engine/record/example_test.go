package record

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"
)

// workedExampleHex is the hex dump of rocketmq-store.md §1.7, copied by hand.
const workedExampleHex = `
0000  00 00 00 a5 da a3 20 a7 36 10 a6 86 00 00 00 03
0010  00 00 00 00 00 00 00 00 00 00 00 2a 00 00 00 00
0020  40 00 00 00 00 00 00 00 00 00 01 8b cf e5 68 00
0030  7f 00 00 01 00 00 d4 31 00 00 01 8b cf e5 68 05
0040  0a 00 00 05 00 00 2a 9f 00 00 00 00 00 00 00 00
0050  00 00 00 00 00 00 00 05 68 65 6c 6c 6f 09 54 6f
0060  70 69 63 54 65 73 74 00 3c 54 41 47 53 01 54 61
0070  67 41 02 57 41 49 54 01 74 72 75 65 02 55 4e 49
0080  51 5f 4b 45 59 01 37 46 30 30 30 30 30 31 30 30
0090  30 30 31 38 42 34 41 41 43 32 31 39 37 41 32 43
00a0  30 30 30 30 02
`

// parseDump turns "offset  bytes..." lines into bytes, dropping the offsets.
func parseDump(t *testing.T, dump string) []byte {
	t.Helper()
	var out []byte
	for _, line := range strings.Split(strings.TrimSpace(dump), "\n") {
		fields := strings.Fields(line)
		b, err := hex.DecodeString(strings.Join(fields[1:], ""))
		if err != nil {
			t.Fatalf("bad dump line %q: %v", line, err)
		}
		out = append(out, b...)
	}
	return out
}

func workedExampleMessage() Message {
	return Message{
		Topic:         "TopicTest",
		QueueID:       3,
		Body:          []byte("hello"),
		Properties:    "TAGS\x01TagA\x02WAIT\x01true\x02UNIQ_KEY\x017F000001000018B4AAC2197A2C0000\x02",
		BornTimestamp: 1700000000000,
		BornHost:      netip.MustParseAddrPort("127.0.0.1:54321"),
		StoreHost:     netip.MustParseAddrPort("10.0.0.5:10911"),
	}
}

const (
	exampleQueueOffset = 42
	examplePhysOffset  = 1073741824
	exampleStoreTS     = 1700000000005
)

func TestWorkedExampleEncode(t *testing.T) {
	want := parseDump(t, workedExampleHex)
	if len(want) != 165 {
		t.Fatalf("dump has %d bytes, want 165", len(want))
	}
	m := workedExampleMessage()
	if len(m.Properties) != 60 {
		t.Fatalf("properties %d bytes, want 60", len(m.Properties))
	}
	if crc := BodyCRC(m.Body); crc != 0x3610A686 {
		t.Fatalf("BodyCRC = %#x, want 0x3610A686", crc)
	}
	size, err := m.Size()
	if err != nil || size != 165 {
		t.Fatalf("Size = %d, %v; want 165", size, err)
	}
	got, err := AppendEncode(nil, &m, BodyCRC(m.Body), exampleQueueOffset, examplePhysOffset, exampleStoreTS)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding differs\n got %x\nwant %x", got, want)
	}

	// Encoding with zero placeholders and patching gives the same bytes.
	pre, err := AppendEncode([]byte("prefix"), &m, BodyCRC(m.Body), 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	Patch(pre[6:], exampleQueueOffset, examplePhysOffset, exampleStoreTS)
	if string(pre[:6]) != "prefix" || !bytes.Equal(pre[6:], want) {
		t.Fatalf("patched encoding differs\n got %x\nwant %x", pre[6:], want)
	}
}

func TestWorkedExampleDecode(t *testing.T) {
	b := parseDump(t, workedExampleHex)
	r, err := Decode(append(b, 0xEE, 0xEE), true) // trailing bytes are ignored
	if err != nil {
		t.Fatal(err)
	}
	m := workedExampleMessage()
	checks := []struct {
		name      string
		got, want any
	}{
		{"TotalSize", r.TotalSize, int32(165)},
		{"Magic", r.Magic, MagicV1},
		{"BodyCRC", r.BodyCRC, uint32(0x3610A686)},
		{"QueueID", r.QueueID, int32(3)},
		{"Flag", r.Flag, int32(0)},
		{"QueueOffset", r.QueueOffset, int64(42)},
		{"PhysicalOffset", r.PhysicalOffset, int64(1073741824)},
		{"SysFlag", r.SysFlag, int32(0)},
		{"BornTimestamp", r.BornTimestamp, int64(1700000000000)},
		{"BornHost", r.BornHost, m.BornHost},
		{"StoreTimestamp", r.StoreTimestamp, int64(1700000000005)},
		{"StoreHost", r.StoreHost, m.StoreHost},
		{"ReconsumeTimes", r.ReconsumeTimes, int32(0)},
		{"PreparedTransactionOffset", r.PreparedTransactionOffset, int64(0)},
		{"Body", string(r.Body), "hello"},
		{"Topic", string(r.Topic), "TopicTest"},
		{"Properties", string(r.Properties), m.Properties},
		{"TagsCode", r.TagsCode(), int64(2598919)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if ts, err := PeekStoreTimestamp(b); err != nil || ts != exampleStoreTS {
		t.Errorf("PeekStoreTimestamp = %d, %v", ts, err)
	}
	if id := OffsetMsgID(r.StoreHost, r.PhysicalOffset); id != "0A00000500002A9F0000000040000000" {
		t.Errorf("OffsetMsgID = %s", id)
	}
	if TagsCode("TagA") != 2598919 || TagsCode("TagA") != 0x0027a807 {
		t.Errorf("TagsCode(TagA) = %d", TagsCode("TagA"))
	}
	if v, ok := r.Property(PropertyUniqKey); !ok || string(v) != "7F000001000018B4AAC2197A2C0000" {
		t.Errorf("UNIQ_KEY = %q, %v", v, ok)
	}
}

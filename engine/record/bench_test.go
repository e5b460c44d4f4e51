package record

// Run and compare:
//
//	go test -run '^$' -bench . -count 10 ./engine/record/ | tee new.txt
//	benchstat -col /crc new.txt

import (
	"fmt"
	"net/netip"
	"testing"
)

var benchSizes = []int{128, 1024, 4096}

// benchMessage is a typical producer message with a body of n bytes.
func benchMessage(n int) Message {
	body := make([]byte, n)
	for i := range body {
		body[i] = byte(i * 7)
	}
	return Message{
		Topic:         "TopicTest",
		QueueID:       3,
		Body:          body,
		Properties:    "TAGS\x01TagA\x02WAIT\x01true\x02UNIQ_KEY\x017F000001000018B4AAC2197A2C0000\x02CLUSTER\x01DefaultCluster\x02",
		BornTimestamp: 1700000000000,
		BornHost:      netip.MustParseAddrPort("127.0.0.1:54321"),
		StoreHost:     netip.MustParseAddrPort("10.0.0.5:10911"),
	}
}

// BenchmarkEncode measures AppendEncode into a preallocated buffer (the
// BODYCRC is computed outside, as the broker does before the append lock).
func BenchmarkEncode(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("size=%d", n), func(b *testing.B) {
			m := benchMessage(n)
			size, _ := m.Size()
			dst := make([]byte, 0, size)
			crc := BodyCRC(m.Body)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var off int64
			for b.Loop() {
				dst, _ = AppendEncode(dst[:0], &m, crc, off, off*int64(size), 1700000000005)
				off++
			}
		})
	}
}

// BenchmarkDecode measures Decode with and without the body CRC check.
func BenchmarkDecode(b *testing.B) {
	for _, n := range benchSizes {
		m := benchMessage(n)
		rec, _ := AppendEncode(nil, &m, BodyCRC(m.Body), 1, 2, 3)
		for _, crc := range []bool{false, true} {
			b.Run(fmt.Sprintf("size=%d/crc=%v", n, crc), func(b *testing.B) {
				b.SetBytes(int64(len(rec)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Decode(rec, crc); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkBodyCRC(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("size=%d", n), func(b *testing.B) {
			body := benchMessage(n).Body
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				BodyCRC(body)
			}
		})
	}
}

// TestZeroAllocs pins the hot paths to zero allocations.
func TestZeroAllocs(t *testing.T) {
	m := benchMessage(1024)
	size, _ := m.Size()
	dst := make([]byte, 0, size)
	rec, _ := AppendEncode(nil, &m, BodyCRC(m.Body), 1, 2, 3)
	v6 := m
	v6.BornHost = netip.MustParseAddrPort("[2001:db8::1%eth0]:1")
	dst6 := make([]byte, 0, size+12)
	idBuf := make([]byte, 0, 64)
	gen := NewUniqIDGenerator(netip.MustParseAddr("10.0.0.1"), 1, 2)
	var sink int64
	for name, f := range map[string]func(){
		"AppendEncode":      func() { dst, _ = AppendEncode(dst[:0], &m, 1, 2, 3, 4) },
		"AppendEncode/IPv6": func() { dst6, _ = AppendEncode(dst6[:0], &v6, 1, 2, 3, 4) },
		"Size":              func() { n, _ := m.Size(); sink += int64(n) },
		"Patch":             func() { Patch(rec, 5, 6, 7) },
		"Decode":            func() { r, _ := Decode(rec, false); sink += r.QueueOffset },
		"Decode/crc":        func() { r, _ := Decode(rec, true); sink += r.QueueOffset },
		"PeekSize":          func() { s, _, _ := PeekSize(rec); sink += int64(s) },
		"Record.TagsCode":   func() { r, _ := Decode(rec, false); sink += r.TagsCode() },
		"Property":          func() { v, _ := Property(m.Properties, PropertyUniqKey); sink += int64(len(v)) },
		"TagsCode":          func() { sink += TagsCode("TagA") },
		"TopicKeyHash":      func() { sink += int64(TopicKeyHash("TopicTest", "order-1")) },
		"AppendOffsetMsgID": func() { idBuf = AppendOffsetMsgID(idBuf[:0], m.StoreHost, 42) },
		"AppendNext":        func() { idBuf = gen.AppendNext(idBuf[:0]) },
		"PutBlank":          func() { PutBlank(dst[:8], 100) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, n)
		}
	}
	_ = sink
}

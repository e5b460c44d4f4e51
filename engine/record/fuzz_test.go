package record

import (
	"bytes"
	"errors"
	"maps"
	"net/netip"
	"testing"
)

// fuzzSeedRecords returns valid records of each shape for the fuzzers.
func fuzzSeedRecords() [][]byte {
	m := workedExampleMessage()
	v6 := m
	v6.BornHost = netip.MustParseAddrPort("[2001:db8::1]:54321")
	v6.StoreHost = netip.MustParseAddrPort("[fe80::2]:10911")
	v2 := m
	v2.Topic = RetryTopicPrefix + string(bytes.Repeat([]byte("g"), 150))
	rec, _ := AppendEncode(nil, &m, BodyCRC(m.Body), 42, 1<<30, 1700000000005)
	rec6, _ := AppendEncode(nil, &v6, BodyCRC(v6.Body), 1, 2, 3)
	rec2, _ := AppendEncode(nil, &v2, BodyCRC(v2.Body), 4, 5, 6)
	crc, _ := AppendEncodePropCRC(nil, &m, BodyCRC(m.Body), 7, 8, 9)
	empty := m
	empty.Body = nil
	rec0, _ := AppendEncode(nil, &empty, BodyCRC(nil), 10, 11, 12)
	return [][]byte{rec, rec6, rec2, crc, rec0}
}

func FuzzDecode(f *testing.F) {
	for _, rec := range fuzzSeedRecords() {
		f.Add(rec)
	}
	f.Add(AppendBlank(nil, 4096))
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x00\xa5\xda\xa3\x20\xa7 truncated"))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeConsistent(t, b)
		r, err := Decode(b, false)
		_, _ = PeekStoreTimestamp(b)
		_ = VerifyPropCRC(b)
		if err == nil {
			if size, magic, err := PeekSize(b); err != nil || size != r.TotalSize || magic != r.Magic {
				t.Fatalf("PeekSize = %d, %#x, %v; Decode says %d, %#x", size, magic, err, r.TotalSize, r.Magic)
			}
			if ts, err := PeekStoreTimestamp(b); err != nil || ts != r.StoreTimestamp {
				t.Fatalf("PeekStoreTimestamp = %d, %v; Decode says %d", ts, err, r.StoreTimestamp)
			}
			// The decoded fields, encoded again through the public API,
			// decode to the same values (up to host normalization).
			m := r.Message()
			enc, err := AppendEncode(nil, &m, r.BodyCRC, r.QueueOffset, r.PhysicalOffset, r.StoreTimestamp)
			if err != nil {
				t.Fatalf("re-encoding an accepted record: %v", err)
			}
			r2, err := Decode(enc, false)
			if err != nil {
				t.Fatalf("decoding the re-encoded record: %v", err)
			}
			checkRecord(t, r2, &m, r.BodyCRC, r.QueueOffset, r.PhysicalOffset, r.StoreTimestamp)
			// FillPropCRC writes only inside the record.
			c := bytes.Clone(b)
			if FillPropCRC(c) == nil {
				if !bytes.Equal(c[r.TotalSize:], b[r.TotalSize:]) {
					t.Fatal("FillPropCRC wrote past the record")
				}
				if err := VerifyPropCRC(c); err != nil {
					t.Fatalf("VerifyPropCRC after FillPropCRC: %v", err)
				}
			}
		}
	})
}

func FuzzDecodeBatch(f *testing.F) {
	two := AppendBatchItem(nil, BatchItem{Flag: 1, Body: []byte("body"), Properties: "k\x01v\x02"})
	two = AppendBatchItem(two, BatchItem{Body: []byte{}, Properties: ""})
	f.Add(two)
	f.Add(two[:len(two)-3])
	f.Add(AppendBatchItem(nil, BatchItem{}))
	f.Add([]byte{0, 0, 0, 22, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := DecodeBatch(b)
		if err != nil {
			var de *DecodeError
			if !errors.Is(err, ErrBatchEmpty) && !errors.As(err, &de) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		var again []byte
		for _, it := range items {
			again = AppendBatchItem(again, it)
		}
		if len(again) != len(b) {
			t.Fatalf("re-encoded batch is %d bytes, input %d", len(again), len(b))
		}
		back, err := DecodeBatch(again)
		if err != nil || len(back) != len(items) {
			t.Fatalf("re-decoding: %d items, %v", len(back), err)
		}
		for i := range items {
			if back[i].Flag != items[i].Flag || !bytes.Equal(back[i].Body, items[i].Body) || back[i].Properties != items[i].Properties {
				t.Fatalf("item %d differs after re-encoding", i)
			}
		}
	})
}

func FuzzDecodeProperties(f *testing.F) {
	for _, s := range []string{
		"TAGS\x01TAG\x02WAIT\x01true\x02KEYS\x01ffff\x02",
		"", "\x01", "\x02", "a\x01b", "a\x01\x02", "\x01b\x02", "a\x01b\x01c\x02a\x01d",
		"__CRC32#\x010123456789\x02", "é\x01\xff\x02",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := DecodeProperties(s)
		for k, v := range m {
			if got, ok := Property(s, k); !ok || got != v {
				t.Fatalf("Property(%q, %q) = %q, %v; map has %q", s, k, got, ok, v)
			}
			if got, ok := PropertyBytes([]byte(s), k); !ok || string(got) != v {
				t.Fatalf("PropertyBytes(%q, %q) = %q, %v", s, k, got, ok)
			}
		}
		// Every decoded entry survives encoding.
		if back := DecodeProperties(EncodeProperties(m)); !maps.Equal(back, m) {
			t.Fatalf("Decode(Encode(%q)) = %q", m, back)
		}
		_ = TagsCode(s)
		_ = IndexKeyHash(s)
	})
}

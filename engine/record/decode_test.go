package record

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
)

func exampleRecord(t *testing.T) []byte {
	t.Helper()
	m := workedExampleMessage()
	rec, err := AppendEncode(nil, &m, BodyCRC(m.Body), exampleQueueOffset, examplePhysOffset, exampleStoreTS)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestDecodeTruncated(t *testing.T) {
	rec := exampleRecord(t)
	for n := range len(rec) {
		_, err := Decode(rec[:n], true)
		if !errors.Is(err, ErrCorrupt) || !errors.Is(err, ErrShort) {
			t.Fatalf("%d of %d bytes: %v, want ErrShort and ErrCorrupt", n, len(rec), err)
		}
		var de *DecodeError
		if !errors.As(err, &de) || de.Reason == "" {
			t.Fatalf("%d bytes: %T %v is not a *DecodeError with a reason", n, err, err)
		}
	}
	if _, _, err := PeekSize(rec[:7]); !errors.Is(err, ErrShort) {
		t.Fatalf("PeekSize on 7 bytes: %v", err)
	}
	if _, err := PeekStoreTimestamp(rec[:40]); !errors.Is(err, ErrShort) {
		t.Fatalf("PeekStoreTimestamp on 40 bytes: %v", err)
	}
}

func TestDecodeCorrupt(t *testing.T) {
	put32 := func(pos int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { binary.BigEndian.PutUint32(b[pos:], v); return b }
	}
	// Positions in the worked example: body length at 84, topic length at
	// 93, properties length at 103.
	for _, tc := range []struct {
		name   string
		mutate func([]byte) []byte
	}{
		{"bad magic", put32(PosMagic, 0xDAA320A8)},
		{"zero magic", put32(PosMagic, 0)},
		{"negative size", put32(PosTotalSize, 0xFFFFFFF0)},
		{"size below minimum", put32(PosTotalSize, 90)},
		{"size one less", put32(PosTotalSize, 164)},
		{"size one more", func(b []byte) []byte { binary.BigEndian.PutUint32(b, 166); return append(b, 0) }},
		{"body crc", put32(PosBodyCRC, 0x3610A687)},
		{"body crc high bit", put32(PosBodyCRC, 0xB610A686)},
		{"body byte", func(b []byte) []byte { b[88] ^= 1; return b }},
		{"negative body length", put32(84, 0x80000000)},
		{"body length too long", put32(84, 1000)},
		{"body length short", put32(84, 4)},
		{"negative topic length", func(b []byte) []byte { b[93] = 0x80; return b }},
		{"topic length too long", func(b []byte) []byte { b[93] = 100; return b }},
		{"negative properties length", func(b []byte) []byte { b[103] = 0x80; return b }},
		{"properties length short", func(b []byte) []byte { b[104] = 59; return b }},
		{"born port out of range", put32(52, 0x10000)},
		{"store port negative", put32(68, 0xFFFFFFFF)},
		{"V2 magic on a V1 record", put32(PosMagic, uint32(0xDAA320AB))},
		{"IPv6 flag on IPv4 hosts", put32(PosSysFlag, uint32(FlagBornHostV6))},
		{"IPv6 flags beyond size", func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[PosSysFlag:], uint32(FlagBornHostV6|FlagStoreHostV6))
			binary.BigEndian.PutUint32(b, 114) // < 91+24
			return b[:114]
		}},
	} {
		b := tc.mutate(exampleRecord(t))
		_, err := Decode(b, true)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", tc.name, err)
		}
		if errors.Is(err, ErrShort) {
			t.Errorf("%s: err %v should not be ErrShort", tc.name, err)
		}
	}
	// Without checkCRC a wrong BODYCRC passes.
	b := put32(PosBodyCRC, 1)(exampleRecord(t))
	if r, err := Decode(b, false); err != nil || r.BodyCRC != 1 {
		t.Fatalf("checkCRC=false: %v", err)
	}
}

// TestDecodeMutations flips every byte of valid records: Decode must not
// panic, and what it accepts must be self-consistent.
func TestDecodeMutations(t *testing.T) {
	m := workedExampleMessage()
	v6 := m
	v6.BornHost = netip.MustParseAddrPort("[2001:db8::7]:1")
	v6.Topic = RetryTopicPrefix + string(make([]byte, 150))
	for _, msg := range []Message{m, v6} {
		rec, err := AppendEncode(nil, &msg, BodyCRC(msg.Body), 1, 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rec {
			for _, x := range []byte{0x01, 0x80, 0xFF} {
				rec[i] ^= x
				checkDecodeConsistent(t, rec)
				rec[i] ^= x
			}
		}
	}
}

// checkDecodeConsistent decodes b and, if it is accepted, checks that
// writing the decoded fields back reproduces the record's bytes.
func checkDecodeConsistent(t *testing.T, b []byte) {
	t.Helper()
	r, err := Decode(b, false)
	if err != nil {
		var de *DecodeError
		if !errors.Is(err, ErrBlank) && !errors.As(err, &de) {
			t.Fatalf("error %v is neither ErrBlank nor *DecodeError", err)
		}
		return
	}
	rec := b[:r.TotalSize]
	again := make([]byte, r.TotalSize)
	pos := putFixed(again, &r)
	pos = putVariable(again, pos, r.IsV2(), r.Body, r.Topic, r.Properties, len(r.Properties))
	if pos != len(again) || string(again) != string(rec) {
		t.Fatalf("accepted record does not re-encode to its bytes\n got %x\nwant %x", again, rec)
	}
	if _, err := Decode(b, true); err == nil && BodyCRC(r.Body) != r.BodyCRC {
		t.Fatal("checkCRC accepted a wrong BODYCRC")
	}
}

package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
)

// randomMessage returns a message with random fields; hosts are IPv4, IPv6
// or IPv4-mapped IPv6, topics sometimes longer than 127 bytes.
func randomMessage(rng *rand.Rand) Message {
	host := func() netip.AddrPort {
		var a netip.Addr
		switch rng.IntN(3) {
		case 0:
			var b [4]byte
			binary.BigEndian.PutUint32(b[:], rng.Uint32())
			a = netip.AddrFrom4(b)
		case 1:
			var b [16]byte
			binary.BigEndian.PutUint64(b[:], rng.Uint64())
			binary.BigEndian.PutUint64(b[8:], rng.Uint64()|1) // never IPv4-mapped
			a = netip.AddrFrom16(b)
		default:
			a = netip.AddrFrom16(netip.AddrFrom4([4]byte{10, byte(rng.IntN(256)), 0, 1}).As16()) // ::ffff:10.x.0.1
		}
		return netip.AddrPortFrom(a, uint16(rng.Uint32()))
	}
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789%|_-"
	topicLen := 1 + rng.IntN(40)
	if rng.IntN(4) == 0 {
		topicLen = 100 + rng.IntN(300)
	}
	topic := make([]byte, topicLen)
	for i := range topic {
		topic[i] = chars[rng.IntN(len(chars))]
	}
	body := make([]byte, rng.IntN(2000))
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	props := map[string]string{}
	for range rng.IntN(6) {
		props[string(topic[:1+rng.IntN(len(topic))])] = strings.Repeat("v", 1+rng.IntN(30))
	}
	return Message{
		Topic:                     string(topic),
		QueueID:                   rng.Int32(),
		Flag:                      int32(rng.Uint32()),
		SysFlag:                   int32(rng.Uint32() & 0x7FF),
		Body:                      body,
		Properties:                EncodeProperties(props),
		BornTimestamp:             int64(rng.Uint64()),
		BornHost:                  host(),
		StoreHost:                 host(),
		ReconsumeTimes:            int32(rng.Uint32()),
		PreparedTransactionOffset: int64(rng.Uint64()),
	}
}

// checkRecord compares every field of r with what encoding m must give.
func checkRecord(t *testing.T, r Record, m *Message, bodyCRC uint32, qo, po, ts int64) {
	t.Helper()
	size, _ := m.Size()
	wantMagic := MagicV1
	if len(m.Topic) > 127 {
		wantMagic = MagicV2
	}
	born, _ := normalizeHost(m.BornHost)
	store, _ := normalizeHost(m.StoreHost)
	type field struct {
		name      string
		got, want any
	}
	for _, f := range []field{
		{"TotalSize", r.TotalSize, int32(size)},
		{"Magic", r.Magic, wantMagic},
		{"BodyCRC", r.BodyCRC, bodyCRC},
		{"QueueID", r.QueueID, m.QueueID},
		{"Flag", r.Flag, m.Flag},
		{"QueueOffset", r.QueueOffset, qo},
		{"PhysicalOffset", r.PhysicalOffset, po},
		{"SysFlag", r.SysFlag, m.EncodedSysFlag()},
		{"BornTimestamp", r.BornTimestamp, m.BornTimestamp},
		{"BornHost", r.BornHost, born},
		{"StoreTimestamp", r.StoreTimestamp, ts},
		{"StoreHost", r.StoreHost, store},
		{"ReconsumeTimes", r.ReconsumeTimes, m.ReconsumeTimes},
		{"PreparedTransactionOffset", r.PreparedTransactionOffset, m.PreparedTransactionOffset},
		{"Topic", string(r.Topic), m.Topic},
		{"Properties", string(r.Properties), m.Properties},
		{"Body", string(r.Body), string(m.Body)},
	} {
		if f.got != f.want {
			t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
		}
	}
}

func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	for i := range 2000 {
		m := randomMessage(rng)
		crc := BodyCRC(m.Body)
		qo, po, ts := int64(rng.Uint64()), int64(rng.Uint64()), int64(rng.Uint64())
		start := len(buf)
		var err error
		buf, err = AppendEncode(buf, &m, crc, qo, po, ts)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		rec := buf[start:]
		if size, _ := m.Size(); len(rec) != size {
			t.Fatalf("message %d: encoded %d bytes, Size says %d", i, len(rec), size)
		}
		r, err := Decode(rec, true)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		checkRecord(t, r, &m, crc, qo, po, ts)

		// Re-encoding the decoded record gives the same bytes.
		back := r.Message()
		again, err := AppendEncode(nil, &back, r.BodyCRC, r.QueueOffset, r.PhysicalOffset, r.StoreTimestamp)
		if err != nil || !bytes.Equal(again, rec) {
			t.Fatalf("message %d: re-encoding differs (%v)", i, err)
		}
		if t.Failed() {
			t.Fatalf("message %d: %+v", i, m)
		}
	}
	// The records also decode back to back from one buffer.
	n := 0
	for off := 0; off < len(buf); n++ {
		r, err := Decode(buf[off:], true)
		if err != nil {
			t.Fatalf("record %d at %d: %v", n, off, err)
		}
		off += int(r.TotalSize)
	}
	if n != 2000 {
		t.Fatalf("scanned %d records, want 2000", n)
	}
}

func TestIPv6Hosts(t *testing.T) {
	m := workedExampleMessage()
	m.SysFlag = FlagBornHostV6 | FlagCompressed // V6 bits are recomputed from hosts
	m.BornHost = netip.MustParseAddrPort("[2001:db8::1%eth0]:54321")
	m.StoreHost = netip.MustParseAddrPort("[::ffff:10.0.0.5]:10911") // mapped: stored as IPv4
	size, err := m.Size()
	if err != nil || size != 165+12 {
		t.Fatalf("Size = %d, %v; want %d", size, err, 165+12)
	}
	if f := m.EncodedSysFlag(); f != FlagBornHostV6|FlagCompressed {
		t.Fatalf("EncodedSysFlag = %#x", f)
	}
	rec, err := AppendEncode(nil, &m, BodyCRC(m.Body), 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	Patch(rec, 7, 8, 9)
	if got := int64(binary.BigEndian.Uint64(rec[68:])); got != 9 {
		t.Fatalf("store timestamp at 68 = %d, want 9", got)
	}
	if got := rec[48:64]; !bytes.Equal(got, netip.MustParseAddr("2001:db8::1").AsSlice()) {
		t.Fatalf("born address bytes %x", got)
	}
	r, err := Decode(rec, true)
	if err != nil {
		t.Fatal(err)
	}
	checkRecord(t, r, &m, BodyCRC(m.Body), 7, 8, 9)
	if r.BornHost.String() != "[2001:db8::1]:54321" || r.StoreHost.String() != "10.0.0.5:10911" {
		t.Fatalf("hosts %v %v", r.BornHost, r.StoreHost)
	}

	// Both hosts IPv6: +24 bytes, both bits set.
	m.StoreHost = netip.MustParseAddrPort("[fe80::2]:10911")
	rec, err = AppendEncode(nil, &m, 1, 2, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	r, err = Decode(rec, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.TotalSize != 165+24 || r.SysFlag != FlagBornHostV6|FlagStoreHostV6|FlagCompressed {
		t.Fatalf("TotalSize %d SysFlag %#x", r.TotalSize, r.SysFlag)
	}
	checkRecord(t, r, &m, 1, 2, 3, 4)
	if id := OffsetMsgID(r.StoreHost, r.PhysicalOffset); len(id) != 56 {
		t.Fatalf("IPv6 offset msg id %q", id)
	}
}

func TestV2Topic(t *testing.T) {
	m := workedExampleMessage()
	for _, n := range []int{127, 128, 255, 32767} {
		m.Topic = RetryTopicPrefix + strings.Repeat("g", n-len(RetryTopicPrefix))
		rec, err := AppendEncode(nil, &m, BodyCRC(m.Body), 1, 2, 3)
		if err != nil {
			t.Fatalf("topic %d: %v", n, err)
		}
		wantMagic, wantSize := MagicV1, 165-9+n
		if n > 127 {
			wantMagic, wantSize = MagicV2, wantSize+1
		}
		if len(rec) != wantSize {
			t.Fatalf("topic %d: %d bytes, want %d", n, len(rec), wantSize)
		}
		if got := int32(binary.BigEndian.Uint32(rec[4:])); got != wantMagic {
			t.Fatalf("topic %d: magic %#x", n, got)
		}
		r, err := Decode(rec, true)
		if err != nil {
			t.Fatalf("topic %d: %v", n, err)
		}
		checkRecord(t, r, &m, BodyCRC(m.Body), 1, 2, 3)
		if r.IsV2() != (n > 127) {
			t.Fatalf("topic %d: IsV2 %v", n, r.IsV2())
		}
	}
	m.Topic = strings.Repeat("t", 32768)
	if _, err := AppendEncode(nil, &m, 0, 0, 0, 0); !errors.Is(err, ErrTopicTooLong) {
		t.Fatalf("32768-byte topic: %v", err)
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*Message)
		want   error
	}{
		{"no born host", func(m *Message) { m.BornHost = netip.AddrPort{} }, ErrInvalidHost},
		{"no store host", func(m *Message) { m.StoreHost = netip.AddrPort{} }, ErrInvalidHost},
		{"topic", func(m *Message) { m.Topic = strings.Repeat("t", MaxTopicLenV2+1) }, ErrTopicTooLong},
		{"properties", func(m *Message) { m.Properties = strings.Repeat("p", MaxPropertiesLen+1) }, ErrPropertiesTooLong},
	} {
		m := workedExampleMessage()
		tc.modify(&m)
		if _, err := m.Size(); !errors.Is(err, tc.want) {
			t.Errorf("%s: Size error %v, want %v", tc.name, err, tc.want)
		}
		dst := []byte("keep")
		out, err := AppendEncode(dst, &m, 0, 0, 0, 0)
		if !errors.Is(err, tc.want) || string(out) != "keep" {
			t.Errorf("%s: AppendEncode = %q, %v; want dst unchanged and %v", tc.name, out, err, tc.want)
		}
	}
	// Exactly at the limits encodes; an empty body, topic and properties too.
	m := workedExampleMessage()
	m.Properties = strings.Repeat("p", MaxPropertiesLen)
	if _, err := AppendEncode(nil, &m, 0, 0, 0, 0); err != nil {
		t.Fatalf("32767-byte properties: %v", err)
	}
	m = Message{BornHost: m.BornHost, StoreHost: m.StoreHost}
	rec, err := AppendEncode(nil, &m, BodyCRC(nil), 0, 0, 0)
	if err != nil || len(rec) != MinRecordSize {
		t.Fatalf("empty message: %d bytes, %v", len(rec), err)
	}
	if _, err := Decode(rec, true); err != nil {
		t.Fatalf("empty message: %v", err)
	}
}

func TestPatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		m := randomMessage(rng)
		rec, err := AppendEncode(nil, &m, BodyCRC(m.Body), 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		before := bytes.Clone(rec)
		qo, po, ts := int64(rng.Uint64()), int64(rng.Uint64()), int64(rng.Uint64())
		Patch(rec, qo, po, ts)
		want, _ := AppendEncode(nil, &m, BodyCRC(m.Body), qo, po, ts)
		if !bytes.Equal(rec, want) {
			t.Fatalf("patched record differs from direct encoding (sysflag %#x)", m.EncodedSysFlag())
		}
		// Only the three fields changed.
		tsPos := StoreTimestampPos(m.EncodedSysFlag())
		for i := range rec {
			inField := (i >= PosQueueOffset && i < PosQueueOffset+16) || (i >= tsPos && i < tsPos+8)
			if !inField && rec[i] != before[i] {
				t.Fatalf("Patch changed byte %d", i)
			}
		}
	}
}

func TestPatchPanicsOnShortBuffer(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Patch on 10 bytes did not panic")
		}
	}()
	Patch(make([]byte, 10), 1, 2, 3)
}

func TestBlank(t *testing.T) {
	seg := bytes.Repeat([]byte{0xAB}, 64)
	PutBlank(seg[20:], 44)
	want := []byte{0, 0, 0, 44, 0xCB, 0xD4, 0x31, 0x94}
	if !bytes.Equal(seg[20:28], want) || seg[28] != 0xAB || seg[19] != 0xAB {
		t.Fatalf("blank bytes % x", seg[16:32])
	}
	if got := AppendBlank([]byte{1}, 44); !bytes.Equal(got[1:], want) {
		t.Fatalf("AppendBlank % x", got)
	}
	r, err := Decode(seg[20:], true)
	if !errors.Is(err, ErrBlank) || r.TotalSize != 44 || r.Magic != MagicBlank {
		t.Fatalf("Decode blank = %+v, %v", r, err)
	}
	// The 8 bytes alone are enough.
	if r, err := Decode(seg[20:28], true); !errors.Is(err, ErrBlank) || r.TotalSize != 44 {
		t.Fatalf("Decode 8-byte blank = %d, %v", r.TotalSize, err)
	}
	size, magic, err := PeekSize(seg[20:])
	if err != nil || size != 44 || magic != MagicBlank {
		t.Fatalf("PeekSize = %d, %#x, %v", size, magic, err)
	}
	if _, err := PeekStoreTimestamp(seg[20:]); !errors.Is(err, ErrBlank) {
		t.Fatalf("PeekStoreTimestamp on blank: %v", err)
	}
	// A blank shorter than itself is corrupt.
	PutBlank(seg, 7)
	if _, err := Decode(seg, false); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("blank of 7: %v", err)
	}
	if MagicBlank != -875286124 || MagicV1 != -626843481 || MagicV2 != -626843477 {
		t.Fatal("magic constants changed")
	}
}

func TestPropCRC(t *testing.T) {
	for _, props := range []string{
		"TAGS\x01TagA\x02", // ends with 0x02
		"TAGS\x01TagA",     // gets one added
		"",                 // nothing to separate
	} {
		m := workedExampleMessage()
		m.Properties = props
		rec, err := AppendEncodePropCRC(nil, &m, BodyCRC(m.Body), 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantProps := props
		if props != "" && !strings.HasSuffix(props, "\x02") {
			wantProps += "\x02"
		}
		size, _ := m.SizePropCRC()
		plain, _ := m.Size()
		if len(rec) != size || size != plain+len(wantProps)-len(props)+PropCRCReservedLen {
			t.Fatalf("%q: %d bytes, SizePropCRC %d, Size %d", props, len(rec), size, plain)
		}
		r, err := Decode(rec, true)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(r.Properties), wantProps) {
			t.Fatalf("%q: properties %q", props, r.Properties)
		}
		// The reservation, built by hand: digits least significant first.
		crc := BodyCRC(rec[:len(rec)-20]) // BodyCRC is the same masked CRC
		digits := make([]byte, 10)
		for i, c := 0, crc; i < 10; i, c = i+1, c/10 {
			digits[i] = byte('0' + c%10)
		}
		want := "__CRC32#\x01" + string(digits) + "\x02"
		if got := string(rec[len(rec)-20:]); got != want {
			t.Fatalf("%q: reservation %q, want %q", props, got, want)
		}
		if err := VerifyPropCRC(rec); err != nil {
			t.Fatal(err)
		}
		got := DecodeProperties(string(r.Properties))
		if got[PropertyCRC32] != string(digits) {
			t.Fatalf("%q: DecodeProperties %q", props, got)
		}

		// Patch invalidates the CRC until FillPropCRC runs.
		Patch(rec, 5, 6, 7)
		if err := VerifyPropCRC(rec); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%q: after Patch: %v", props, err)
		}
		if err := FillPropCRC(rec); err != nil {
			t.Fatal(err)
		}
		if err := VerifyPropCRC(rec); err != nil {
			t.Fatal(err)
		}
		direct, _ := AppendEncodePropCRC(nil, &m, BodyCRC(m.Body), 5, 6, 7)
		if !bytes.Equal(direct, rec) {
			t.Fatalf("%q: patched+filled record differs from direct encoding", props)
		}
	}
	m := workedExampleMessage()
	rec, _ := AppendEncode(nil, &m, BodyCRC(m.Body), 0, 0, 0)
	if err := VerifyPropCRC(rec); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("record without CRC property: %v", err)
	}
	m.Properties = "a\x01b\x02"
	rec, _ = AppendEncode(nil, &m, BodyCRC(m.Body), 0, 0, 0)
	if err := FillPropCRC(rec); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("FillPropCRC without room: %v", err)
	}
	m.Properties = strings.Repeat("p", 40) // long enough, but not a reservation
	rec, _ = AppendEncode(nil, &m, BodyCRC(m.Body), 0, 0, 0)
	before := bytes.Clone(rec)
	if err := FillPropCRC(rec); !errors.Is(err, ErrCorrupt) || !bytes.Equal(rec, before) {
		t.Fatalf("FillPropCRC over plain properties: %v", err)
	}
	m.Properties = strings.Repeat("p", MaxPropertiesLen-PropCRCReservedLen)
	if _, err := AppendEncodePropCRC(nil, &m, 0, 0, 0, 0); !errors.Is(err, ErrPropertiesTooLong) {
		t.Fatalf("properties + separator + reservation over the limit: %v", err)
	}
}

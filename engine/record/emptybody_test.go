package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// emptyBodyMessage is the worked example without body: nil or zero-length.
func emptyBodyMessage(body []byte) Message {
	m := workedExampleMessage()
	m.Body = body
	return m
}

// TestEmptyBodyRecordRoundTrip: a record with an empty body is encoded as
// Java's MessageExtEncoder writes it (BODYLENGTH 0, no body bytes, BODYCRC
// 0: UtilAll.crc32 of nothing) and decodes back with an empty body, with
// and without the properties CRC reservation and with the compressed flag.
func TestEmptyBodyRecordRoundTrip(t *testing.T) {
	if crc := BodyCRC(nil); crc != 0 {
		t.Fatalf("BodyCRC(nil) = %#x, want 0", crc)
	}
	if crc := BodyCRC([]byte{}); crc != 0 {
		t.Fatalf("BodyCRC(empty) = %#x, want 0", crc)
	}
	full := workedExampleMessage()
	fullRec, err := AppendEncode(nil, &full, BodyCRC(full.Body), exampleQueueOffset, examplePhysOffset, exampleStoreTS)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		body    []byte
		sysFlag int32
		propCRC bool
	}{
		{"nil body", nil, 0, false},
		{"zero-length body", []byte{}, 0, false},
		{"compressed flag", []byte{}, FlagCompressed | CompressionZLIB, false},
		{"property CRC", nil, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := emptyBodyMessage(tc.body)
			m.SysFlag = tc.sysFlag
			if err := ValidateStored(&m, 0); err != nil {
				t.Fatalf("ValidateStored: %v", err)
			}
			var rec []byte
			if tc.propCRC {
				rec, err = AppendEncodePropCRC(nil, &m, BodyCRC(m.Body), exampleQueueOffset, examplePhysOffset, exampleStoreTS)
			} else {
				rec, err = AppendEncode(nil, &m, BodyCRC(m.Body), exampleQueueOffset, examplePhysOffset, exampleStoreTS)
			}
			if err != nil {
				t.Fatal(err)
			}
			size, _ := m.Size()
			if tc.propCRC {
				size, _ = m.SizePropCRC()
			}
			if len(rec) != size {
				t.Fatalf("record %d bytes, Size says %d", len(rec), size)
			}
			if !tc.propCRC && len(rec) != len(fullRec)-len(full.Body) {
				t.Fatalf("record %d bytes, want the worked example's %d less its %d-byte body", len(rec), len(fullRec), len(full.Body))
			}
			if crc := binary.BigEndian.Uint32(rec[PosBodyCRC:]); crc != 0 {
				t.Fatalf("BODYCRC %#x, want 0", crc)
			}
			bodyLenPos := StoreTimestampPos(m.EncodedSysFlag()) + 8 + 8 + 4 + 8 // store host, reconsume, prepared offset
			if n := binary.BigEndian.Uint32(rec[bodyLenPos:]); n != 0 {
				t.Fatalf("BODYLENGTH %d, want 0", n)
			}
			if rec[bodyLenPos+4] != byte(len(m.Topic)) || string(rec[bodyLenPos+5:bodyLenPos+5+len(m.Topic)]) != m.Topic {
				t.Fatal("TOPICLENGTH and TOPIC do not follow BODYLENGTH at once")
			}
			r, err := Decode(rec, true)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if len(r.Body) != 0 || r.BodyCRC != 0 || string(r.Topic) != m.Topic || r.SysFlag != m.EncodedSysFlag() {
				t.Fatalf("decoded body %q crc %#x topic %q sysflag %#x", r.Body, r.BodyCRC, r.Topic, r.SysFlag)
			}
			if tc.propCRC {
				if err := FillPropCRC(rec); err != nil {
					t.Fatal(err)
				}
				if err := VerifyPropCRC(rec); err != nil {
					t.Fatalf("VerifyPropCRC: %v", err)
				}
			} else {
				checkRecord(t, r, &m, 0, exampleQueueOffset, examplePhysOffset, exampleStoreTS)
				// Re-encoding the decoded message gives the same bytes.
				back := r.Message()
				again, err := AppendEncode(nil, &back, r.BodyCRC, r.QueueOffset, r.PhysicalOffset, r.StoreTimestamp)
				if err != nil || !bytes.Equal(again, rec) {
					t.Fatalf("re-encoded record differs (%v)", err)
				}
			}
			// A BODYCRC other than 0 does not match an empty body.
			bad := bytes.Clone(rec)
			binary.BigEndian.PutUint32(bad[PosBodyCRC:], 1)
			if _, err := Decode(bad, true); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("BODYCRC 1 on an empty body: %v", err)
			}
			if _, err := Decode(bad, false); err != nil {
				t.Fatalf("without the CRC check: %v", err)
			}
		})
	}
}

// TestBatchWithEmptyItems: a SEND_BATCH_MESSAGE body whose items have empty
// bodies decodes, each item passes ValidateBatchItem, and the records the
// broker makes of them carry BODYLENGTH 0 and BODYCRC 0.
func TestBatchWithEmptyItems(t *testing.T) {
	items := []BatchItem{
		{Flag: 1, Body: []byte("first"), Properties: "KEYS\x01a\x02"},
		{Flag: 2, Body: nil, Properties: "KEYS\x01b\x02"},
		{Flag: 3, Body: []byte{}, Properties: ""},
		{Flag: 4, Body: []byte("last"), Properties: ""},
	}
	var body []byte
	for _, it := range items {
		body = AppendBatchItem(body, it)
	}
	if want := 4*batchItemFixed + len("first") + len("last") + 2*len("KEYS\x01a\x02"); len(body) != want {
		t.Fatalf("batch body %d bytes, want %d", len(body), want)
	}
	got, err := DecodeBatch(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(items) {
		t.Fatalf("%d items, want %d", len(got), len(items))
	}
	base := workedExampleMessage()
	for i, it := range got {
		if it.Flag != items[i].Flag || !bytes.Equal(it.Body, items[i].Body) || it.Properties != items[i].Properties {
			t.Fatalf("item %d: %+v, want %+v", i, it, items[i])
		}
		m := Message{Topic: base.Topic, Flag: it.Flag, Body: it.Body, Properties: it.Properties, BornHost: base.BornHost, StoreHost: base.StoreHost}
		if err := ValidateBatchItem(&m, 0); err != nil {
			t.Fatalf("item %d: ValidateBatchItem: %v", i, err)
		}
		if len(m.Body) == 0 {
			if err := Validate(&m, 0); !errors.Is(err, ErrBodyEmpty) {
				t.Fatalf("item %d sent alone: Validate = %v, want ErrBodyEmpty", i, err)
			}
		}
		rec, err := AppendEncode(nil, &m, BodyCRC(m.Body), int64(i), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Decode(rec, true)
		if err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		if !bytes.Equal(r.Body, it.Body) || (len(it.Body) == 0) != (r.BodyCRC == 0) {
			t.Fatalf("item %d: stored body %q crc %#x", i, r.Body, r.BodyCRC)
		}
	}
	// A batch of one empty item is a valid batch, not an empty batch.
	one := AppendBatchItem(nil, BatchItem{})
	if got, err := DecodeBatch(one); err != nil || len(got) != 1 || len(got[0].Body) != 0 {
		t.Fatalf("one empty item: %v, %v", got, err)
	}
}

package record

import (
	"errors"
	"strings"
	"testing"
)

// DecodeAll splits records laid end to end; a body cut short or a bad
// record stops it with the records before, and an error naming the
// record's index and offset.
func TestDecodeAll(t *testing.T) {
	var body []byte
	var sizes []int
	for i, s := range []string{"one", "", "three"} {
		m := benchMessage(8)
		m.Body = []byte(s)
		var err error
		before := len(body)
		body, err = AppendEncode(body, &m, BodyCRC(m.Body), int64(i), int64(before), 1)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(body)-before)
	}
	recs, err := DecodeAll(body, true)
	if err != nil || len(recs) != 3 || string(recs[0].Body) != "one" || len(recs[1].Body) != 0 || string(recs[2].Body) != "three" {
		t.Fatalf("decoded %d records, err %v", len(recs), err)
	}
	if recs, err := DecodeAll(nil, true); err != nil || len(recs) != 0 {
		t.Fatalf("empty body: %d records, %v", len(recs), err)
	}
	cut := body[:len(body)-1]
	recs, err = DecodeAll(cut, true)
	if len(recs) != 2 || !errors.Is(err, ErrShort) || !strings.Contains(err.Error(), "record 2 at offset") {
		t.Fatalf("cut body: %d records, %v", len(recs), err)
	}
	bad := append([]byte(nil), body...)
	bad[sizes[0]+PosMagic] ^= 0xff // the second record's MAGICCODE
	recs, err = DecodeAll(bad, true)
	if len(recs) != 1 || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "record 1 at offset") {
		t.Fatalf("bad magic: %d records, %v", len(recs), err)
	}
}

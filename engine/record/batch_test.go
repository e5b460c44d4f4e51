package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestBatchItemBytes(t *testing.T) {
	got := AppendBatchItem(nil, BatchItem{Flag: 7, Body: []byte("hi"), Properties: "a\x01b\x02"})
	want := []byte{
		0, 0, 0, 28, // TOTALSIZE = 4*5 + 2 (body) + 2 + 4 (properties)
		0, 0, 0, 0, // MAGICCODE
		0, 0, 0, 0, // BODYCRC
		0, 0, 0, 7, // FLAG
		0, 0, 0, 2, 'h', 'i',
		0, 4, 'a', 1, 'b', 2,
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendBatchItem\n got % x\nwant % x", got, want)
	}
}

func TestBatchRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		var items []BatchItem
		var body []byte
		for range 1 + rng.IntN(10) {
			it := BatchItem{
				Flag:       int32(rng.Uint32()),
				Body:       bytes.Repeat([]byte{byte(rng.Uint32())}, rng.IntN(300)),
				Properties: EncodeProperties(map[string]string{"KEYS": strings.Repeat("k", rng.IntN(20)), "TAGS": "t"}),
			}
			items = append(items, it)
			body = AppendBatchItem(body, it)
		}
		got, err := DecodeBatch(body)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(items) {
			t.Fatalf("%d items, want %d", len(got), len(items))
		}
		for i := range items {
			if got[i].Flag != items[i].Flag || !bytes.Equal(got[i].Body, items[i].Body) || got[i].Properties != items[i].Properties {
				t.Fatalf("item %d: %+v, want %+v", i, got[i], items[i])
			}
		}
	}
	// Magic and CRC values are ignored, as the broker ignores them.
	b := AppendBatchItem(nil, BatchItem{Body: []byte("x")})
	binary.BigEndian.PutUint32(b[4:], 0xDAA320A7)
	binary.BigEndian.PutUint32(b[8:], 12345)
	if got, err := DecodeBatch(b); err != nil || len(got) != 1 || string(got[0].Body) != "x" {
		t.Fatalf("nonzero magic/crc: %v, %v", got, err)
	}
}

func TestDecodeBatchErrors(t *testing.T) {
	if _, err := DecodeBatch(nil); !errors.Is(err, ErrBatchEmpty) {
		t.Fatalf("empty: %v", err)
	}
	good := AppendBatchItem(nil, BatchItem{Flag: 1, Body: []byte("body"), Properties: "k\x01v\x02"})
	two := AppendBatchItem(bytes.Clone(good), BatchItem{Body: []byte("second")})
	for n := 1; n < len(two); n++ {
		if n == len(good) {
			continue
		}
		if _, err := DecodeBatch(two[:n]); !errors.Is(err, ErrShort) || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	mutate := func(pos int, v uint32) []byte {
		b := bytes.Clone(good)
		binary.BigEndian.PutUint32(b[pos:], v)
		return b
	}
	for name, b := range map[string][]byte{
		"TOTALSIZE too small":   mutate(0, uint32(len(good)-1)),
		"TOTALSIZE too large":   mutate(0, uint32(len(good)+1)),
		"negative BODYLENGTH":   mutate(16, 0xFFFFFFFF),
		"negative PROPERTIES":   func() []byte { b := bytes.Clone(good); b[24] = 0x80; return b }(),
		"huge BODYLENGTH":       mutate(16, 0x7FFFFFFF),
		"trailing garbage":      append(bytes.Clone(good), 0, 0, 0),
		"PROPERTIESLENGTH long": func() []byte { b := bytes.Clone(good); b[25] = 200; return b }(),
	} {
		if _, err := DecodeBatch(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestAppendBatchItemPanicsOnOversizedProperties(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	AppendBatchItem(nil, BatchItem{Properties: strings.Repeat("p", MaxPropertiesLen+1)})
}

package workloads

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestHeaderRoundTrip(t *testing.T) {
	b := make([]byte, 100)
	h := Header{Born: 1_700_000_000_123_456_789, Seq: 1 << 40, Stream: 7, DelayUs: 1500}
	EncodeHeader(b, h)
	// The layout is part of the contract: born first, little-endian.
	if b[0] != 0x15 || b[8] != 0 || b[13] != 1 || b[16] != 7 || b[20] != 0xdc || b[21] != 0x05 {
		t.Fatalf("layout: % x", b[:24])
	}
	got, err := DecodeHeader(b)
	if err != nil || got != h {
		t.Fatalf("got %+v %v, want %+v", got, err, h)
	}
	if got.Intended() != h.Born-1_500_000 {
		t.Fatalf("Intended %d", got.Intended())
	}
	if _, err := DecodeHeader(b[:23]); !errors.Is(err, ErrShortBody) {
		t.Fatalf("short body: %v", err)
	}
}

func TestDelayMicrosSaturates(t *testing.T) {
	for d, want := range map[time.Duration]uint32{
		-time.Second:                 0,
		1500 * time.Nanosecond:       1,
		2 * time.Millisecond:         2000,
		2 * time.Hour:                math.MaxUint32,
		time.Duration(math.MaxInt64): math.MaxUint32,
	} {
		if got := DelayMicros(d); got != want {
			t.Fatalf("DelayMicros(%v) = %d want %d", d, got, want)
		}
	}
}

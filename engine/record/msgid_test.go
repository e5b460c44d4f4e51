package record

import (
	"encoding/hex"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestOffsetMsgID(t *testing.T) {
	for _, tc := range []struct {
		host   string
		offset int64
		want   string
	}{
		{"10.0.0.5:10911", 1073741824, "0A00000500002A9F0000000040000000"},
		{"[::ffff:10.0.0.5]:10911", 1073741824, "0A00000500002A9F0000000040000000"},
		{"255.255.255.255:65535", -1, "FFFFFFFF0000FFFFFFFFFFFFFFFFFFFF"},
		{"[2001:db8::1]:10911", 0x0102030405060708,
			"20010DB8000000000000000000000001" + "00002A9F" + "0102030405060708"},
	} {
		ap := netip.MustParseAddrPort(tc.host)
		if got := OffsetMsgID(ap, tc.offset); got != tc.want {
			t.Errorf("OffsetMsgID(%s, %d) = %s, want %s", tc.host, tc.offset, got, tc.want)
		}
		if got := string(AppendOffsetMsgID([]byte("x,"), ap, tc.offset)); got != "x,"+tc.want {
			t.Errorf("AppendOffsetMsgID = %s", got)
		}
		host, off, err := ParseOffsetMsgID(tc.want)
		if err != nil || off != tc.offset || host != netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()) {
			t.Errorf("ParseOffsetMsgID(%s) = %v, %d, %v", tc.want, host, off, err)
		}
		if _, off2, err := ParseOffsetMsgID(strings.ToLower(tc.want)); err != nil || off2 != off {
			t.Errorf("lower case %s: %d, %v", tc.want, off2, err)
		}
	}
	if got := OffsetMsgID(netip.AddrPort{}, 1); got != "00000000000000000000000000000001" {
		t.Errorf("zero host: %s", got)
	}
	for _, bad := range []string{
		"", "0A00000500002A9F00000000400000", // 30 chars
		"0A00000500002A9F000000004000000G",
		"0A000005" + "00010000" + "0000000040000000", // port 65536
		"0A000005" + "FFFFFFFF" + "0000000040000000", // port -1
		strings.Repeat("0", 40),
	} {
		if _, _, err := ParseOffsetMsgID(bad); !errors.Is(err, ErrBadMsgID) {
			t.Errorf("ParseOffsetMsgID(%q) error %v", bad, err)
		}
	}
}

func TestUniqIDLayout(t *testing.T) {
	g := NewUniqIDGenerator(netip.MustParseAddr("192.168.1.2"), 0x12345678, 0x0A0B0C0D)
	now := time.Date(2024, 3, 5, 1, 2, 3, 4e6, time.Local)
	g.now = func() time.Time { return now }
	sinceMonth := now.Sub(time.Date(2024, 3, 1, 0, 0, 0, 0, time.Local)).Milliseconds()

	for counter := range 3 {
		id := g.Next()
		if len(id) != 32 || strings.ToUpper(id) != id {
			t.Fatalf("id %q: want 32 upper-case hex characters", id)
		}
		raw, err := hex.DecodeString(id)
		if err != nil {
			t.Fatal(err)
		}
		want := []byte{
			192, 168, 1, 2, // IPv4
			0x56, 0x78, // pid, low 16 bits
			0x0A, 0x0B, 0x0C, 0x0D, // hash
			byte(sinceMonth >> 24), byte(sinceMonth >> 16), byte(sinceMonth >> 8), byte(sinceMonth),
			0, byte(counter),
		}
		if string(raw) != string(want) {
			t.Fatalf("id %d = % x, want % x", counter, raw, want)
		}
	}

	// The counter keeps its low 16 bits.
	g.counter.Store(0xFFFF)
	if id := g.Next(); !strings.HasSuffix(id, "FFFF") {
		t.Fatalf("counter 0xFFFF: %s", id)
	}
	if id := g.Next(); !strings.HasSuffix(id, "0000") {
		t.Fatalf("counter wrap: %s", id)
	}

	// In the next month the time restarts from that month's start.
	now = time.Date(2024, 4, 1, 0, 0, 1, 0, time.Local)
	id := g.Next()
	if got := id[20:28]; got != "000003E8" {
		t.Fatalf("1 s into April: time field %s, want 000003E8", got)
	}

	// A non-IPv4 address is replaced by a fake one; the length stays 32.
	g6 := NewUniqIDGenerator(netip.MustParseAddr("2001:db8::1"), 1, 2)
	if id := g6.Next(); len(id) != 32 || id[8:20] != "000100000002" {
		t.Fatalf("IPv6 generator id %s", id)
	}
	// IPv4-mapped counts as IPv4.
	gm := NewUniqIDGenerator(netip.MustParseAddr("::ffff:1.2.3.4"), 1, 2)
	if id := gm.Next(); !strings.HasPrefix(id, "01020304") {
		t.Fatalf("mapped generator id %s", id)
	}
}

func TestNewUniqIDConcurrent(t *testing.T) {
	const goroutines, each = 4, 500
	ids := make([][]string, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			for range each {
				ids[i] = append(ids[i], NewUniqID())
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, list := range ids {
		for _, id := range list {
			if len(id) != 32 || strings.ToUpper(id) != id {
				t.Fatalf("id %q", id)
			}
			if _, err := hex.DecodeString(id); err != nil {
				t.Fatalf("id %q: %v", id, err)
			}
			if seen[id] {
				t.Fatalf("duplicate id %s", id)
			}
			seen[id] = true
		}
	}
}

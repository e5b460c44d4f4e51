package delay

import (
	"container/heap"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/engine/record"
)

func TestTimerSlotRoundsUp(t *testing.T) {
	for _, c := range []struct{ in, p, want int64 }{
		{1001, 1000, 2000}, {1000, 1000, 1000}, {1999, 1000, 2000}, {5, 1, 5}, {101, 100, 200}, {0, 100, 0},
	} {
		if got := timerSlot(c.in, c.p); got != c.want {
			t.Errorf("timerSlot(%d, %d) = %d, want %d", c.in, c.p, got, c.want)
		}
	}
}

func TestTimerDeliverMSPrecedence(t *testing.T) {
	p := func(kv ...string) string {
		var b []byte
		for i := 0; i < len(kv); i += 2 {
			b = record.AppendProperty(b, kv[i], kv[i+1])
		}
		return string(b)
	}
	now := int64(1_000_000)
	for _, c := range []struct {
		props string
		want  int64
		err   string
	}{
		{p(PropertyTimerDelaySec, "3", PropertyTimerDeliverMS, "5"), now + 3000, ""},
		{p(PropertyTimerDelayMS, "250", PropertyTimerDeliverMS, "5"), now + 250, ""},
		{p(PropertyTimerDeliverMS, "123"), 123, ""},
		{p(PropertyTimerDelaySec, "x"), 0, "TIMER_DELAY_SEC \"x\""},
		{p(PropertyTimerDelaySec, "9223372036854775807"), 0, "out of range"},
		{p(PropertyTimerDelayMS, "-9223372036854775807"), 0, "out of range"},
	} {
		got, err := timerDeliverMS(c.props, now)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.props, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %d, %v; want %d", c.props, got, err, c.want)
		}
	}
	if isTimerMessage(p(PropertyTimerDelaySec, "1", PropertyTimerOutMS, "5")) {
		t.Error("a message carrying TIMER_OUT_MS (already timed) counts as a timer message")
	}
}

func TestTimerCheckpointClaims(t *testing.T) {
	c := timerCheckpoint{Version: 1, DeliveredDueMS: 100, DeliveredOffset: 5, ScannedOffset: 10, LowOffset: 3}
	for _, x := range []struct {
		e    timerEntry
		want bool
	}{
		{timerEntry{500, 2}, true},  // below the low offset
		{timerEntry{100, 5}, true},  // the last delivered
		{timerEntry{99, 9}, true},   // earlier slot, scanned
		{timerEntry{100, 6}, false}, // same slot, later offset
		{timerEntry{99, 10}, false}, // not scanned
		{timerEntry{101, 4}, false}, // later slot
	} {
		if got := c.delivered(x.e); got != x.want {
			t.Errorf("delivered(%v) = %v, want %v", x.e, got, x.want)
		}
	}
	if _, err := decodeTimerCheckpoint([]byte(`{"v":1,"deliveredDueMs":1,"deliveredOffset":0,"scannedOffset":4,"lowOffset":2}`)); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{`{"v":2}`, `{"v":1,"scannedOffset":1,"lowOffset":2}`, `not json`} {
		if _, err := decodeTimerCheckpoint([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// progress never claims a loaded entry below the last delivered one (loaded
// late) and keeps the low offset under every undelivered message.
func TestTimerProgressClaimsOnlyDelivered(t *testing.T) {
	s := &timerService{env: &env{}, last: timerEntry{100, 5}, scanned: 20, far: newFarIndex(50)}
	s.far.add(timerEntry{500, 15})
	s.far.add(timerEntry{510, 17})
	for _, e := range []timerEntry{{90, 12}, {150, 8}} {
		heap.Push(&s.heap, e)
	}
	c := s.progress()
	if c.ScannedOffset != 12 || c.LowOffset != 8 || c.DeliveredDueMS != 100 || c.DeliveredOffset != 5 {
		t.Fatalf("progress %+v", c)
	}
	for _, e := range s.heap {
		if c.delivered(e) {
			t.Fatalf("undelivered %v claimed by %+v", e, c)
		}
	}
	if c.delivered(timerEntry{100, 15}) {
		t.Fatal("far offset claimed")
	}
}

func TestTimerFarIndex(t *testing.T) {
	f := newFarIndex(100)
	for _, e := range []timerEntry{{250, 7}, {210, 3}, {299, 9}, {1050, 4}, {1020, 20}, {-5, 1}, {560, 12}} {
		f.add(e)
	}
	if f.count != 7 || f.minOffset() != 1 {
		t.Fatalf("count %d min %d", f.count, f.minOffset())
	}
	if k := f.bucket(-5); k != -1 {
		t.Fatalf("bucket(-5) = %d", k)
	}
	// Window end 600 reaches buckets -1, 2 and 5: offsets 1, 3..9 and 12.
	got := f.reaching(600)
	want := []offRange{{1, 1}, {3, 9}, {12, 12}}
	if len(got) != len(want) {
		t.Fatalf("reaching(600) = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("reaching(600) = %v, want %v", got, want)
		}
	}
	// Overlapping ranges merge: bucket 10 holds 4..20.
	if got := f.reaching(1099); len(got) != 2 || got[0] != (offRange{1, 1}) || got[1] != (offRange{3, 20}) {
		t.Fatalf("reaching(1099) = %v", got)
	}
	f.drop(598) // bucket 5 (500..599) is not covered yet
	if _, ok := f.buckets[5]; !ok || len(f.buckets) != 2 {
		t.Fatalf("after drop(598): %v", f.buckets)
	}
	f.drop(599)
	if len(f.buckets) != 1 || f.minOffset() != 4 {
		t.Fatalf("after drop(599): %v", f.buckets)
	}
	f.drop(2000)
	if len(f.buckets) != 0 || f.minOffset() != noFar {
		t.Fatalf("after drop(2000): %v", f.buckets)
	}
}

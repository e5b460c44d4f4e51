package gen

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/randvar"
)

func mustVar(t *testing.T, spec string) randvar.Var {
	t.Helper()
	v, err := randvar.ParseVar(spec)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func richConfig(t *testing.T, seed uint64) MessageConfig {
	return MessageConfig{
		Seed: seed, StreamID: 3,
		Size:   mustVar(t, "uniform:10-4096"),
		Topics: []string{"a", "b", "c"},
		Topic:  mustVar(t, "zipf:0-2"),
		Queue:  mustVar(t, "uniform:0-7"),
		Key:    mustVar(t, "zipf:1-1000"),
		Tag:    mustVar(t, "weighted:1=0.9,2=0.1"),
	}
}

func TestMessagesArePureFunctionsOfSeedAndSeq(t *testing.T) {
	f1, err := NewFactory(richConfig(t, 42))
	if err != nil {
		t.Fatal(err)
	}
	f2, _ := NewFactory(richConfig(t, 42))
	f3, _ := NewFactory(richConfig(t, 43))
	b1, b2, b3 := f1.NewBuilder(), f2.NewBuilder(), f3.NewBuilder()
	const n = 500
	first := make([]*workloads.Message, n)
	for i := 0; i < n; i++ {
		first[i] = b1.Message(uint64(i))
	}
	differs := 0
	for i := n - 1; i >= 0; i-- { // another builder, another order
		a, b := first[i], b2.Message(uint64(i))
		if a.Topic != b.Topic || a.QueueID != b.QueueID || a.Keys != b.Keys || a.Tags != b.Tags || !bytes.Equal(a.Body, b.Body) {
			t.Fatalf("seq %d differs with the same seed: %+v vs %+v", i, a, b)
		}
		if r := b2.Route(uint64(i)); r.Topic != a.Topic || r.QueueID != a.QueueID {
			t.Fatalf("Route(%d) = %v, message went to %s/%d", i, r, a.Topic, a.QueueID)
		}
		c := b3.Message(uint64(i))
		if len(c.Body) != len(a.Body) || c.Keys != a.Keys {
			differs++
		}
	}
	if differs < n/2 {
		t.Fatalf("another seed changed only %d of %d messages", differs, n)
	}
}

func TestMessageShape(t *testing.T) {
	cfg := richConfig(t, 7)
	cfg.Queue = mustVar(t, "roundrobin:0-3")
	f, _ := NewFactory(cfg)
	b := f.NewBuilder()
	var sizeSum float64
	topics := map[string]int{}
	for i := 0; i < 4000; i++ {
		m := b.Message(uint64(i))
		if len(m.Body) < workloads.HeaderSize || len(m.Body) > 4096 {
			t.Fatalf("size %d", len(m.Body))
		}
		sizeSum += float64(len(m.Body))
		if m.QueueID != int32(i%4) {
			t.Fatalf("round robin: seq %d queue %d", i, m.QueueID)
		}
		if m.Keys == "" || m.Keys[0] != 'k' || (m.Tags != "t1" && m.Tags != "t2") {
			t.Fatalf("keys %q tags %q", m.Keys, m.Tags)
		}
		topics[m.Topic]++
		h, err := workloads.DecodeHeader(m.Body)
		if err != nil || h.Seq != uint64(i) || h.Stream != 3 || h.Born != 0 {
			t.Fatalf("header %+v %v", h, err)
		}
	}
	if !(topics["a"] > topics["b"] && topics["b"] > topics["c"]) {
		t.Fatalf("zipf topic choice not skewed: %v", topics)
	}
	if mean := sizeSum / 4000; math.Abs(mean-(24+4096)/2.0) > 100 { // sizes 10..23 are rounded up to 24
		t.Fatalf("mean size %.0f", mean)
	}
	// Defaults: 1 KiB to bench/0, no keys or tags.
	d, _ := NewFactory(MessageConfig{})
	m := d.NewBuilder().Message(0)
	if len(m.Body) != 1024 || m.Topic != "bench" || m.QueueID != 0 || m.Keys != "" || m.Tags != "" {
		t.Fatalf("default message %+v", m)
	}
	born := time.Unix(1_700_000_000, 5)
	Stamp(m.Body, born, 1500*time.Microsecond)
	h, _ := workloads.DecodeHeader(m.Body)
	if h.Born != born.UnixNano() || h.DelayUs != 1500 || h.Seq != 0 {
		t.Fatalf("stamped header %+v", h)
	}
}

func TestScheduleUniformAndPoisson(t *testing.T) {
	u, err := NewSchedule(Uniform, 2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if got, want := u.Next(), time.Duration(i)*500*time.Microsecond; got != want {
			t.Fatalf("uniform offset %d = %v want %v", i, got, want)
		}
	}
	p, _ := NewSchedule(Poisson, 2000, 9)
	const n = 200000
	var prev time.Duration
	var sum, sumSq float64
	for i := 0; i < n; i++ {
		at := p.Next()
		if i == 0 {
			prev = at
			continue
		}
		gap := float64(at - prev)
		if gap < 0 {
			t.Fatal("schedule went backwards")
		}
		sum += gap
		sumSq += gap * gap
		prev = at
	}
	mean := sum / (n - 1)
	sd := math.Sqrt(sumSq/(n-1) - mean*mean)
	if math.Abs(mean-500_000)/500_000 > 0.01 {
		t.Fatalf("mean inter-arrival %.0f ns, want 500000 ±1%%", mean)
	}
	if cv := sd / mean; math.Abs(cv-1) > 0.02 {
		t.Fatalf("coefficient of variation %.3f, want 1 (exponential)", cv)
	}
	// Seeded: the same seed gives the same schedule.
	a, _ := NewSchedule(Poisson, 100, 5)
	b, _ := NewSchedule(Poisson, 100, 5)
	for i := 0; i < 100; i++ {
		if a.Next() != b.Next() {
			t.Fatal("poisson schedule not reproducible")
		}
	}
	for _, bad := range []struct {
		a Arrival
		r float64
	}{{Uniform, 0}, {Uniform, -1}, {"bursty", 10}, {Poisson, math.NaN()}} {
		if _, err := NewSchedule(bad.a, bad.r, 0); err == nil {
			t.Fatalf("NewSchedule(%q, %v) accepted", bad.a, bad.r)
		}
	}
}

func TestSeqTracker(t *testing.T) {
	tr := NewSeqTracker()
	for _, s := range []uint64{0, 1, 63, 64, 1 << 40} {
		if tr.Observe(1, s) {
			t.Fatalf("first sight of %d flagged duplicate", s)
		}
	}
	if !tr.Observe(1, 63) || tr.Observe(2, 63) {
		t.Fatal("duplicates are per (stream, seq)")
	}
	if tr.Unique() != 6 || tr.Duplicates() != 1 {
		t.Fatalf("unique %d dups %d", tr.Unique(), tr.Duplicates())
	}
}

// The header recovers the intended time exactly, so a consumer classifies a
// message intended at the very end of warm-up as the producer did (the
// tail consumer once counted the first message of a run, intended at its
// start, as warm-up: 999 measured of 1000).
func TestStampIntendedRecoversIntendedExactly(t *testing.T) {
	t.Parallel()
	start := time.Now()
	env := Env{Start: start, MeasureFrom: start}
	b := testBuilder(t)
	for _, delay := range []time.Duration{0, 1, 999, 1000, 1001, 123_456_789, time.Duration(math.MaxUint32) * time.Microsecond} {
		m := b.Message(0)
		stampIntended(m.Body, env.MeasureFrom, delay)
		h, err := workloads.DecodeHeader(m.Body)
		if err != nil {
			t.Fatal(err)
		}
		got := time.Unix(0, h.Intended())
		if got.Before(env.MeasureFrom) || got.UnixNano() != env.MeasureFrom.UnixNano() {
			t.Fatalf("delay %v: intended %v, want %v", delay, got, env.MeasureFrom)
		}
		if lag := env.MeasureFrom.Add(delay).UnixNano() - h.Born; lag < 0 || lag >= 1000 {
			t.Fatalf("delay %v: born %d ns before the actual send, want [0, 1µs)", delay, lag)
		}
	}
}

// Env.at maps a reading onto Start's wall clock by monotonic elapsed time.
func TestEnvAtUsesMonotonicElapsed(t *testing.T) {
	t.Parallel()
	env := Env{Start: time.Now()}
	now := time.Now()
	at := env.at(now)
	if at.UnixNano()-env.Start.UnixNano() != int64(now.Sub(env.Start)) || at.Sub(now) != 0 {
		t.Fatalf("at %v for %v from %v", at, now, env.Start)
	}
	if (Env{}).at(now) != now {
		t.Fatal("without a start, at must return its argument")
	}
}

func testBuilder(t *testing.T) *Builder {
	t.Helper()
	f, err := NewFactory(DefaultMessageConfig())
	if err != nil {
		t.Fatal(err)
	}
	return f.NewBuilder()
}

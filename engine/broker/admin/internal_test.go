package admin

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

func TestRuntimeStatsRates(t *testing.T) {
	r := NewTraffic()
	t0 := r.boot
	r.CountPut("T", 100, 1000, true)
	r.CountPut("T", 1, 10, false)
	r.Sample(t0.Add(10 * time.Second))
	st := r.Snapshot()
	if st.PutTPS != [3]float64{10, 10, 10} || st.MsgsIn != 100 || st.BytesIn != 1000 || st.PutFailures != 1 {
		t.Fatalf("after 10 s: %+v", st)
	}
	// 100 more, then 50 quiet seconds: none in the last 10 s, 200 over the
	// last 60 s (and over the 600 s window, shorter so far).
	r.CountPut("T", 100, 1000, true)
	for s := 11; s <= 60; s++ {
		r.Sample(t0.Add(time.Duration(s) * time.Second))
	}
	st = r.Snapshot()
	if st.PutTPS[0] != 0 || st.PutTPS[1] != 200.0/60 || st.PutTPS[2] != 200.0/60 {
		t.Fatalf("rates %v", st.PutTPS)
	}
	// Topic rates come from 10 s samples (taken at 19, 29, ... 59 s so far,
	// all after the puts: rate 0); 60 more before the one at 69 s.
	if tt := st.Topics["T"]; tt.MsgsIn != 200 || tt.PutTPS != 0 {
		t.Fatalf("topic %+v", tt)
	}
	r.CountPut("T", 60, 60, true)
	for s := 61; s <= 70; s++ {
		r.Sample(t0.Add(time.Duration(s) * time.Second))
	}
	if tt := r.Snapshot().Topics["T"]; tt.PutTPS != 60.0/50 {
		t.Fatalf("topic rate %v, want 1.2", tt.PutTPS)
	}
	// A pull of two records, then a miss.
	rec := make([]byte, 20)
	rec[3] = 10
	rec[13] = 10
	r.CountGet("g", "T", rec)
	r.CountGet("g", "T", nil)
	st = r.Snapshot()
	if st.MsgsOut != 2 || st.BytesOut != 20 || st.GetFound != 1 || st.GetMiss != 1 || st.GetRequests != 2 ||
		st.Groups["g@T"].Msgs != 2 || st.Groups["g@T"].Group != "g" || st.Groups["g@T"].Topic != "T" {
		t.Fatalf("gets %+v", st)
	}
	// Crossing midnight moves the morning snapshots.
	r.Sample(t0.Add(24 * time.Hour))
	if st := r.Snapshot(); st.PutTodayMorning != 260 || st.PutYesterdayMorning != 0 || st.GetTodayMorning != 2 {
		t.Fatalf("morning snapshots %+v", st)
	}
}

func TestOpsFormats(t *testing.T) {
	for v, want := range map[float64]string{0: "0.0", 12.5: "12.5", 3: "3.0"} {
		if got := javaDouble(v); got != want {
			t.Errorf("javaDouble(%v) = %q, want %q", v, got, want)
		}
	}
	if got := formatRuntime(26*time.Hour + 3*time.Minute + 4*time.Second); got != "[ 1 days, 2 hours, 3 minutes, 4 seconds ]" {
		t.Errorf("formatRuntime %q", got)
	}
	for n, want := range map[uint64]string{12: "12 B", 1536: "1.5 KiB", 3 << 30: "3.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMQMapRoundTrip(t *testing.T) {
	entries := []mqEntry{
		{protocol.MessageQueue{Topic: "B", BrokerName: "b", QueueID: 1}, mustJSON(protocol.TopicOffset{MaxOffset: 5})},
		{protocol.MessageQueue{Topic: "A", BrokerName: "b", QueueID: 10}, []byte("7")},
		{protocol.MessageQueue{Topic: "A", BrokerName: "b", QueueID: 2}, []byte("-1")},
	}
	body := append([]byte(`{"consumeTps":1.5,"offsetTable":`), appendMQMap(nil, entries)...)
	body = append(body, '}')
	want := `{"consumeTps":1.5,"offsetTable":{{"brokerName":"b","queueId":2,"topic":"A"}:-1,` +
		`{"brokerName":"b","queueId":10,"topic":"A"}:7,` +
		`{"brokerName":"b","queueId":1,"topic":"B"}:{"lastUpdateTimestamp":0,"maxOffset":5,"minOffset":0}}}`
	if string(body) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", body, want)
	}
	raw, ok := FieldOf(body, "offsetTable")
	if !ok {
		t.Fatal("no offsetTable")
	}
	m, err := ParseMQMap(raw)
	if err != nil || len(m) != 3 || string(m[protocol.MessageQueue{Topic: "A", BrokerName: "b", QueueID: 10}]) != "7" {
		t.Fatalf("parsed %v, %v", m, err)
	}
	var to protocol.TopicOffset
	if err := json.Unmarshal(m[protocol.MessageQueue{Topic: "B", BrokerName: "b", QueueID: 1}], &to); err != nil || to.MaxOffset != 5 {
		t.Fatalf("value %+v %v", to, err)
	}
	if tps, ok := FieldOf(body, "consumeTps"); !ok || string(tps) != "1.5" {
		t.Fatalf("consumeTps %q", tps)
	}
	if _, err := ParseMQMap([]byte(`{"a":1}`)); err == nil {
		t.Fatal("a string-keyed map parsed as MessageQueue-keyed")
	}
}

func TestParseProperties(t *testing.T) {
	p, err := parseProperties([]byte("# c\n! c\n a = 1 \nb:2\n\nc=x=y\n"))
	if err != nil || len(p) != 3 || p["a"] != "1" || p["b"] != "2" || p["c"] != "x=y" {
		t.Fatalf("%v %v", p, err)
	}
	if _, err := parseProperties([]byte("a=\\uZZZZ\n")); err == nil {
		t.Fatal("a malformed \\u escape parsed")
	}
}

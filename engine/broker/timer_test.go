package broker_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// timerConfig shortens the timer's precision so tests wait little.
func timerConfig(c *broker.Config) {
	c.TimerPrecision = 100 * time.Millisecond
	c.TimerFlushInterval = 50 * time.Millisecond
}

// startTimerRealEnv is startRealEnv with the timer settings and mutate.
func startTimerRealEnv(t *testing.T, dir string, pol flush.Kind, ns string, mutate func(*broker.Config)) *env {
	t.Helper()
	e := &env{t: t}
	cfg := testConfig()
	cfg.NamesrvAddrs = []string{ns}
	timerConfig(&cfg)
	if mutate != nil {
		mutate(&cfg)
	}
	b, err := broker.New(cfg, broker.OpenStore(smallStoreConfig(dir, pol), cfg.DelayLevels))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	e.b = b
	e.client, e.pushes = newClient(t)
	return e
}

// pullAll reads every record of (topic, queueID).
func (e *env) pullAll(topic string, queueID int32) []record.Record {
	e.t.Helper()
	var out []record.Record
	for off := int64(0); off < 1<<20; {
		resp := e.pull("timer-check", topic, queueID, off, 32)
		if resp.Code != protocol.RespSuccess {
			return out
		}
		recs := decodeAll(e.t, resp.Body)
		out = append(out, recs...)
		off = extInt(e.t, resp, "nextBeginOffset")
	}
	return out
}

func recProp(r record.Record, name string) string {
	v, _ := r.Property(name)
	return string(v)
}

// checkNotEarly fails if a delivered timer message was stored before its
// TIMER_DELIVER_MS (or before sentAt + its delay).
func checkNotEarly(t *testing.T, r record.Record, dueMS int64) {
	t.Helper()
	if r.StoreTimestamp < dueMS {
		t.Fatalf("%q delivered %d ms early (stored %d, due %d)", r.Body, dueMS-r.StoreTimestamp, r.StoreTimestamp, dueMS)
	}
	out, err := strconv.ParseInt(recProp(r, broker.PropertyTimerOutMS), 10, 64)
	if err != nil || out < dueMS {
		t.Fatalf("%q: TIMER_OUT_MS %q, due %d", r.Body, recProp(r, broker.PropertyTimerOutMS), dueMS)
	}
	deq, err := strconv.ParseInt(recProp(r, broker.PropertyTimerDequeueMS), 10, 64)
	if err != nil || deq < out || deq > r.StoreTimestamp {
		t.Fatalf("%q: TIMER_DEQUEUE_MS %q, slot %d, stored %d", r.Body, recProp(r, broker.PropertyTimerDequeueMS), out, r.StoreTimestamp)
	}
}

func TestTimerDueNowGoesStraightToTopic(t *testing.T) {
	e := startEnv(t, timerConfig)
	e.createTopic("T", 2)
	past := strconv.FormatInt(time.Now().Add(-time.Second).UnixMilli(), 10)
	e.mustSend("T", 1, "past", props(broker.PropertyTimerDeliverMS, past))
	e.mustSend("T", 1, "zero", props(broker.PropertyTimerDelaySec, "0"))
	e.mustSend("T", 1, "negative", props(broker.PropertyTimerDelayMS, "-5000"))
	if got := e.maxOffset("T", 1); got != 3 {
		t.Fatalf("T:1 has %d messages right after the sends, want 3", got)
	}
	if got := e.maxOffset(protocol.TimerTopic, 0); got != 0 {
		t.Fatalf("timer queue holds %d messages, want 0", got)
	}
}

func TestTimerDeliveredWhenDueNotBefore(t *testing.T) {
	e := startEnv(t, timerConfig)
	e.createTopic("T", 2)
	start := time.Now()
	deliverAt := start.Add(1500 * time.Millisecond).UnixMilli()
	absResp := e.mustSend("T", 1, "absolute", props(broker.PropertyTimerDeliverMS, strconv.FormatInt(deliverAt, 10),
		record.PropertyTags, "tagA", record.PropertyKeys, "k1"))
	e.mustSend("T", 0, "delay-sec", props(broker.PropertyTimerDelaySec, "1"))
	e.mustSend("T", 0, "delay-ms", props(broker.PropertyTimerDelayMS, "700"))
	if absResp.ExtFields["queueId"] != "1" {
		t.Fatalf("send reply queueId %q, want the real queue 1", absResp.ExtFields["queueId"])
	}
	if e.maxOffset("T", 0)+e.maxOffset("T", 1) != 0 {
		t.Fatal("a timer message is visible in its topic at once")
	}
	eventually(t, "timer messages parked", func() bool { return e.maxOffset(protocol.TimerTopic, 0) == 3 })

	// Nothing is visible before its due time; everything is after it.
	eventually(t, "delay-ms delivered", func() bool { return e.maxOffset("T", 0) >= 1 })
	if time.Since(start) < 700*time.Millisecond {
		t.Fatalf("delay-ms visible after %v", time.Since(start))
	}
	// The stats follow the delivery's put (TimerStats is not updated in
	// the same step): wait for them rather than read them once.
	eventually(t, "timer stats counting the first delivery", func() bool {
		st := e.b.TimerStats()
		return st.Delivered >= 1
	})
	if st := e.b.TimerStats(); st.Delivered+st.Pending < 3 {
		t.Fatalf("timer stats with messages pending: %+v", st)
	}
	eventually(t, "all delivered", func() bool { return e.maxOffset("T", 0) == 2 && e.maxOffset("T", 1) == 1 })
	if time.Since(start) < 1500*time.Millisecond {
		t.Fatalf("absolute visible after %v", time.Since(start))
	}
	eventually(t, "timer stats counting every delivery", func() bool {
		st := e.b.TimerStats()
		return st.Delivered == 3 && st.Loaded == 0 && st.Pending == 0
	})
	if st := e.b.TimerStats(); !st.Enabled || st.Delivered != 3 || st.Loaded != 0 || st.Pending != 0 || st.OffsetBehind != 0 {
		t.Fatalf("timer stats after the deliveries: %+v", st)
	}
	got := append(e.pullAll("T", 0), e.pullAll("T", 1)...)
	due := map[string]int64{"absolute": deliverAt, "delay-sec": start.UnixMilli() + 1000, "delay-ms": start.UnixMilli() + 700}
	for _, r := range got {
		checkNotEarly(t, r, due[string(r.Body)])
		for _, gone := range []string{record.PropertyRealTopic, record.PropertyRealQueueID} {
			if _, ok := r.Property(gone); ok {
				t.Fatalf("%q delivered with %s", r.Body, gone)
			}
		}
		for _, kept := range []string{broker.PropertyTimerEnqueueMS, broker.PropertyTimerDequeueMS, record.PropertyUniqKey} {
			if recProp(r, kept) == "" {
				t.Fatalf("%q delivered without %s", r.Body, kept)
			}
		}
	}
	r := got[len(got)-1]
	if string(r.Body) != "absolute" || r.QueueID != 1 || recProp(r, record.PropertyTags) != "tagA" || recProp(r, record.PropertyKeys) != "k1" {
		t.Fatalf("absolute delivered as %q queue %d tags %q keys %q", r.Body, r.QueueID, recProp(r, record.PropertyTags), recProp(r, record.PropertyKeys))
	}
	if recProp(r, broker.PropertyTimerDeliverMS) != strconv.FormatInt(deliverAt, 10) {
		t.Fatalf("TIMER_DELIVER_MS not kept: %q", recProp(r, broker.PropertyTimerDeliverMS))
	}
	// The client's message id is the one the producer got back.
	if uniq := recProp(r, record.PropertyUniqKey); uniq != absResp.ExtFields["transactionId"] {
		t.Fatalf("UNIQ_KEY %q, producer got %q", uniq, absResp.ExtFields["transactionId"])
	}
}

func TestTimerDefaultPrecisionRoundsUp(t *testing.T) {
	e := startEnv(t, nil) // 1 s precision
	e.createTopic("T", 1)
	due := time.Now().Add(300 * time.Millisecond).UnixMilli()
	e.mustSend("T", 0, "m", props(broker.PropertyTimerDeliverMS, strconv.FormatInt(due, 10)))
	eventually(t, "delivery", func() bool { return e.maxOffset("T", 0) == 1 })
	r := e.pullAll("T", 0)[0]
	checkNotEarly(t, r, due)
	out, _ := strconv.ParseInt(recProp(r, broker.PropertyTimerOutMS), 10, 64)
	if out%1000 != 0 || out-due >= 1000 {
		t.Fatalf("TIMER_OUT_MS %d for due %d: want the next whole second", out, due)
	}
}

func TestTimerRefusals(t *testing.T) {
	far := strconv.FormatInt(time.Now().Add(4*24*time.Hour).UnixMilli(), 10)
	for _, tc := range []struct {
		name   string
		mutate func(*broker.Config)
		topic  string
		props  string
		code   int32
		remark string
	}{
		{"disabled", func(c *broker.Config) { c.TimerEnable = false }, "T", props(broker.PropertyTimerDelaySec, "2"),
			protocol.RespSystemError, "timerWheelEnable is false"},
		{"too far absolute", nil, "T", props(broker.PropertyTimerDeliverMS, far), protocol.RespMessageIllegal, "max delay 259200000ms"},
		{"too far relative", func(c *broker.Config) { c.TimerMaxDelay = time.Minute }, "T", props(broker.PropertyTimerDelaySec, "61"),
			protocol.RespMessageIllegal, "max delay 60000ms"},
		{"not a number", nil, "T", props(broker.PropertyTimerDelayMS, "soon"), protocol.RespMessageIllegal, "TIMER_DELAY_MS \"soon\""},
		// A delete marker due in the future is a recall (recall_test.go); one
		// due now could delete nothing.
		{"delete marker due now", nil, "T", props(broker.PropertyTimerDelayMS, "-1", broker.PropertyTimerDelUniq, "x"),
			protocol.RespMessageIllegal, "must be due in the future"},
		{"timer topic", nil, protocol.TimerTopic, "", protocol.RespNoPermission, "forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, func(c *broker.Config) {
				timerConfig(c)
				if tc.mutate != nil {
					tc.mutate(c)
				}
			})
			e.createTopic("T", 1)
			resp := e.send(tc.topic, 0, "m", tc.props)
			wantCode(t, tc.name, resp, tc.code)
			if !strings.Contains(resp.Remark, tc.remark) {
				t.Fatalf("remark %q does not say %q", resp.Remark, tc.remark)
			}
			time.Sleep(300 * time.Millisecond) // anything parked would be due by now
			if n, m := e.maxOffset("T", 0), e.maxOffset(protocol.TimerTopic, 0); n != 0 || m != 0 {
				t.Fatalf("refused message stored: topic %d, timer queue %d", n, m)
			}
		})
	}
}

func TestTimerBatchRefusedAndDelayLevelWins(t *testing.T) {
	e := startEnv(t, timerConfig)
	e.createTopic("T", 1)
	batch := record.AppendBatchItem(nil, record.BatchItem{Body: []byte("a")})
	batch = record.AppendBatchItem(batch, record.BatchItem{Body: []byte("b"), Properties: props(broker.PropertyTimerDelaySec, "2")})
	h := sendHeader("T", 0, "")
	h.Batch = true
	resp := e.call(protocol.ReqSendBatchMessage, h.ExtFields(true), batch)
	wantCode(t, "timer batch", resp, protocol.RespMessageIllegal)
	if e.maxOffset("T", 0) != 0 {
		t.Fatal("a refused batch was stored")
	}
	h.Topic = protocol.TimerTopic
	plain := record.AppendBatchItem(nil, record.BatchItem{Body: []byte("x")})
	wantCode(t, "batch to the timer topic", e.call(protocol.ReqSendBatchMessage, h.ExtFields(true), plain), protocol.RespNoPermission)
	if e.maxOffset(protocol.TimerTopic, 0) != 0 {
		t.Fatal("a batch sent to the timer topic was stored")
	}

	// DELAY (level 1, 20 ms here) wins over TIMER_DELAY_SEC, as in Java.
	e.mustSend("T", 0, "leveled", props(record.PropertyDelayTimeLevel, "1", broker.PropertyTimerDelaySec, "60"))
	eventually(t, "delay-level delivery", func() bool { return e.maxOffset("T", 0) == 1 })
	if e.maxOffset(protocol.TimerTopic, 0) != 0 {
		t.Fatal("a delay-level message went to the timer")
	}
	if r := e.onlyRecord("T"); recProp(r, broker.PropertyTimerDelaySec) != "" {
		t.Fatalf("delivered with TIMER_DELAY_SEC %q", recProp(r, broker.PropertyTimerDelaySec))
	}
}

// With a tiny load window and in-memory cap, most messages start "far" and
// the index shrinks: every message is still delivered once, in due order,
// never early.
func TestTimerBoundedIndexDeliversAll(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) {
		timerConfig(c)
		c.TimerPrecision = 10 * time.Millisecond
		c.TimerLoadWindow = 200 * time.Millisecond
		c.TimerMaxLoaded = 16
	})
	e.createTopic("T", 1)
	const n = 60
	// Due no sooner than 1 s from now: every send must reach the broker
	// before its message is due (one that arrives due is stored at once,
	// with no TIMER_OUT_MS), also on a loaded machine.
	base := time.Now().Add(time.Second).UnixMilli()
	due := map[string]int64{}
	for i := range n {
		// Sent in a shuffled due order, four at each due time, spread
		// over 0.6 s (about 30 within a window: more than the cap).
		d := base + int64((i*37)%n/4)*40
		body := fmt.Sprintf("m%02d", i)
		due[body] = d
		e.mustSend("T", 0, body, props(broker.PropertyTimerDeliverMS, strconv.FormatInt(d, 10)))
	}
	eventually(t, "all delivered", func() bool { return e.maxOffset("T", 0) >= n })
	time.Sleep(200 * time.Millisecond) // a duplicate would show up
	got := e.pullAll("T", 0)
	if len(got) != n {
		t.Fatalf("%d deliveries of %d messages", len(got), n)
	}
	seen := map[string]bool{}
	var prev int64
	for _, r := range got {
		b := string(r.Body)
		if seen[b] {
			t.Fatalf("%s delivered twice", b)
		}
		seen[b] = true
		checkNotEarly(t, r, due[b])
		if due[b] < prev {
			t.Fatalf("%s (due %d) delivered after a message due %d", b, due[b], prev)
		}
		prev = due[b]
	}
}

// A clean restart between parking and delivery, over engine/store with every
// flush policy: each message is delivered exactly once, also one that fell
// due while the broker was down, and one delivered before the restart is
// not delivered again.
func TestTimerRestartDeliversExactlyOnce(t *testing.T) {
	for _, pol := range flush.Kinds() {
		t.Run("flush="+string(pol), func(t *testing.T) {
			ns := startNamesrv(t)
			dir := t.TempDir()
			e := startTimerRealEnv(t, dir, pol, ns.Addr(), nil)
			e.createTopic("T", 1)
			start := time.Now()
			// Margins that hold on a loaded machine: the four sends arrive
			// before "early" is due; "early" is delivered (and the broker
			// shut down) well before "during-down" is due.
			due := map[string]int64{
				"early":       start.Add(600 * time.Millisecond).UnixMilli(),
				"during-down": start.Add(1800 * time.Millisecond).UnixMilli(),
				"after":       start.Add(2800 * time.Millisecond).UnixMilli(),
				"after-too":   start.Add(2800 * time.Millisecond).UnixMilli(),
			}
			for _, b := range []string{"after", "during-down", "early", "after-too"} {
				e.mustSend("T", 0, b, props(broker.PropertyTimerDeliverMS, strconv.FormatInt(due[b], 10)))
			}
			eventually(t, "early delivered", func() bool { return e.maxOffset("T", 0) == 1 })
			if err := e.b.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Until(time.UnixMilli(due["during-down"] + 200)))

			e2 := startTimerRealEnv(t, dir, pol, ns.Addr(), nil)
			eventually(t, "all delivered after restart", func() bool { return e2.maxOffset("T", 0) >= 4 })
			time.Sleep(300 * time.Millisecond) // a duplicate would show up
			got := e2.pullAll("T", 0)
			count := map[string]int{}
			for _, r := range got {
				count[string(r.Body)]++
				checkNotEarly(t, r, due[string(r.Body)])
			}
			for b := range due {
				if count[b] != 1 {
					t.Fatalf("%s delivered %d times (all: %v)", b, count[b], count)
				}
			}
			if string(got[0].Body) != "early" {
				t.Fatalf("first delivery %q, want early", got[0].Body)
			}
		})
	}
}

// A crash image (the store directory copied while the broker runs, as a
// killed process leaves it): the copy recovers abnormally and its timer
// delivers every parked message at least once, none early; one delivered
// and checkpointed before the image is not delivered again.
func TestTimerCrashImageDeliversAtLeastOnce(t *testing.T) {
	for _, pol := range flush.Kinds() {
		t.Run("flush="+string(pol), func(t *testing.T) {
			ns := startNamesrv(t)
			dir := t.TempDir()
			e := startTimerRealEnv(t, dir, pol, ns.Addr(), nil)
			e.createTopic("T", 1)
			start := time.Now()
			// Margins that hold on a loaded machine: the sends arrive before
			// "early" is due; the image is taken well before "late" is.
			due := map[string]int64{
				"early": start.Add(600 * time.Millisecond).UnixMilli(),
				"late":  start.Add(2200 * time.Millisecond).UnixMilli(),
				"later": start.Add(2400 * time.Millisecond).UnixMilli(),
			}
			for _, b := range []string{"late", "early", "later"} {
				e.mustSend("T", 0, b, props(broker.PropertyTimerDeliverMS, strconv.FormatInt(due[b], 10)))
			}
			eventually(t, "early delivered", func() bool { return e.b.TimerStats().Delivered == 1 })
			time.Sleep(200 * time.Millisecond) // several checkpoint intervals
			image := t.TempDir()
			if err := os.CopyFS(image, os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
			if err := e.b.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}

			e2 := startTimerRealEnv(t, image, pol, ns.Addr(), nil)
			eventually(t, "delivery from the crash image", func() bool { return e2.maxOffset("T", 0) >= 3 })
			time.Sleep(300 * time.Millisecond)
			count := map[string]int{}
			for _, r := range e2.pullAll("T", 0) {
				count[string(r.Body)]++
				checkNotEarly(t, r, due[string(r.Body)])
			}
			if count["early"] != 1 || count["late"] < 1 || count["later"] < 1 {
				t.Fatalf("deliveries from the crash image: %v", count)
			}
		})
	}
}

// Loading a later window reads the offsets of the messages due in it, not
// the whole backlog: with messages due in 3.2 s stored first and a stream
// due over the next second after them, the rescans read each record about
// twice at most (a bucket straddling the window end is read again), where
// rereading the backlog on every window would read it about 20 times.
func TestTimerRescanReadsOnlyReachedBuckets(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) {
		timerConfig(c)
		c.TimerPrecision = 10 * time.Millisecond
		c.TimerLoadWindow = 200 * time.Millisecond
	})
	e.createTopic("T", 1)
	const n = 30
	start := time.Now()
	due := map[string]int64{}
	send := func(body string, d int64) {
		due[body] = d
		e.mustSend("T", 0, body, props(broker.PropertyTimerDeliverMS, strconv.FormatInt(d, 10)))
	}
	for i := range n {
		send(fmt.Sprintf("later%02d", i), start.Add(3200*time.Millisecond).UnixMilli())
	}
	for i := range n {
		// Due no sooner than 1 s from start: every send arrives before
		// its message is due, also on a loaded machine.
		send(fmt.Sprintf("soon%02d", i), start.Add(time.Second+time.Duration(i)*30*time.Millisecond).UnixMilli())
	}
	eventually(t, "all delivered", func() bool { return e.maxOffset("T", 0) >= 2*n })
	time.Sleep(200 * time.Millisecond)
	got := e.pullAll("T", 0)
	if len(got) != 2*n {
		t.Fatalf("%d deliveries of %d messages", len(got), 2*n)
	}
	for _, r := range got {
		checkNotEarly(t, r, due[string(r.Body)])
	}
	st := e.b.TimerStats()
	t.Logf("rescans read %d records", st.RescanRecords)
	if st.RescanRecords > 3*2*n {
		t.Fatalf("rescans read %d records for %d messages", st.RescanRecords, 2*n)
	}
	if st.RescanRecords == 0 {
		t.Fatal("no rescan: the messages were all loaded at once (the test no longer exercises the far index)")
	}
}

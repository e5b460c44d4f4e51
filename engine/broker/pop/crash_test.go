package pop_test

import (
	"context"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/pop"
)

// A crash image (the store directory copied while the broker runs, as a
// kill -9 leaves it, consumer offsets on file possibly stale): the broker
// started on it redelivers every popped message that was not acked, and
// none whose ack was answered.
func TestReviveAfterCrash(t *testing.T) {
	dir := t.TempDir()
	e := startReal(t, dir)
	e.createTopic("T", 2)
	const n = 10
	for i := range n {
		e.send("T", int32(i%2), strconv.Itoa(i), "")
	}
	req := pop.Request{Group: "g", Topic: "T", QueueID: -1, MaxMessages: 32, Invisible: 500 * time.Millisecond}
	got := e.popUntil(req, n)
	acked := map[string]bool{}
	var unacked []string
	for _, m := range got {
		b := string(m.Record.Body)
		if b[0]%2 == 0 {
			e.ack("g", "T", m)
			acked[b] = true
		} else {
			unacked = append(unacked, b)
		}
	}
	image := t.TempDir()
	if err := os.CopyFS(image, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := e.b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	e2 := startReal(t, image)
	req.Poll = 2 * time.Second
	req.Invisible = time.Minute
	back := e2.popUntil(req, len(unacked))
	var redelivered []string
	for _, m := range back {
		b := string(m.Record.Body)
		if acked[b] {
			t.Fatalf("acked message %s redelivered after the crash", b)
		}
		redelivered = append(redelivered, b)
	}
	req.Poll = 300 * time.Millisecond
	for _, m := range e2.pop(req) {
		t.Fatalf("extra delivery after the crash: %s", m.Record.Body)
	}
	sort.Strings(redelivered)
	sort.Strings(unacked)
	if len(redelivered) != len(unacked) {
		t.Fatalf("redelivered %v, want %v", redelivered, unacked)
	}
	for i := range unacked {
		if redelivered[i] != unacked[i] {
			t.Fatalf("redelivered %v, want %v", redelivered, unacked)
		}
	}
}

// FIFO acks survive a crash too: the broker started on a crash image
// delivers the batch that was in flight, then the rest, never an acked
// message.
func TestFIFOAfterCrash(t *testing.T) {
	dir := t.TempDir()
	e := startReal(t, dir)
	e.createTopic("F", 1)
	for i := range 6 {
		e.send("F", 0, strconv.Itoa(i), "")
	}
	eventually(t, "all messages dispatched", func() bool { return e.b.Store().MaxOffset("F", 0) == 6 })
	req := pop.Request{Group: "g", Topic: "F", QueueID: -1, MaxMessages: 2, Invisible: time.Minute, FIFO: true}
	for _, m := range e.popUntil(req, 2) { // 0, 1
		e.ack("g", "F", m)
	}
	inFlight := e.popUntil(req, 2) // 2, 3
	if bodies(inFlight) != "2(q0@2 #1) 3(q0@3 #1) " {
		t.Fatalf("second batch %s", bodies(inFlight))
	}
	image := t.TempDir()
	if err := os.CopyFS(image, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := e.b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	e2 := startReal(t, image)
	req.Poll = 2 * time.Second
	var order []string
	for len(order) < 4 {
		got := e2.popUntil(req, 1)
		for _, m := range got {
			order = append(order, string(m.Record.Body))
			e2.ack("g", "F", m)
		}
	}
	if got := strings.Join(order, ","); got != "2,3,4,5" {
		t.Fatalf("deliveries after the crash: %s", got)
	}
}

package pop_test

import (
	"context"
	"os"
	"sort"
	"strconv"
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

package natsdriver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/brokerlab/brokerlab/workloads"
)

func open(t *testing.T, cfg Config) *Driver {
	t.Helper()
	d, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// body is a distinct, checkable body of a size that varies with i.
func body(topic string, q, i int) []byte {
	b := make([]byte, 24+(i*37)%900)
	for j := range b {
		b[j] = byte(j + i)
	}
	copy(b, fmt.Sprintf("%s/%d/%d", topic, q, i))
	return b
}

func send(t *testing.T, d *Driver, topic string, q, i int) {
	t.Helper()
	if err := d.Send(context.Background(), &workloads.Message{Topic: topic, QueueID: int32(q), Body: body(topic, q, i)}); err != nil {
		t.Fatalf("send %s/%d/%d: %v", topic, q, i, err)
	}
}

// pullAll reads (topic, q) from offset to its end in batches of batch.
func pullAll(t *testing.T, d *Driver, topic string, q int, offset int64, batch int) [][]byte {
	t.Helper()
	var out [][]byte
	for range 10000 {
		bs, next, err := d.Pull(context.Background(), topic, int32(q), offset, batch)
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) == 0 {
			if next != offset {
				t.Fatalf("empty pull moved offset %d -> %d", offset, next)
			}
			return out
		}
		if len(bs) > batch || next != offset+int64(len(bs)) {
			t.Fatalf("pull at %d max %d: %d bodies, next %d", offset, batch, len(bs), next)
		}
		out = append(out, bs...)
		offset = next
	}
	t.Fatal("pull loop did not end")
	return nil
}

func checkQueue(t *testing.T, d *Driver, topic string, q, n int) {
	t.Helper()
	if got, err := d.MaxOffset(topic, int32(q)); err != nil || got != int64(n) {
		t.Fatalf("max offset %s/%d = %d, %v; want %d", topic, q, got, err, n)
	}
	got := pullAll(t, d, topic, q, 0, 37)
	if len(got) != n {
		t.Fatalf("%s/%d: pulled %d, want %d", topic, q, len(got), n)
	}
	for i, b := range got {
		if !bytes.Equal(b, body(topic, q, i)) {
			t.Fatalf("%s/%d offset %d: body %q..., want %q...", topic, q, i, b[:12], body(topic, q, i)[:12])
		}
	}
}

func TestRoundTripTwoTopicsTwoQueues(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig(t.TempDir())
	cfg.Topics, cfg.Queues = []string{"alpha", "be.ta/%"}, 2 // the second needs escaping
	d := open(t, cfg)
	defer d.Close()
	const n = 300
	var wg sync.WaitGroup
	for _, topic := range cfg.Topics {
		for q := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range n {
					send(t, d, topic, q, i)
				}
			}()
		}
	}
	wg.Wait()
	for _, topic := range cfg.Topics {
		for q := range 2 {
			checkQueue(t, d, topic, q, n)
		}
	}
	// A pull from the middle, and one past the end.
	bs, next, err := d.Pull(context.Background(), "alpha", 1, 150, 10)
	if err != nil || len(bs) != 10 || next != 160 || !bytes.Equal(bs[0], body("alpha", 1, 150)) {
		t.Fatalf("mid pull: %d bodies, next %d, %v", len(bs), next, err)
	}
	bs, next, err = d.Pull(context.Background(), "alpha", 1, n+5, 10)
	if err != nil || len(bs) != 0 || next != n+5 {
		t.Fatalf("pull past the end: %d bodies, next %d, %v", len(bs), next, err)
	}
	st := d.Stats()
	if st.Publishes != 4*n || st.Acks != 4*n || st.Errors != 0 || st.StreamsCreated != 4 {
		t.Fatalf("stats %+v", st)
	}
	if _, err := os.Stat(filepath.Join(d.StoreDir(), "$G", "streams", "be%2Eta%2F%25~1")); err != nil {
		t.Fatalf("stream directory under the store dir %s: %v", d.StoreDir(), err)
	}
}

func TestUnknownQueueIsEmptyAndSendCreatesIt(t *testing.T) {
	t.Parallel()
	d := open(t, DefaultConfig(t.TempDir()))
	defer d.Close()
	if m, err := d.MaxOffset("later", 3); err != nil || m != 0 {
		t.Fatalf("max offset of a queue without stream: %d, %v", m, err)
	}
	if bs, next, err := d.Pull(context.Background(), "later", 3, 0, 8); err != nil || len(bs) != 0 || next != 0 {
		t.Fatalf("pull of a queue without stream: %d bodies, next %d, %v", len(bs), next, err)
	}
	for i := range 5 {
		send(t, d, "later", 3, i)
	}
	checkQueue(t, d, "later", 3, 5)
	if err := d.Send(context.Background(), &workloads.Message{Topic: "later", QueueID: -1, Body: []byte("x")}); !errors.Is(err, ErrQueue) {
		t.Fatalf("negative queue: %v, want ErrQueue", err)
	}
}

func TestRestartKeepsDataWithSyncAlways(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig(t.TempDir())
	cfg.SyncAlways, cfg.Topics, cfg.Queues = true, []string{"t0", "t1"}, 2
	d := open(t, cfg)
	for _, topic := range cfg.Topics {
		for q := range 2 {
			for i := range 40 {
				send(t, d, topic, q, i)
			}
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = open(t, cfg)
	defer d.Close()
	for _, topic := range cfg.Topics {
		for q := range 2 {
			checkQueue(t, d, topic, q, 40)
		}
	}
	send(t, d, "t0", 1, 40) // offsets continue after the restart
	checkQueue(t, d, "t0", 1, 41)
}

func TestCallsAfterCloseFail(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig(t.TempDir())
	cfg.Topics = []string{"t"}
	d := open(t, cfg)
	send(t, d, "t", 0, 0)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Send(context.Background(), &workloads.Message{Topic: "t", Body: []byte("late")}); !errors.Is(err, workloads.ErrClosed) {
		t.Fatalf("send after close: %v", err)
	}
	if _, _, err := d.Pull(context.Background(), "t", 0, 0, 1); !errors.Is(err, workloads.ErrClosed) {
		t.Fatalf("pull after close: %v", err)
	}
	if _, err := d.MaxOffset("t", 0); !errors.Is(err, workloads.ErrClosed) {
		t.Fatalf("max offset after close: %v", err)
	}
	if err := d.Close(); !errors.Is(err, workloads.ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
}

func TestAsyncWindowAcksEverything(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig(t.TempDir())
	cfg.Topics, cfg.AsyncWindow = []string{"t"}, 16
	d := open(t, cfg)
	defer d.Close()
	const senders, each = 4, 50 // 200: not a multiple of the window, Flush takes the rest
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := d.Send(context.Background(), &workloads.Message{Topic: "t", Body: body("t", s, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := d.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := d.Stats(); st.Publishes != senders*each || st.Acks != senders*each || st.Errors != 0 {
		t.Fatalf("stats %+v", st)
	}
	if got := pullAll(t, d, "t", 0, 0, 64); len(got) != senders*each {
		t.Fatalf("pulled %d, want %d", len(got), senders*each)
	}
}

func TestMaxBytesDiscardsOldestAndPullSkipsAhead(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig(t.TempDir())
	cfg.Topics, cfg.MaxBytes = []string{"t"}, 64<<10
	d := open(t, cfg)
	defer d.Close()
	const n = 400 // ~180 KiB of bodies into a 64 KiB stream
	for i := range n {
		send(t, d, "t", 0, i)
	}
	if m, err := d.MaxOffset("t", 0); err != nil || m != n {
		t.Fatalf("max offset %d, %v", m, err)
	}
	bs, next, err := d.Pull(context.Background(), "t", 0, 0, 5)
	if err != nil || len(bs) == 0 {
		t.Fatalf("pull: %d bodies, %v", len(bs), err)
	}
	first := next - int64(len(bs)) // contiguous after the first kept one
	if first <= 0 || !bytes.Equal(bs[0], body("t", 0, int(first))) {
		t.Fatalf("first kept offset %d: want > 0 and its body", first)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]Config{
		"no dir":      {},
		"replicas 3":  {Dir: t.TempDir(), Replicas: 3},
		"empty topic": {Dir: t.TempDir(), Topics: []string{""}},
		"neg window":  {Dir: t.TempDir(), AsyncWindow: -1},
	} {
		if d, err := Open(cfg); !errors.Is(err, ErrConfig) {
			if d != nil {
				d.Close()
			}
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}

func TestEscapeTopic(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"bench": "bench", "a_b-C9": "a_b-C9", "a.b": "a%2Eb", "x y*>": "x%20y%2A%3E", "%~": "%25%7E"} {
		if got := escapeTopic(in); got != want {
			t.Errorf("escapeTopic(%q) = %q, want %q", in, got, want)
		}
	}
}

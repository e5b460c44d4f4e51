package fakedriver

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/workloads"
)

var (
	_ workloads.Driver      = (*Driver)(nil)
	_ workloads.Source      = (*Driver)(nil)
	_ workloads.ByteLocator = (*Driver)(nil)
)

func TestSendPullRoundTrip(t *testing.T) {
	d := New(DefaultConfig())
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		body := make([]byte, 100*(i+1))
		if err := d.Send(ctx, &workloads.Message{Topic: "t", QueueID: 2, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := d.MaxOffset("t", 2); n != 10 {
		t.Fatalf("MaxOffset %d", n)
	}
	if n, _ := d.MaxOffset("t", 3); n != 0 {
		t.Fatalf("empty queue MaxOffset %d", n)
	}
	bodies, next, err := d.Pull(ctx, "t", 2, 3, 4)
	if err != nil || next != 7 || len(bodies) != 4 || len(bodies[0]) != 400 {
		t.Fatalf("pull: %d bodies next %d err %v", len(bodies), next, err)
	}
	if bodies, next, err := d.Pull(ctx, "t", 2, 10, 4); len(bodies) != 0 || next != 10 || err != nil {
		t.Fatal("pull at end must return nothing")
	}
	if _, _, err := d.Pull(ctx, "t", 2, -1, 4); !errors.Is(err, ErrBadPull) {
		t.Fatalf("negative offset: %v", err)
	}
	// Sizes 100..1000: the last three total 2700, the last four 3400.
	if off, _ := d.OffsetBytesBehind("t", 2, 3000); off != 7 {
		t.Fatalf("OffsetBytesBehind(3000) = %d want 7", off)
	}
	if off, _ := d.OffsetBytesBehind("t", 2, 1<<40); off != 0 {
		t.Fatalf("everything behind: %d", off)
	}
	if got := d.Queues(); len(got) != 1 || got[0] != (workloads.QueueRef{Topic: "t", QueueID: 2}) {
		t.Fatalf("queues %v", got)
	}
}

func TestStallBlocksAllSends(t *testing.T) {
	d := New(Config{Retain: false, Stalls: []Stall{{AtSend: 2, For: 100 * time.Millisecond}}})
	ctx := context.Background()
	start := time.Now()
	if err := d.Send(ctx, &workloads.Message{}); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) >= 100*time.Millisecond {
		t.Fatal("first send stalled")
	}
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ { // send #2 triggers the stall; #3, #4 arrive during it
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.Send(ctx, &workloads.Message{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Fatalf("stalled sends returned after %v", el)
	}
	if d.Acked() != 4 || d.MaxInFlight() < 1 {
		t.Fatalf("acked %d", d.Acked())
	}
	// A stall honours cancellation.
	d.Stall(time.Hour)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := d.Send(cctx, &workloads.Message{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled send: %v", err)
	}
	if d.Failed() != 1 {
		t.Fatalf("failed %d", d.Failed())
	}
}

func TestInjectedErrorAndClose(t *testing.T) {
	d := New(DefaultConfig())
	boom := errors.New("boom")
	d.SetError(boom)
	if err := d.Send(context.Background(), &workloads.Message{}); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	d.SetError(nil)
	if err := d.Send(context.Background(), &workloads.Message{}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if err := d.Send(context.Background(), &workloads.Message{}); !errors.Is(err, workloads.ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

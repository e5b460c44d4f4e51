package netdriver

import (
	"context"
	"sync"

	"github.com/brokerlab/brokerlab/workloads"
)

// batchQueue groups the concurrent Sends of one broker queue: a Send queues
// its message and, if fewer than MaxInFlightBatches batches are in flight,
// starts a sender that takes up to Batch queued messages per request until
// the queue is empty (group commit on the client, no timer).
type batchQueue struct {
	d     *Driver
	q     queueRef
	topic string

	mu       sync.Mutex // guards pending and inFlight
	pending  []*pendingSend
	inFlight int
}

type pendingSend struct {
	m    *workloads.Message
	done chan error
}

func (d *Driver) batchQueue(q queueRef, topic string) *batchQueue {
	d.mu.RLock()
	bq := d.mu.batches[q]
	d.mu.RUnlock()
	if bq != nil {
		return bq
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if bq = d.mu.batches[q]; bq == nil {
		bq = &batchQueue{d: d, q: q, topic: topic}
		d.mu.batches[q] = bq
	}
	return bq
}

func (b *batchQueue) send(ctx context.Context, m *workloads.Message) error {
	ps := &pendingSend{m: m, done: make(chan error, 1)}
	b.mu.Lock()
	b.pending = append(b.pending, ps)
	start := b.inFlight < b.d.cfg.MaxInFlightBatches
	if start {
		b.inFlight++
	}
	b.mu.Unlock()
	if start {
		go b.drain()
	}
	select {
	case err := <-ps.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain sends batches until nothing is queued.
func (b *batchQueue) drain() {
	for {
		b.mu.Lock()
		if len(b.pending) == 0 {
			b.inFlight--
			b.mu.Unlock()
			return
		}
		n := min(len(b.pending), b.d.cfg.Batch)
		take := b.pending[:n:n]
		b.pending = b.pending[n:]
		if len(b.pending) == 0 {
			b.pending = nil
		}
		b.mu.Unlock()
		ms := make([]*workloads.Message, len(take))
		for i, ps := range take {
			ms[i] = ps.m
		}
		err := b.d.sendBatchTo(context.Background(), b.q, b.topic, ms)
		for _, ps := range take {
			ps.done <- err
		}
	}
}

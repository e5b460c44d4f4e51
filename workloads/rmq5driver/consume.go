package rmq5driver

import (
	"context"
	"fmt"
	"strconv"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"

	"github.com/brokerlab/brokerlab/workloads"
)

// receiveRetry is how long a receive loop waits after a failed receive
// before the next (a refused or broken call must not spin).
const receiveRetry = 10 * time.Millisecond

// subscribe makes sure the simple consumer runs, subscribed to topic, and
// that its receive loops run.
func (d *Driver) subscribe(topic string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return workloads.ErrClosed
	}
	if d.topics[topic] {
		return nil
	}
	if d.consumer == nil {
		c, err := rmq.NewSimpleConsumer(d.clientConfig(d.cfg.ConsumerGroup),
			rmq.WithSimpleAwaitDuration(d.cfg.Await),
			rmq.WithSimpleSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.SUB_ALL}))
		if err != nil {
			return fmt.Errorf("rmq5driver: new simple consumer: %w", err)
		}
		if err := c.Start(); err != nil {
			return fmt.Errorf("rmq5driver: start simple consumer: %w", err)
		}
		d.consumer = c
		for range d.cfg.Receivers {
			d.loops.Add(1)
			go d.receiveLoop(c)
		}
	} else if err := d.consumer.Subscribe(topic, rmq.SUB_ALL); err != nil {
		return fmt.Errorf("rmq5driver: subscribe %s: %w", topic, err)
	}
	d.topics[topic] = true
	return nil
}

// receiveLoop receives batches until Close: each message's body is filed
// under its queue (QueueProperty) first, so that a waiting Pull returns it
// at once, then every message of the batch is acked.
func (d *Driver) receiveLoop(c rmq.SimpleConsumer) {
	defer d.loops.Done()
	for d.ctx.Err() == nil {
		mvs, err := c.Receive(d.ctx, int32(d.cfg.ReceiveBatch), d.cfg.Invisible)
		if err != nil {
			if d.ctx.Err() != nil {
				return
			}
			d.emptyReceives.Add(1)
			if !notFound(err) {
				d.emptyReceives.Add(-1)
				d.receiveErrors.Add(1)
				select {
				case <-d.ctx.Done():
					return
				case <-time.After(receiveRetry):
				}
			}
			continue
		}
		d.received.Add(int64(len(mvs)))
		d.file(mvs)
		for _, mv := range mvs {
			if err := c.Ack(d.ctx, mv); err != nil {
				if d.ctx.Err() != nil {
					return
				}
				d.ackErrors.Add(1)
			}
		}
	}
}

// file puts received bodies into their queues' inboxes and wakes their
// Pulls.
func (d *Driver) file(mvs []*rmq.MessageView) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, mv := range mvs {
		q, _ := strconv.Atoi(mv.GetProperties()[QueueProperty]) // a foreign message: queue 0
		ib := d.inboxLocked(workloads.QueueRef{Topic: mv.GetTopic(), QueueID: int32(q)})
		ib.bodies = append(ib.bodies, mv.GetBody())
		ib.delivered++
		close(ib.ready)
		ib.ready = make(chan struct{})
	}
}

func (d *Driver) inboxLocked(q workloads.QueueRef) *inbox {
	ib := d.queues[q]
	if ib == nil {
		ib = &inbox{ready: make(chan struct{})}
		d.queues[q] = ib
	}
	return ib
}

// Pull implements workloads.Source over the simple consumer's deliveries:
// it returns up to max bodies received for (topic, queueID), waiting up to
// PullHold for one, and next = offset + their count. Offsets are therefore
// the driver's own: the index of a message among those its consumer
// received for the queue (MaxOffset is the count received so far), not the
// broker's queue offsets, which POP does not expose per queue to the
// client. ctx's end returns its error.
func (d *Driver) Pull(ctx context.Context, topic string, queueID int32, offset int64, max int) ([][]byte, int64, error) {
	if err := d.subscribe(topic); err != nil {
		return nil, offset, err
	}
	q := workloads.QueueRef{Topic: topic, QueueID: queueID}
	var hold <-chan time.Time
	for {
		d.mu.Lock()
		ib := d.inboxLocked(q)
		if n := min(len(ib.bodies), max); n > 0 {
			out := ib.bodies[:n:n]
			ib.bodies = ib.bodies[n:]
			d.mu.Unlock()
			return out, offset + int64(n), nil
		}
		ready := ib.ready
		d.mu.Unlock()
		if hold == nil {
			t := time.NewTimer(d.cfg.PullHold)
			defer t.Stop()
			hold = t.C
		}
		select {
		case <-ready:
		case <-hold:
			return nil, offset, nil
		case <-ctx.Done():
			return nil, offset, ctx.Err()
		case <-d.ctx.Done():
			return nil, offset, workloads.ErrClosed
		}
	}
}

// MaxOffset implements workloads.Source: the number of messages the
// driver's consumer has received for (topic, queueID) so far (see Pull).
// The first call for a topic starts its consumption.
func (d *Driver) MaxOffset(topic string, queueID int32) (int64, error) {
	if err := d.subscribe(topic); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inboxLocked(workloads.QueueRef{Topic: topic, QueueID: queueID}).delivered, nil
}

package natsdriver

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/brokerlab/brokerlab/workloads"
)

// Send implements workloads.Driver: a JetStream publish of m.Body to the
// subject of (m.Topic, m.QueueID). Keys and Tags are not sent (JetStream has
// no such fields; headers would add bytes the other systems do not carry).
// With AsyncWindow == 0 it returns after the PubAck; otherwise see the
// package doc.
func (d *Driver) Send(ctx context.Context, m *workloads.Message) error {
	if err := d.errClosedIf(); err != nil {
		return err
	}
	q, err := d.queue(m.Topic, m.QueueID)
	if err == nil {
		err = d.ensureStream(ctx, q)
	}
	if err != nil {
		d.errs.Add(1)
		return err
	}
	d.publishes.Add(1)
	if d.cfg.AsyncWindow > 0 {
		return d.sendAsync(ctx, q, m.Body)
	}
	if _, err := d.js.Publish(ctx, q.subject, m.Body); err != nil {
		d.errs.Add(1)
		return fmt.Errorf("natsdriver: publish to %s: %w", q.stream, err)
	}
	d.acks.Add(1)
	return nil
}

// sendAsync publishes without waiting, unless this publish completes a
// window: then it waits for the window's acks.
func (d *Driver) sendAsync(ctx context.Context, q *queue, body []byte) error {
	f, err := d.js.PublishAsync(q.subject, body, d.pubOpts...)
	if err != nil {
		d.errs.Add(1)
		return fmt.Errorf("natsdriver: async publish to %s: %w", q.stream, err)
	}
	d.winMu.Lock()
	d.win = append(d.win, f)
	var full []jetstream.PubAckFuture
	if len(d.win) >= d.cfg.AsyncWindow {
		full, d.win = d.win, make([]jetstream.PubAckFuture, 0, d.cfg.AsyncWindow)
	}
	d.winMu.Unlock()
	if full == nil {
		return nil
	}
	return d.await(ctx, full)
}

// Flush waits for the acks of the async publishes in the window being
// filled (full windows are awaited by the Send that completed them) and
// returns the first error among them. It is a no-op without AsyncWindow.
func (d *Driver) Flush(ctx context.Context) error {
	if err := d.errClosedIf(); err != nil {
		return err
	}
	return d.flush(ctx)
}

func (d *Driver) flush(ctx context.Context) error {
	d.winMu.Lock()
	futs := d.win
	d.win = nil
	d.winMu.Unlock()
	return d.await(ctx, futs)
}

// await waits for every future and returns the first publish error. On ctx's
// end the futures not yet resolved go back into the current window, so a
// later Flush still accounts for them.
func (d *Driver) await(ctx context.Context, futs []jetstream.PubAckFuture) error {
	var first error
	for i, f := range futs {
		select {
		case <-f.Ok():
			d.acks.Add(1)
		case err := <-f.Err():
			d.errs.Add(1)
			if first == nil {
				first = fmt.Errorf("natsdriver: async publish to %s: %w", f.Msg().Subject, err)
			}
		case <-ctx.Done():
			d.winMu.Lock()
			d.win = append(d.win, futs[i:]...)
			d.winMu.Unlock()
			if first == nil {
				first = ctx.Err()
			}
			return first
		}
	}
	return first
}

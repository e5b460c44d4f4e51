// Package fakedriver is an in-memory system under test for the generators'
// own tests and for experiment/CLI tests: a workloads.Driver that is also a
// workloads.Source and workloads.ByteLocator.
//
// Send sleeps for the configured service time, then waits out any stall,
// appends the message to its (topic, queue) and returns. Stalls model a
// system that stops acknowledging (an fsync stuck for a second, a SIGSTOPped
// broker): while a stall lasts no Send returns, whether it began before or
// during the stall. Stalls are injected at a given send count (Config.Stalls,
// reproducible) or at any time (Stall).
//
// Concurrency: every method is safe for concurrent use. Bodies are kept
// (when Config.Retain) without copying: the generators hand over ownership.
package fakedriver

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/workloads"
)

// Stall stops acknowledgements for For, starting when the AtSend-th Send
// (1-based) arrives.
type Stall struct {
	AtSend int64
	For    time.Duration
}

// Config configures a Driver.
type Config struct {
	Name        string        // Driver.Name ("fake")
	ServiceTime time.Duration // per Send, slept (0: none)
	Retain      bool          // keep bodies, so Pull can serve them (true)
	Stalls      []Stall
}

// DefaultConfig is an instant, retaining fake.
func DefaultConfig() Config { return Config{Name: "fake", Retain: true} }

// Driver is the fake system.
type Driver struct {
	cfg Config

	sends, acked, failed atomic.Int64
	inFlight, maxIn      atomic.Int64
	closed               atomic.Bool

	mu          sync.Mutex // guards the fields below
	serviceTime time.Duration
	stallUntil  time.Time
	sendErr     error
	queues      map[workloads.QueueRef]*queue
}

type queue struct {
	mu     sync.Mutex
	bodies [][]byte
	ends   []int64 // ends[i] = total body bytes of messages 0..i
}

// New returns a Driver.
func New(cfg Config) *Driver {
	if cfg.Name == "" {
		cfg.Name = "fake"
	}
	return &Driver{cfg: cfg, serviceTime: cfg.ServiceTime, queues: map[workloads.QueueRef]*queue{}}
}

// Name implements workloads.Driver.
func (d *Driver) Name() string { return d.cfg.Name }

// Close implements workloads.Driver; later Sends fail with workloads.ErrClosed.
func (d *Driver) Close() error {
	d.closed.Store(true)
	return nil
}

// Send implements workloads.Driver.
func (d *Driver) Send(ctx context.Context, m *workloads.Message) error {
	if d.closed.Load() {
		return workloads.ErrClosed
	}
	n := d.sends.Add(1)
	in := d.inFlight.Add(1)
	defer d.inFlight.Add(-1)
	for {
		old := d.maxIn.Load()
		if in <= old || d.maxIn.CompareAndSwap(old, in) {
			break
		}
	}

	d.mu.Lock()
	for _, s := range d.cfg.Stalls {
		if s.AtSend == n {
			d.stallLocked(s.For)
		}
	}
	st, err := d.serviceTime, d.sendErr
	d.mu.Unlock()
	if err != nil {
		d.failed.Add(1)
		return err
	}
	if err := sleep(ctx, st); err != nil {
		d.failed.Add(1)
		return err
	}
	for {
		d.mu.Lock()
		wait := time.Until(d.stallUntil)
		d.mu.Unlock()
		if wait <= 0 {
			break
		}
		if err := sleep(ctx, wait); err != nil {
			d.failed.Add(1)
			return err
		}
	}
	if d.cfg.Retain {
		d.queue(workloads.QueueRef{Topic: m.Topic, QueueID: m.QueueID}, true).append(m.Body)
	}
	d.acked.Add(1)
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stall stops acknowledgements for d from now (extending a running stall).
func (d *Driver) Stall(dur time.Duration) {
	d.mu.Lock()
	d.stallLocked(dur)
	d.mu.Unlock()
}

func (d *Driver) stallLocked(dur time.Duration) {
	if until := time.Now().Add(dur); until.After(d.stallUntil) {
		d.stallUntil = until
	}
}

// SetServiceTime changes the service time of later Sends.
func (d *Driver) SetServiceTime(st time.Duration) {
	d.mu.Lock()
	d.serviceTime = st
	d.mu.Unlock()
}

// SetError makes every later Send fail with err (nil: succeed again).
func (d *Driver) SetError(err error) {
	d.mu.Lock()
	d.sendErr = err
	d.mu.Unlock()
}

// Sends is the number of Send calls so far; Acked those that succeeded;
// Failed those that returned an error.
func (d *Driver) Sends() int64  { return d.sends.Load() }
func (d *Driver) Acked() int64  { return d.acked.Load() }
func (d *Driver) Failed() int64 { return d.failed.Load() }

// InFlight is the number of Sends in progress; MaxInFlight the most at once.
func (d *Driver) InFlight() int64    { return d.inFlight.Load() }
func (d *Driver) MaxInFlight() int64 { return d.maxIn.Load() }

// Queues lists the queues that hold messages, sorted.
func (d *Driver) Queues() []workloads.QueueRef {
	d.mu.Lock()
	out := make([]workloads.QueueRef, 0, len(d.queues))
	for q := range d.queues {
		out = append(out, q)
	}
	d.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].QueueID < out[j].QueueID
	})
	return out
}

func (d *Driver) queue(ref workloads.QueueRef, create bool) *queue {
	d.mu.Lock()
	defer d.mu.Unlock()
	q := d.queues[ref]
	if q == nil && create {
		q = &queue{}
		d.queues[ref] = q
	}
	return q
}

func (q *queue) append(b []byte) {
	q.mu.Lock()
	end := int64(len(b))
	if n := len(q.ends); n > 0 {
		end += q.ends[n-1]
	}
	q.bodies = append(q.bodies, b)
	q.ends = append(q.ends, end)
	q.mu.Unlock()
}

// Pull implements workloads.Source. Offsets past the end return nothing.
func (d *Driver) Pull(ctx context.Context, topic string, queueID int32, offset int64, max int) ([][]byte, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, offset, err
	}
	if offset < 0 || max <= 0 {
		return nil, offset, errBadPull(offset, max)
	}
	q := d.queue(workloads.QueueRef{Topic: topic, QueueID: queueID}, false)
	if q == nil {
		return nil, offset, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if offset >= int64(len(q.bodies)) {
		return nil, offset, nil
	}
	end := min(offset+int64(max), int64(len(q.bodies)))
	return append([][]byte(nil), q.bodies[offset:end]...), end, nil
}

// MaxOffset implements workloads.Source.
func (d *Driver) MaxOffset(topic string, queueID int32) (int64, error) {
	q := d.queue(workloads.QueueRef{Topic: topic, QueueID: queueID}, false)
	if q == nil {
		return 0, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return int64(len(q.bodies)), nil
}

// OffsetBytesBehind implements workloads.ByteLocator.
func (d *Driver) OffsetBytesBehind(topic string, queueID int32, bytes int64) (int64, error) {
	q := d.queue(workloads.QueueRef{Topic: topic, QueueID: queueID}, false)
	if q == nil {
		return 0, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.ends)
	if n == 0 || bytes <= 0 {
		return int64(n), nil
	}
	total := q.ends[n-1]
	// First i whose suffix [i, n) totals at most bytes: total - ends[i-1] <= bytes.
	i := sort.Search(n, func(i int) bool {
		before := int64(0)
		if i > 0 {
			before = q.ends[i-1]
		}
		return total-before <= bytes
	})
	return int64(i), nil
}

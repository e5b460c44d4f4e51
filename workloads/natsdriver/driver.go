package natsdriver

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/brokerlab/brokerlab/workloads"
)

// Driver is a JetStream client, with the embedded server it connects to
// (Open) or connected to a server elsewhere (Dial); see the package doc for
// the layout and the concurrency contract.
type Driver struct {
	cfg     Config
	srv     *server.Server // nil for a Driver from Dial
	nc      *nats.Conn
	js      jetstream.JetStream
	pubOpts []jetstream.PublishOpt
	replies *replyMux
	closed  atomic.Bool

	queues sync.Map // workloads.QueueRef -> *queue

	winMu sync.Mutex
	win   []jetstream.PubAckFuture // async publishes of the window being filled

	publishes, acks, errs, pulls, streams atomic.Int64
}

// queue is one (topic, queue) and whether its stream exists.
type queue struct {
	queueNames
	mu    sync.Mutex // serialises stream creation
	ready atomic.Bool
}

// Stats counts the driver's work since Open.
type Stats struct {
	Publishes      int64 // publishes issued (sync or async)
	Acks           int64 // PubAcks received (async: once their window was awaited)
	Errors         int64 // failed Sends and failed async publishes
	Pulls          int64 // Pull calls answered without error
	StreamsCreated int64 // streams created or updated by this Driver
}

var (
	_ workloads.Driver = (*Driver)(nil)
	_ workloads.Source = (*Driver)(nil)
)

// Open starts the server (no network listener unless cfg.Loopback),
// connects to it and creates the streams of cfg.Topics x [0, cfg.Queues).
// Close shuts the server down.
func Open(cfg Config) (*Driver, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	srv, err := newServer(cfg, cfg.Loopback)
	if err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, srv: srv}
	url := ""
	if cfg.Loopback {
		url = srv.ClientURL()
	}
	return d.open(url)
}

// open connects d to url (in-process when empty) and creates its streams;
// on failure it shuts down what it started.
func (d *Driver) open(url string) (*Driver, error) {
	if err := d.connect(url); err != nil {
		d.shutdown()
		return nil, err
	}
	if err := d.createStreams(); err != nil {
		d.shutdown()
		return nil, err
	}
	return d, nil
}

// Dial connects over TCP to a JetStream server that runs elsewhere (url
// such as nats://127.0.0.1:4222, e.g. a StartServer in another process) and
// creates the streams of cfg.Topics x [0, cfg.Queues). cfg.Dir and the
// server options (SyncAlways, SyncInterval, MaxPayload) are not used: the
// server has its own. Close closes the connection only.
func Dial(url string, cfg Config) (*Driver, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if url == "" {
		return nil, fmt.Errorf("%w: empty server URL", ErrConfig)
	}
	cfg.Loopback = true
	return (&Driver{cfg: cfg}).open(url)
}

// createStreams creates (or updates) the streams of cfg.Topics x
// [0, cfg.Queues).
func (d *Driver) createStreams() error {
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.RequestTimeout)
	defer cancel()
	for _, t := range d.cfg.Topics {
		for q := 0; q < d.cfg.Queues; q++ {
			qu, err := d.queue(t, int32(q))
			if err == nil {
				err = d.ensureStream(ctx, qu)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// connect connects to url over TCP, or in-process to d.srv when url is "".
func (d *Driver) connect(url string) error {
	var nc *nats.Conn
	var err error
	if url != "" {
		nc, err = nats.Connect(url, nats.NoReconnect(), nats.Name("brokerlab-natsdriver"))
	} else {
		nc, err = nats.Connect("", nats.InProcessServer(d.srv), nats.NoReconnect(), nats.Name("brokerlab-natsdriver"))
	}
	if err != nil {
		return fmt.Errorf("%w: connect (loopback %v): %w", ErrStart, d.cfg.Loopback, err)
	}
	d.nc = nc
	js, err := jetstream.New(nc,
		jetstream.WithDefaultTimeout(d.cfg.RequestTimeout),
		jetstream.WithPublishAsyncMaxPending(d.cfg.MaxAsyncPending),
		jetstream.WithPublishAsyncTimeout(d.cfg.RequestTimeout))
	if err != nil {
		return fmt.Errorf("%w: jetstream context: %w", ErrStart, err)
	}
	d.js = js
	d.pubOpts = []jetstream.PublishOpt{jetstream.WithStallWait(d.cfg.RequestTimeout)}
	d.replies, err = newReplyMux(nc)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStart, err)
	}
	return nil
}

// Name implements workloads.Driver.
func (d *Driver) Name() string { return "nats" }

// Config returns the resolved configuration.
func (d *Driver) Config() Config { return d.cfg }

// StoreDir is the directory JetStream keeps its files in (Dir/jetstream);
// "" for a Driver from Dial (the server is elsewhere).
func (d *Driver) StoreDir() string {
	if d.srv == nil {
		return ""
	}
	return d.srv.StoreDir()
}

// Stats returns the counters so far.
func (d *Driver) Stats() Stats {
	return Stats{
		Publishes:      d.publishes.Load(),
		Acks:           d.acks.Load(),
		Errors:         d.errs.Load(),
		Pulls:          d.pulls.Load(),
		StreamsCreated: d.streams.Load(),
	}
}

// Close waits for outstanding async publishes (bounded by RequestTimeout),
// closes the client and, for a Driver from Open, shuts the server down and
// waits for it. Later calls
// fail with workloads.ErrClosed.
func (d *Driver) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return workloads.ErrClosed
	}
	var err error
	if d.cfg.AsyncWindow > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), d.cfg.RequestTimeout)
		err = d.flush(ctx)
		cancel()
	}
	d.shutdown()
	return err
}

func (d *Driver) shutdown() {
	if d.nc != nil {
		d.nc.Close()
	}
	if d.srv != nil {
		d.srv.Shutdown()
		d.srv.WaitForShutdown()
	}
}

// queue returns the cached names of (topic, queueID).
func (d *Driver) queue(topic string, queueID int32) (*queue, error) {
	ref := workloads.QueueRef{Topic: topic, QueueID: queueID}
	if q, ok := d.queues.Load(ref); ok {
		return q.(*queue), nil
	}
	n, err := namesOf(topic, queueID)
	if err != nil {
		return nil, err
	}
	q, _ := d.queues.LoadOrStore(ref, &queue{queueNames: n})
	return q.(*queue), nil
}

// ensureStream creates (or updates to the driver's config) q's stream once
// per Driver.
func (d *Driver) ensureStream(ctx context.Context, q *queue) error {
	if q.ready.Load() {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ready.Load() {
		return nil
	}
	maxBytes := d.cfg.MaxBytes
	if maxBytes <= 0 {
		maxBytes = -1
	}
	_, err := d.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        q.stream,
		Subjects:    []string{q.subject},
		Storage:     jetstream.FileStorage,
		Replicas:    d.cfg.Replicas,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxBytes:    maxBytes,
		AllowDirect: true,
	})
	if err != nil {
		return fmt.Errorf("natsdriver: create stream %s: %w", q.stream, err)
	}
	d.streams.Add(1)
	q.ready.Store(true)
	return nil
}

// withTimeout bounds ctx by RequestTimeout when it has no deadline.
func (d *Driver) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d.cfg.RequestTimeout)
}

// errClosedIf returns workloads.ErrClosed after Close.
func (d *Driver) errClosedIf() error {
	if d.closed.Load() {
		return workloads.ErrClosed
	}
	return nil
}

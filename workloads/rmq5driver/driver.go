package rmq5driver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"

	"github.com/brokerlab/brokerlab/workloads"
)

// QueueProperty is the user property a sent message carries its
// workloads.Message.QueueID in: the RocketMQ 5 producer picks the broker's
// queue itself and a received MessageView does not tell its queue, so the
// consumer side files each message under the queue the harness meant.
const QueueProperty = "BLQ"

// Driver is a broker as the official RocketMQ 5 Go client sees it over
// gRPC. See the package comment for what runs and its concurrency.
type Driver struct {
	cfg      Config
	producer rmq.Producer
	logDir   string // removed by Close when New made it
	closed   atomic.Bool

	ctx    context.Context // the receive loops'; cancelled by Close
	cancel context.CancelFunc
	loops  sync.WaitGroup

	mu       sync.Mutex
	consumer rmq.SimpleConsumer
	topics   map[string]bool
	queues   map[workloads.QueueRef]*inbox

	receiveErrors atomic.Int64
	ackErrors     atomic.Int64
	received      atomic.Int64
	emptyReceives atomic.Int64
}

// inbox is one queue's received bodies not yet taken by Pull.
type inbox struct {
	bodies    [][]byte
	delivered int64         // bodies ever filed here
	ready     chan struct{} // closed when bodies were added; replaced after
}

var (
	_ workloads.Driver = (*Driver)(nil)
	_ workloads.Source = (*Driver)(nil)
)

// logSetup makes the client's process-wide logger write to one directory:
// the client reads its settings from the environment when it initialises
// the logger, so New sets them once, before the first client exists.
var logSetup sync.Once

// New starts the client's producer; the simple consumer starts on the
// first Pull or MaxOffset.
func New(cfg Config) (*Driver, error) {
	def := DefaultConfig()
	if cfg.Endpoint == "" {
		return nil, fmt.Errorf("%w: an endpoint is required (the gRPC front end)", ErrBadConfig)
	}
	if len(cfg.Topics) == 0 {
		return nil, fmt.Errorf("%w: at least one topic is required (the client starts over a topic's route)", ErrBadConfig)
	}
	cfg.Name = cmp.Or(cfg.Name, def.Name)
	cfg.ConsumerGroup = cmp.Or(cfg.ConsumerGroup, def.ConsumerGroup)
	cfg.LogLevel = cmp.Or(cfg.LogLevel, def.LogLevel)
	cfg.SendTimeout = cmp.Or(cfg.SendTimeout, def.SendTimeout)
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, def.MaxAttempts)
	cfg.ReceiveBatch = cmp.Or(cfg.ReceiveBatch, def.ReceiveBatch)
	cfg.Invisible = cmp.Or(cfg.Invisible, def.Invisible)
	cfg.Await = cmp.Or(cfg.Await, def.Await)
	cfg.Receivers = cmp.Or(cfg.Receivers, def.Receivers)
	cfg.PullHold = cmp.Or(cfg.PullHold, def.PullHold)
	if cfg.SendTimeout < 0 || cfg.MaxAttempts < 0 || cfg.ReceiveBatch < 0 || cfg.Invisible < 0 ||
		cfg.Await < 0 || cfg.Receivers < 0 || cfg.PullHold < 0 {
		return nil, fmt.Errorf("%w: negative setting in %+v", ErrBadConfig, cfg)
	}
	d := &Driver{cfg: cfg, topics: map[string]bool{}, queues: map[workloads.QueueRef]*inbox{}}
	if cfg.LogDir == "" {
		dir, err := os.MkdirTemp("", "rmq5driver-log-")
		if err != nil {
			return nil, fmt.Errorf("rmq5driver: log dir: %w", err)
		}
		cfg.LogDir, d.logDir = dir, dir
	}
	logSetup.Do(func() {
		rmq.EnableSsl = cfg.TLS // read by every client's dial: set once
		// The client's logger was made by its package init (lazily opening
		// ~/logs/rocketmq on the first line); remake it here, before any
		// line is written.
		_ = os.Setenv(rmq.CLIENT_LOG_ROOT, cfg.LogDir)
		_ = os.Setenv(rmq.CLIENT_LOG_LEVEL, cfg.LogLevel)
		rmq.ResetLogger()
	})
	d.ctx, d.cancel = context.WithCancel(context.Background())
	consumed := make(chan error, 1)
	if cfg.Consume {
		go func() {
			var err error
			for _, t := range cfg.Topics {
				if err = d.subscribe(t); err != nil {
					break
				}
			}
			consumed <- err
		}()
	} else {
		consumed <- nil
	}
	p, err := rmq.NewProducer(d.clientConfig(""), rmq.WithMaxAttempts(int32(cfg.MaxAttempts)),
		rmq.WithTopics(cfg.Topics...))
	if err != nil {
		<-consumed
		d.cancel()
		d.closeConsumer()
		d.removeLogDir()
		return nil, fmt.Errorf("rmq5driver: new producer: %w", err)
	}
	perr := p.Start()
	d.producer = p
	if cerr := <-consumed; perr != nil || cerr != nil {
		if perr != nil {
			perr = fmt.Errorf("rmq5driver: start producer: %w", perr)
		}
		_ = d.Close()
		return nil, cmp.Or(perr, cerr)
	}
	return d, nil
}

func (d *Driver) clientConfig(group string) *rmq.Config {
	return &rmq.Config{Endpoint: d.cfg.Endpoint, ConsumerGroup: group, Credentials: &credentials.SessionCredentials{}}
}

func (d *Driver) removeLogDir() {
	if d.logDir != "" {
		_ = os.RemoveAll(d.logDir)
	}
}

// Name implements workloads.Driver.
func (d *Driver) Name() string { return d.cfg.Name }

// Send implements workloads.Driver with the client's synchronous Send: it
// returns once the service answered OK. Failed sends are mapped by
// sendError; ctx bounds the send (SendTimeout when it has no deadline).
func (d *Driver) Send(ctx context.Context, m *workloads.Message) error {
	if d.closed.Load() {
		return workloads.ErrClosed
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.cfg.SendTimeout)
		defer cancel()
	}
	msg := &rmq.Message{Topic: m.Topic, Body: m.Body}
	if m.Tags != "" {
		msg.SetTag(m.Tags)
	}
	if m.Keys != "" {
		msg.SetKeys(strings.Fields(m.Keys)...)
	}
	msg.AddProperty(QueueProperty, strconv.Itoa(int(m.QueueID)))
	receipts, err := d.producer.Send(ctx, msg)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			return fmt.Errorf("rmq5driver: send: %w (%w)", ctx.Err(), err)
		}
		return sendError(err)
	}
	if len(receipts) == 0 {
		return ErrNoReceipt
	}
	return nil
}

// Stats are the consumer side's counts since New.
type Stats struct {
	Received      int64 // messages received (redeliveries included)
	ReceiveErrors int64 // failed receives (empty long polls are not failures)
	AckErrors     int64 // failed acks (the message comes back after Invisible)
	EmptyReceives int64 // receives that found nothing (MESSAGE_NOT_FOUND)
}

// Stats returns the consumer side's counts.
func (d *Driver) Stats() Stats {
	return Stats{Received: d.received.Load(), ReceiveErrors: d.receiveErrors.Load(), AckErrors: d.ackErrors.Load(),
		EmptyReceives: d.emptyReceives.Load()}
}

// Close implements workloads.Driver: it stops the receive loops, then the
// simple consumer and the producer, and removes the log directory New made.
func (d *Driver) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	d.cancel()
	cerr := d.closeConsumer()
	var perr error
	if d.producer != nil {
		perr = d.producer.GracefulStop()
	}
	d.removeLogDir()
	if perr != nil {
		return fmt.Errorf("rmq5driver: producer stop: %w", perr)
	}
	if cerr != nil {
		return fmt.Errorf("rmq5driver: consumer stop: %w", cerr)
	}
	return nil
}

// closeConsumer stops the receive loops (d.ctx is cancelled) and the simple
// consumer.
func (d *Driver) closeConsumer() error {
	d.loops.Wait()
	d.mu.Lock()
	c := d.consumer
	d.mu.Unlock()
	if c != nil {
		return c.GracefulStop()
	}
	return nil
}

package rmqdriver

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/brokerlab/brokerlab/workloads"
)

// Driver is a broker as the official RocketMQ Go client sees it.
type Driver struct {
	cfg      Config
	resolver primitive.NsResolver
	producer rocketmq.Producer
	closed   atomic.Bool

	mu        sync.Mutex
	routes    map[string]route               // by topic
	consumers map[consumerKey]*topicConsumer // by topic and queue
	// firsts holds, per topic, a channel closed when the producer's first
	// send of the topic has returned (see firstSend).
	firsts map[string]chan struct{}
}

// consumerKey names a pull consumer: a topic's queue (its index in the
// route), or metaQueue for the topic's route and offset lookups.
type consumerKey struct {
	topic string
	queue int
}

// metaQueue is the consumerKey queue of a topic's lookup consumer.
const metaQueue = -1

// topicConsumer is one of the client's pull consumers. The client binds a
// pull consumer to a topic (Subscribe or Assign before Start), and its
// PullFrom writes the consumer's own fields on every call (a data race
// between concurrent pulls), so the driver starts one per topic and queue on
// first use — and one more per topic for route and offset lookups —,
// assigned no queue (nothing is pulled in the background) and used only
// through PullFrom, OffsetForTimestamp and the route lookup. Each is its own
// client instance (the client refuses a second consumer of one group in an
// instance).
type topicConsumer struct {
	once sync.Once
	c    rocketmq.PullConsumer
	err  error
	pull sync.Mutex // serialises PullFrom (two readers of one queue)
}

// route is a topic's queues as the name servers list them.
type route struct {
	queues []primitive.MessageQueue // sorted by (broker name, queue id)
	at     time.Time
}

var (
	_ workloads.Driver = (*Driver)(nil)
	_ workloads.Source = (*Driver)(nil)
)

// instanceSeq makes instance names unique within the process.
var instanceSeq atomic.Int64

// New starts the client's producer and pull consumer.
func New(cfg Config) (*Driver, error) {
	var addrs []string
	for _, a := range strings.FieldsFunc(cfg.Namesrv, func(r rune) bool { return r == ';' || r == ',' }) {
		addrs = append(addrs, strings.TrimSpace(a))
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: a name server address is required (the client routes through one)", ErrBadConfig)
	}
	def := DefaultConfig()
	cfg.Name = cmp.Or(cfg.Name, def.Name)
	cfg.ProducerGroup = cmp.Or(cfg.ProducerGroup, def.ProducerGroup)
	cfg.ConsumerGroup = cmp.Or(cfg.ConsumerGroup, def.ConsumerGroup)
	cfg.LogLevel = cmp.Or(cfg.LogLevel, def.LogLevel)
	if cfg.SendTimeout <= 0 {
		cfg.SendTimeout = def.SendTimeout
	}
	if cfg.RouteTTL <= 0 {
		cfg.RouteTTL = def.RouteTTL
	}
	if cfg.Retries < 0 {
		return nil, fmt.Errorf("%w: retries %d < 0", ErrBadConfig, cfg.Retries)
	}
	if cfg.InstanceName == "" {
		cfg.InstanceName = fmt.Sprintf("brokerlab-rmqdriver-%d-%d", time.Now().UnixNano(), instanceSeq.Add(1))
	}
	rlog.SetLogLevel(cfg.LogLevel)

	resolver := primitive.NewPassthroughResolver(addrs)
	p, err := rocketmq.NewProducer(
		producer.WithNsResolver(resolver),
		producer.WithGroupName(cfg.ProducerGroup),
		producer.WithInstanceName(cfg.InstanceName),
		producer.WithSendMsgTimeout(cfg.SendTimeout),
		producer.WithRetry(cfg.Retries),
		producer.WithQueueSelector(producer.NewManualQueueSelector()),
	)
	if err != nil {
		return nil, fmt.Errorf("rmqdriver: new producer: %w", err)
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("rmqdriver: start producer: %w", err)
	}
	return &Driver{cfg: cfg, resolver: resolver, producer: p, routes: make(map[string]route), firsts: make(map[string]chan struct{}),
		consumers: make(map[consumerKey]*topicConsumer)}, nil
}

// consumerFor returns the started pull consumer of topic's queue (metaQueue:
// for lookups), starting it once.
func (d *Driver) consumerFor(topic string, queue int) (rocketmq.PullConsumer, error) {
	k := consumerKey{topic, queue}
	d.mu.Lock()
	tc := d.consumers[k]
	if tc == nil {
		tc = &topicConsumer{}
		d.consumers[k] = tc
	}
	d.mu.Unlock()
	tc.once.Do(func() {
		c, err := rocketmq.NewPullConsumer(
			consumer.WithNsResolver(d.resolver),
			consumer.WithGroupName(d.cfg.ConsumerGroup),
			consumer.WithInstance(fmt.Sprintf("%s-%s-%d", d.cfg.InstanceName, topic, queue)),
		)
		if err != nil {
			tc.err = fmt.Errorf("rmqdriver: new pull consumer: %w", err)
			return
		}
		if err := c.Assign(topic, nil); err != nil {
			tc.err = fmt.Errorf("rmqdriver: assign %s: %w", topic, err)
			return
		}
		if err := c.Start(); err != nil {
			tc.err = fmt.Errorf("%w %s: start pull consumer: %w", ErrNoRoute, topic, err)
			return
		}
		tc.c = c
	})
	return tc.c, tc.err
}

// Name implements workloads.Driver.
func (d *Driver) Name() string { return d.cfg.Name }

// Close implements workloads.Driver: it shuts the producer and the pull
// consumer down (the consumer first persists its offsets, as the client does).
func (d *Driver) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	d.mu.Lock()
	consumers := d.consumers
	d.consumers = map[consumerKey]*topicConsumer{}
	d.mu.Unlock()
	var cerr error
	for _, tc := range consumers {
		tc.once.Do(func() {}) // wait for a start in progress
		if tc.c != nil {
			// A pull abandoned by its context still runs inside the client
			// (Pull returned early); the client's Shutdown must not race it.
			tc.pull.Lock()
			cerr = cmp.Or(cerr, tc.c.Shutdown())
			tc.pull.Unlock()
		}
	}
	perr := d.producer.Shutdown()
	if perr != nil {
		return fmt.Errorf("rmqdriver: producer shutdown: %w", perr)
	}
	if cerr != nil {
		return fmt.Errorf("rmqdriver: consumer shutdown: %w", cerr)
	}
	return nil
}

// queue returns a copy of the topic's queue at index id (modulo the list's
// length): the client writes into the queue it is given, so every call gets
// its own.
func (d *Driver) queue(topic string, id int32) (primitive.MessageQueue, int, error) {
	d.mu.Lock()
	r, ok := d.routes[topic]
	d.mu.Unlock()
	if !ok || time.Since(r.at) > d.cfg.RouteTTL {
		c, err := d.consumerFor(topic, metaQueue)
		if err != nil {
			return primitive.MessageQueue{}, 0, err
		}
		mqs, err := c.GetTopicRouteInfo(topic)
		if err != nil {
			return primitive.MessageQueue{}, 0, fmt.Errorf("%w %s: %w", ErrNoRoute, topic, err)
		}
		r = route{at: time.Now()}
		for _, q := range mqs {
			r.queues = append(r.queues, *q)
		}
		slices.SortFunc(r.queues, func(a, b primitive.MessageQueue) int {
			return cmp.Or(cmp.Compare(a.BrokerName, b.BrokerName), cmp.Compare(a.QueueId, b.QueueId))
		})
		d.mu.Lock()
		d.routes[topic] = r
		d.mu.Unlock()
	}
	if len(r.queues) == 0 {
		return primitive.MessageQueue{}, 0, fmt.Errorf("%w %s: no queues", ErrNoRoute, topic)
	}
	n := int32(len(r.queues))
	i := ((id % n) + n) % n
	return r.queues[i], int(i), nil
}

// Send implements workloads.Driver with the client's SendSync: it returns
// once the broker answered SEND_OK; another status (stored, durability
// unknown) is ErrSendStatus.
func (d *Driver) Send(ctx context.Context, m *workloads.Message) error {
	if d.closed.Load() {
		return workloads.ErrClosed
	}
	q, _, err := d.queue(m.Topic, m.QueueID)
	if err != nil {
		return err
	}
	msg := primitive.NewMessage(m.Topic, m.Body)
	if m.Tags != "" {
		msg.WithTag(m.Tags)
	}
	if m.Keys != "" {
		msg.WithKeys(strings.Fields(m.Keys))
	}
	msg.Queue = &q
	first, err := d.firstSend(ctx, m.Topic)
	if err != nil {
		return err
	}
	res, err := d.producer.SendSync(ctx, msg)
	first()
	if err != nil {
		return fmt.Errorf("rmqdriver: send: %w", err)
	}
	if res.Status != primitive.SendOK {
		return fmt.Errorf("%w: status %d", ErrSendStatus, res.Status)
	}
	return nil
}

// firstSend lets the producer's first send of a topic go alone: the
// client's first send fetches the topic's route and stores the topic's
// queues before the brokers' addresses, without a lock between them, so a
// concurrent first send can find the queue and not yet its broker's address
// and fail with "topic=X route info not found" (seen with four producers
// starting together). Later sends wait for the first to return (or for
// ctx); done (a no-op for them) ends the first one's turn.
func (d *Driver) firstSend(ctx context.Context, topic string) (done func(), err error) {
	d.mu.Lock()
	ch, seen := d.firsts[topic]
	if !seen {
		ch = make(chan struct{})
		d.firsts[topic] = ch
	}
	d.mu.Unlock()
	if !seen {
		var once sync.Once
		return func() { once.Do(func() { close(ch) }) }, nil
	}
	select {
	case <-ch:
		return func() {}, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("rmqdriver: send: waiting for the topic's first send: %w", ctx.Err())
	}
}

// pulled is one PullFrom's outcome.
type pulled struct {
	res *primitive.PullResult
	err error
}

// Pull implements workloads.Source with the client's PullFrom (see the
// package comment for its long polling). No new message returns no bodies
// and the broker's next offset; an illegal offset (below the first message
// or past the end) returns where to go on, with no error.
func (d *Driver) Pull(ctx context.Context, topic string, queueID int32, offset int64, max int) ([][]byte, int64, error) {
	if d.closed.Load() {
		return nil, offset, workloads.ErrClosed
	}
	q, qi, err := d.queue(topic, queueID)
	if err != nil {
		return nil, offset, err
	}
	c, err := d.consumerFor(topic, qi)
	if err != nil {
		return nil, offset, err
	}
	d.mu.Lock()
	tc := d.consumers[consumerKey{topic, qi}]
	d.mu.Unlock()
	if tc == nil {
		return nil, offset, workloads.ErrClosed
	}
	done := make(chan pulled, 1) // buffered: an abandoned pull never blocks
	go func() {
		tc.pull.Lock()
		defer tc.pull.Unlock()
		res, err := c.PullFrom(ctx, &q, offset, max)
		done <- pulled{res, err}
	}()
	var p pulled
	select {
	case p = <-done:
	case <-ctx.Done():
		return nil, offset, ctx.Err()
	}
	if p.err != nil {
		return nil, offset, fmt.Errorf("rmqdriver: pull: %w", p.err)
	}
	switch p.res.Status {
	case primitive.PullFound:
		msgs := p.res.GetMessageExts()
		bodies := make([][]byte, len(msgs))
		for i, m := range msgs {
			bodies[i] = m.Body
		}
		return bodies, p.res.NextBeginOffset, nil
	case primitive.PullNoNewMsg, primitive.PullNoMsgMatched, primitive.PullOffsetIllegal, primitive.PullBrokerTimeout:
		return nil, p.res.NextBeginOffset, nil
	}
	return nil, offset, fmt.Errorf("%w: %d", ErrPullStatus, p.res.Status)
}

// futureOffsetQuery is how far ahead MaxOffset's timestamp lies: a time no
// stored message has, so the broker answers the queue's max offset.
const futureOffsetQuery = 24 * time.Hour

// MaxOffset implements workloads.Source: the offset for a timestamp in the
// future (SEARCH_OFFSET_BY_TIMESTAMP), which the broker answers with the
// queue's max offset.
func (d *Driver) MaxOffset(topic string, queueID int32) (int64, error) {
	if d.closed.Load() {
		return 0, workloads.ErrClosed
	}
	q, _, err := d.queue(topic, queueID)
	if err != nil {
		return 0, err
	}
	c, err := d.consumerFor(topic, metaQueue)
	if err != nil {
		return 0, err
	}
	off, err := c.OffsetForTimestamp(&q, time.Now().Add(futureOffsetQuery).UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("rmqdriver: max offset: %w", err)
	}
	return off, nil
}

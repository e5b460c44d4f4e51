package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/admin"
	"github.com/brokerlab/brokerlab/engine/broker/clients"
	"github.com/brokerlab/brokerlab/engine/broker/delay"
	"github.com/brokerlab/brokerlab/engine/broker/meta"
	"github.com/brokerlab/brokerlab/engine/broker/pop"
	"github.com/brokerlab/brokerlab/engine/broker/reply"
	"github.com/brokerlab/brokerlab/engine/broker/txn"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// StoreOpener opens the broker's message store once the broker knows the
// address it serves on: storeHost is written into every record (and so into
// every offset message id). Start calls it once.
type StoreOpener func(storeHost netip.AddrPort) (MessageStore, error)

// WithStore is a StoreOpener for a store the caller already opened.
func WithStore(s MessageStore) StoreOpener {
	return func(netip.AddrPort) (MessageStore, error) { return s, nil }
}

// Broker is a RocketMQ broker over engine/remoting (BrokerController). The
// broker owns the store it opens: Shutdown closes it. All methods are safe
// for concurrent use; Start and Shutdown are called once each.
type Broker struct {
	cfg    Config
	log    *slog.Logger
	open   StoreOpener
	server *remoting.Server
	ns     *remoting.Client

	// Set by Start before ready is stored; read-only afterwards.
	store     MessageStore
	addr      string           // registered "ip:port"
	storeHost netip.AddrPort   // the same, parsed
	meta      *meta.Service    // topics, groups, offsets, queue locks (meta/)
	topics    *meta.Topics     // meta.Topics, set by Start
	offsets   *meta.Offsets    // meta.Offsets, set by Start
	clients   *clients.Service // producer and consumer tables, heartbeats (clients/)
	holds     *holdTable
	sendQ     *sendQueue
	putWaits  chan struct{} // a slot per put wait handed on by a send worker (sendqueue.go)
	waiters   chan *sendOp  // idle waiter goroutines take handed-on sends (sendop.go)
	delay     *delay.Service
	hooks     hookSet        // send/consume hooks, stage recorder (hooks.go); set before Start
	flow      flowCounters   // flow-control refusals (metrics.go)
	ha        haState        // replication (ha.go)
	admin     *admin.Service // ops and admin codes, traffic counters, live settings (admin/)
	txn       *txn.Service   // transactional messages (txn.go, engine/broker/txn)
	pop       *pop.Service   // POP consumption (pop.go, engine/broker/pop)
	replies   *reply.Service // request-reply (reply/)

	ready    atomic.Bool // processors serve only while set
	started  atomic.Bool
	running  atomic.Bool // Start succeeded
	stopped  atomic.Bool
	queueSeq atomic.Uint32 // round robin for sends with a negative queue id

	ctx     context.Context // cancelled by Shutdown after the server stopped
	cancel  context.CancelFunc
	reg     registrar // REGISTER_BROKER rounds and what each name server took
	regKick chan struct{}
	regStop chan struct{}
	regDone chan struct{}
	stop    chan struct{} // background loops
	wg      sync.WaitGroup
}

// New builds a broker; open is called by Start.
func New(cfg Config, open StoreOpener) (*Broker, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if open == nil {
		return nil, fmt.Errorf("%w: no store", ErrBadConfig)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("broker", cfg.BrokerName)
	rcfg := cfg.Remoting
	rcfg.Addr = cfg.ListenAddr
	if rcfg.Logger == nil {
		rcfg.Logger = log
	}
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = log
	ccfg.TLS = cfg.NamesrvTLS
	b := &Broker{
		cfg:     cfg,
		log:     log,
		open:    open,
		server:  remoting.NewServer(rcfg),
		ns:      remoting.NewClient(ccfg),
		regKick: make(chan struct{}, 1),
		regStop: make(chan struct{}),
		regDone: make(chan struct{}),
		stop:    make(chan struct{}),
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.sendQ = newSendQueue(cfg.SendQueueSize)
	b.putWaits = make(chan struct{}, cfg.SendQueueSize)
	b.waiters = make(chan *sendOp)
	b.holds = newHoldTable(b)
	b.clients = clients.New(clients.Deps{
		CompileFilter:        compileClientFilter,
		BeforeHeartbeat:      b.beforeHeartbeat,
		NotifyEnabled:        func(group string) bool { return b.admin.NotifyEnabled(group) },
		EnablePropertyFilter: cfg.EnablePropertyFilter,
		Logger:               log,
	})
	b.txn = b.newTxn()
	b.pop = b.newPop()
	b.meta = meta.New(meta.Deps{Queues: storeQueues{b}, OnTopicsChange: b.kickRegister})
	b.admin = b.newAdmin()
	b.replies = b.newReply()
	b.registerProcessors()
	b.server.OnConnClose(b.clients.OnConnClose)
	return b, nil
}

// Start listens, opens the store, starts the background services and
// registers with every name server. A listen or store failure stops what was
// started and is returned.
func (b *Broker) Start(ctx context.Context) error {
	if !b.started.CompareAndSwap(false, true) {
		return ErrStarted
	}
	if err := b.server.Start(ctx); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	addr, err := b.advertisedAddr()
	if err != nil {
		_ = b.server.Shutdown(ctx)
		return err
	}
	b.storeHost, b.addr = addr, addr.String()
	store, err := b.open(addr)
	if err != nil {
		_ = b.server.Shutdown(ctx)
		return fmt.Errorf("%w: %w", ErrStoreOpen, err)
	}
	if store, err = b.startHA(store); err != nil {
		_ = b.server.Shutdown(ctx)
		return err
	}
	b.store = store
	files, _ := store.(meta.ConfigFiles)
	if err := b.meta.Load(files); err != nil {
		_ = b.server.Shutdown(ctx)
		_ = store.Close()
		return fmt.Errorf("%w: %w", ErrStoreOpen, err)
	}
	b.topics, b.offsets = b.meta.Topics, b.meta.Offsets
	if err := b.createSystemTopics(); err != nil {
		_ = b.server.Shutdown(ctx)
		_ = store.Close()
		return err
	}
	b.delay = b.newDelay()
	if err := b.pop.Start(); err != nil {
		_ = b.server.Shutdown(ctx)
		_ = store.Close()
		return fmt.Errorf("%w: %w", ErrStoreOpen, err)
	}
	store.SetArrivingListener(b.arriving)

	for range b.cfg.SendWorkers {
		b.goLoop(b.sendWorker)
	}
	b.goLoop(b.fastFailureLoop)
	b.goEvery(b.cfg.LongPollingCheckInterval, func(time.Time) { b.holds.check() }) // re-check held pulls
	b.goEvery(b.cfg.ClientScanInterval, b.dropExpiredClients)
	b.goLoop(b.txn.CheckLoop)
	b.goLoop(b.admin.SampleLoop)
	b.goEvery(b.cfg.FlushConsumerOffsetInterval, b.persistOffsets)
	if b.cfg.Role != Slave { // delayed messages are delivered by the master (RocketMQ)
		b.delay.Start()
	}
	b.ready.Store(true)

	b.registerAll()
	go b.registerLoop()
	b.running.Store(true)
	b.log.Info("broker started", "addr", b.addr, "cluster", b.cfg.ClusterName, "namesrv", b.cfg.NamesrvAddrs)
	return nil
}

// Addr is the address the broker registers ("ip:port"), "" before Start.
func (b *Broker) Addr() string { return b.addr }

// Store is the message store, nil before Start.
func (b *Broker) Store() MessageStore { return b.store }

// Config returns the configuration the broker runs with.
func (b *Broker) Config() Config { return b.cfg }

// DataVersion is the current version of the topic table (zero before Start).
func (b *Broker) DataVersion() protocol.DataVersion {
	if b.topics == nil {
		return protocol.DataVersion{}
	}
	return b.topics.DataVersion()
}

// Offsets is the broker's consumer offset table (nil before Start).
func (b *Broker) Offsets() *meta.Offsets { return b.offsets }

// Topics is the broker's topic table (nil before Start).
func (b *Broker) Topics() *meta.Topics { return b.topics }

// Shutdown unregisters from the name servers, stops serving (held pulls are
// answered, queued sends finish), stops the background services and closes
// the store. ctx bounds the wait for requests in flight.
func (b *Broker) Shutdown(ctx context.Context) error {
	if !b.running.Load() {
		return ErrNotStarted
	}
	if !b.stopped.CompareAndSwap(false, true) {
		return ErrStopped
	}
	close(b.regStop)
	<-b.regDone
	b.unregisterAll()

	b.pop.Stop() // held pops answer at once; the revive service ends before the store closes
	serverErr := b.server.Shutdown(ctx)
	b.ready.Store(false)
	b.holds.closeAll()
	b.sendQ.close()
	close(b.stop)
	b.delay.Stop()
	b.wg.Wait()
	b.clients.Wait()
	b.cancel()
	_ = b.ns.Close()
	offsetErr := b.offsets.Persist(true)
	storeErr := b.store.Close()
	b.log.Info("broker stopped", "addr", b.addr)
	return errors.Join(serverErr, offsetErr, storeErr)
}

func (b *Broker) goLoop(f func()) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		f()
	}()
}

// goEvery runs f every interval, with the tick's time, on a goroutine
// Shutdown waits for, until Shutdown closes b.stop.
func (b *Broker) goEvery(interval time.Duration, f func(now time.Time)) {
	b.goLoop(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case now := <-t.C:
				f(now)
			}
		}
	})
}

// advertisedAddr is BrokerIP (or the listen host, or the first non-loopback
// IPv4 address) with the port the server listens on.
func (b *Broker) advertisedAddr() (netip.AddrPort, error) {
	listen, err := netip.ParseAddrPort(b.server.Addr())
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("broker: listen address %q: %w", b.server.Addr(), err)
	}
	if b.cfg.BrokerIP != "" {
		ip, err := netip.ParseAddr(b.cfg.BrokerIP)
		if err != nil {
			return netip.AddrPort{}, fmt.Errorf("%w: broker IP %q is not a literal IP", ErrBadConfig, b.cfg.BrokerIP)
		}
		return netip.AddrPortFrom(ip, listen.Port()), nil
	}
	ip := listen.Addr().Unmap()
	if ip.IsUnspecified() {
		ip = firstNonLoopbackIPv4()
	}
	return netip.AddrPortFrom(ip, listen.Port()), nil
}

func firstNonLoopbackIPv4() netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if pn, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(pn.IP); ok {
					ip = ip.Unmap()
					if ip.Is4() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
						return ip
					}
				}
			}
		}
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, 1})
}

// createSystemTopics adds TBW102 (with auto-creation) and the schedule topic.
func (b *Broker) createSystemTopics() error {
	if err := b.createReplyTopic(); err != nil { // reply.go
		return err
	}
	if b.cfg.AutoCreateTopic {
		tc := protocol.NewTopicConfig(protocol.DefaultTopic, b.cfg.DefaultTopicQueueNums)
		tc.Perm = protocol.PermInherit | protocol.PermRead | protocol.PermWrite
		if _, _, _, err := b.topics.CreateIfAbsent(tc); err != nil {
			return fmt.Errorf("broker: create %s: %w", protocol.DefaultTopic, err)
		}
	}
	if t := b.cfg.TraceTopic; t != "" {
		if _, _, _, err := b.topics.CreateIfAbsent(protocol.NewTopicConfig(t, 1)); err != nil {
			return fmt.Errorf("broker: create %s: %w", t, err)
		}
	}
	if cur, ok := b.topics.Get(protocol.TimerTopic); !ok || cur.ReadQueueNums < delay.TimerQueueNums {
		if _, err := b.topics.Put(protocol.NewTopicConfig(protocol.TimerTopic, delay.TimerQueueNums)); err != nil {
			return fmt.Errorf("broker: create %s: %w", protocol.TimerTopic, err)
		}
	}
	tc := protocol.NewTopicConfig(protocol.ScheduleTopic, int32(len(b.cfg.DelayLevels)))
	if cur, ok := b.topics.Get(protocol.ScheduleTopic); ok && cur.ReadQueueNums >= tc.ReadQueueNums {
		return nil
	}
	if _, err := b.topics.Put(tc); err != nil {
		return fmt.Errorf("broker: create %s: %w", protocol.ScheduleTopic, err)
	}
	return nil
}

// arriving is the store's arriving listener: it wakes held pulls and the
// delay scheduler.
func (b *Broker) arriving(topic string, queueID int32, nextOffset int64) {
	if b.delay.Wake(topic, queueID) {
		return
	}
	b.pop.Notify(topic, queueID)
	b.holds.notify(topic, queueID, nextOffset)
}

// persistOffsets writes the consumer offsets; Start runs it every
// FlushConsumerOffsetInterval (BrokerController's persist of
// ConsumerOffsetManager) and Shutdown writes them a last time.
func (b *Broker) persistOffsets(time.Time) {
	if err := b.offsets.Persist(false); err != nil {
		b.log.Error("broker: persist consumer offsets", "err", err)
	}
}

// storeQueues is meta.Queues over the broker's store (set by Start,
// before any request is served).
type storeQueues struct{ b *Broker }

func (q storeQueues) MinOffset(topic string, queueID int32) int64 {
	return q.b.store.MinOffset(topic, queueID)
}

func (q storeQueues) InMemory(topic string, queueID int32, offset int64) bool {
	return q.b.store.InMemory(topic, queueID, offset)
}

// dropExpiredClients drops clients whose heartbeats stopped
// ClientChannelExpiry before now; Start runs it every ClientScanInterval.
func (b *Broker) dropExpiredClients(now time.Time) {
	b.clients.DropExpired(now.Add(-b.cfg.ClientChannelExpiry))
}

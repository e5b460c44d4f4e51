package pop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Errors of the service. Each is returned wrapped (%w) with detail.
var (
	// ErrInvalidHandle: the receipt handle does not parse, names another
	// group or topic, or its message is no longer invisible under it
	// (already acked, its invisible time passed, or revived).
	ErrInvalidHandle = errors.New("pop: invalid receipt handle")
	// ErrTopicNotExist: the topic is not in the broker's topic table.
	ErrTopicNotExist = errors.New("pop: topic does not exist")
	// ErrNoPermission: the topic is not readable (or, for the service's
	// own puts, not writable).
	ErrNoPermission = errors.New("pop: no permission")
	// ErrBadRequest: a request field is out of range (queue id, batch
	// size, invisible time, filter expression).
	ErrBadRequest = errors.New("pop: bad request")
	// ErrNotStarted: the service is used before Start or after Stop.
	ErrNotStarted = errors.New("pop: service not started")
	// ErrStore: the store did not take a record the service wrote.
	ErrStore = errors.New("pop: store refused the record")
)

// ReadStatus is the outcome of a Store read, reduced to what the service
// tells apart.
type ReadStatus int

// Read statuses.
const (
	ReadFound          ReadStatus = iota
	ReadNoMatched                 // messages were there, the filter took none (NextBeginOffset moves on)
	ReadOffsetTooSmall            // offset below the queue's min offset
	ReadOffsetOverflow            // offset at or beyond the queue's max offset
	ReadOther                     // anything else (no queue, removing, ...)
)

// ReadResult is what a Store read returns.
type ReadResult struct {
	Status ReadStatus
	// Buffer holds whole commit-log records concatenated in queue order.
	Buffer []byte
	// NextBeginOffset is where to read next.
	NextBeginOffset int64
	MinOffset       int64
	MaxOffset       int64
}

// PutResult is what a Store put returns.
type PutResult struct {
	Stored      bool
	Status      string // the store's status, for errors and logs
	QueueOffset int64
	PhysOffset  int64
}

// Filter is a compiled subscription filter the Store applies (opaque to
// the service; nil accepts everything).
type Filter any

// Store is the message store as the service uses it. Safe for concurrent
// use.
type Store interface {
	// Read reads up to n records of (topic, queueID) from offset that f
	// accepts.
	Read(group, topic string, queueID int32, offset int64, n int, f Filter) ReadResult
	Put(ctx context.Context, m *record.Message) (PutResult, error)
	MinOffset(topic string, queueID int32) int64
	MaxOffset(topic string, queueID int32) int64
	// InMemory: the record at offset of (topic, queueID) is stored and held
	// in memory (checkInMemByConsumeOffset).
	InMemory(topic string, queueID int32, offset int64) bool
	// ReadRecord reads the encoded record at a commit-log offset.
	ReadRecord(physOffset int64) ([]byte, error)
}

// Offsets is the broker's consumer offsets: the pop progress of each
// group on each queue, and the revive service's progress on the revive
// topic (group ReviveGroup).
type Offsets interface {
	Query(group, topic string, queueID int32) (int64, bool)
	Commit(group, topic string, queueID int32, offset int64)
}

// ProcessorTable is the broker's processor table: Handle routes code to fn
// on the named executor, behind the broker's one ACL and readiness gate.
type ProcessorTable interface {
	Handle(code int32, executor string, fn remoting.ProcessorFunc)
}

// Executors the service's codes run on (pop for POP, PEEK, NOTIFICATION
// and POLLING_INFO; ack for ACK, BATCH_ACK and CHANGE_INVISIBLETIME, as
// RocketMQ's pop and ack thread pools).
const (
	PopExecutor = "pop"
	AckExecutor = "ack"
)

// Config is the service's part of the broker configuration.
type Config struct {
	BrokerName  string
	ClusterName string
	// ReviveQueueNum is the revive topic's queue count (reviveQueueNum, 8).
	ReviveQueueNum int32
	// MaxRetryTimes is the retryMaxTimes of a group without a subscription
	// group config (16).
	MaxRetryTimes int32
	// RetryFirstPercent is the chance (0..100) that a pop of any queue reads
	// the retry topic before the topic's queues (popFromRetryProbability, 20).
	RetryFirstPercent int
	// Slave: the service refuses pops and acks (only a master pops).
	Slave bool
}

// DefaultConfig is Java's defaults for a broker of cluster.
func DefaultConfig(brokerName, cluster string) Config {
	return Config{BrokerName: brokerName, ClusterName: cluster, ReviveQueueNum: 8, MaxRetryTimes: 16, RetryFirstPercent: 20}
}

// Deps is what the service needs from the broker. The functions may be
// called from any goroutine.
type Deps struct {
	Config  Config
	Store   Store
	Offsets Offsets
	// Topic looks a topic config up.
	Topic func(name string) (protocol.TopicConfig, bool)
	// CreateTopic creates a topic unless it exists and returns its config.
	CreateTopic func(tc protocol.TopicConfig) (protocol.TopicConfig, error)
	// RetryMaxTimes is a group's retryMaxTimes (its subscription group
	// config's, else the broker's default).
	RetryMaxTimes func(group string) int32
	// CompileFilter compiles a subscription expression for Store.Read;
	// typ is "TAG" or "SQL92" ("" is TAG).
	CompileFilter func(typ, expr string) (Filter, error)
	// StoreHost is the broker's address written into stored records.
	StoreHost func() netip.AddrPort
	Logger    *slog.Logger
	// Now is the clock (time.Now when nil; tests move it).
	Now func() time.Time
}

// Service is the broker's POP consumption. Safe for concurrent use; the
// revive service runs on one goroutine between Start and Stop.
type Service struct {
	deps Deps
	cfg  Config
	log  *slog.Logger
	now  func() time.Time

	reviveTopic string

	mu      sync.Mutex
	started bool
	cks     map[ckKey]*checkpoint // pending checkpoints (normal pops), guarded by mu
	fifo    map[queueKey]*fifoQueue
	acking  int // acks between check and record, guarded by mu (revive waits for 0)

	qlocks sync.Map // queueKey -> *sync.Mutex: one pop per group's queue at a time

	// rq[i] serializes the writes to revive queue i with the bookkeeping
	// that depends on their offsets.
	rq []reviveQueue

	polls pollTable

	kick chan struct{} // wakes the revive loop
	stop chan struct{}
	done chan struct{}
}

// reviveQueue is one revive queue's write lock and its next offset.
type reviveQueue struct {
	mu   sync.Mutex
	next int64 // offset after the last record written or scanned, guarded by mu
}

// New builds the service; Start recovers its state from the store.
func New(d Deps) *Service {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	now := d.Now
	if now == nil {
		now = time.Now
	}
	cfg := d.Config
	if cfg.ReviveQueueNum <= 0 {
		cfg.ReviveQueueNum = 8
	}
	if cfg.MaxRetryTimes <= 0 {
		cfg.MaxRetryTimes = 16
	}
	s := &Service{deps: d, cfg: cfg, log: log, now: now,
		reviveTopic: ReviveTopic(cfg.ClusterName),
		cks:         map[ckKey]*checkpoint{}, fifo: map[queueKey]*fifoQueue{},
		rq:   make([]reviveQueue, cfg.ReviveQueueNum),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.polls.init()
	return s
}

// ReviveTopic is a cluster's revive topic (rmq_sys_REVIVE_LOG_<cluster>).
func ReviveTopic(cluster string) string { return protocol.ReviveTopicPrefix + cluster }

// RetryTopic is the retry topic of group's pops of topic
// (%RETRY%<group>_<topic>, KeyBuilder.buildPopRetryTopicV1); a retry
// topic is its own.
func RetryTopic(group, topic string) string {
	if IsRetryTopic(topic) {
		return topic
	}
	return protocol.RetryTopicPrefix + group + "_" + topic
}

// IsRetryTopic reports whether topic is a retry topic.
func IsRetryTopic(topic string) bool {
	return len(topic) >= len(protocol.RetryTopicPrefix) && topic[:len(protocol.RetryTopicPrefix)] == protocol.RetryTopicPrefix
}

// Start creates the revive topic, recovers the pending checkpoints from
// it and starts the revive service.
func (s *Service) Start() error {
	tc := protocol.NewTopicConfig(s.reviveTopic, s.cfg.ReviveQueueNum)
	if _, err := s.deps.CreateTopic(tc); err != nil {
		return fmt.Errorf("pop: create %s: %w", s.reviveTopic, err)
	}
	if err := s.recover(); err != nil {
		return err
	}
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	if s.cfg.Slave { // a slave revives nothing (its store takes no puts)
		close(s.done)
		return nil
	}
	go s.reviveLoop()
	return nil
}

// Stop ends the revive service and answers held pops. Idempotent.
func (s *Service) Stop() {
	s.mu.Lock()
	started := s.started
	s.started = false
	s.mu.Unlock()
	if !started {
		return
	}
	close(s.stop)
	<-s.done
	s.polls.closeAll()
}

func (s *Service) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// Notify tells the service that (topic, queueID) has new messages: held
// pops of the topic (or of the topic whose retry topic it is) wake.
func (s *Service) Notify(topic string, queueID int32) { s.polls.wake(topic) }

func (s *Service) kickRevive() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Service) storeHost() netip.AddrPort {
	if s.deps.StoreHost == nil {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 0)
	}
	return s.deps.StoreHost()
}

func (s *Service) retryMaxTimes(group string) int32 {
	if s.deps.RetryMaxTimes != nil {
		return s.deps.RetryMaxTimes(group)
	}
	return s.cfg.MaxRetryTimes
}

// queueLock is the lock of one group's pops of one queue.
func (s *Service) queueLock(k queueKey) *sync.Mutex {
	if m, ok := s.qlocks.Load(k); ok {
		return m.(*sync.Mutex)
	}
	m, _ := s.qlocks.LoadOrStore(k, new(sync.Mutex))
	return m.(*sync.Mutex)
}

// Polling is the number of pops waiting (long polling) on topic.
func (s *Service) Polling(topic string) int { return s.polls.waiting(topic) }

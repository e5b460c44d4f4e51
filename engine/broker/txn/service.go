package txn

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// ReadStatus is the outcome of a Store read, as the broker's GetStatus
// (RocketMQ's GetMessageStatus) reduced to what the service tells apart.
type ReadStatus int

// Read statuses.
const (
	ReadFound ReadStatus = iota
	ReadOffsetFoundNull
	ReadOffsetOverflowBadly
	ReadOffsetTooSmall
	ReadOther // any other status
)

var readStatusNames = [...]string{ReadFound: "FOUND", ReadOffsetFoundNull: "OFFSET_FOUND_NULL",
	ReadOffsetOverflowBadly: "OFFSET_OVERFLOW_BADLY", ReadOffsetTooSmall: "OFFSET_TOO_SMALL", ReadOther: "OTHER"}

func (s ReadStatus) String() string {
	if s >= 0 && int(s) < len(readStatusNames) {
		return readStatusNames[s]
	}
	return "UNKNOWN"
}

// ReadResult is what a Store read returns.
type ReadResult struct {
	Status ReadStatus
	// Buffer holds whole commit-log records, concatenated in queue order.
	Buffer []byte
	// NextBeginOffset is where to read next.
	NextBeginOffset int64
}

// PutResult is what a Store put returns.
type PutResult struct {
	// Stored: the message is in the store (PutStatus.Stored).
	Stored bool
	// Status names the store's status, for logs.
	Status         string
	QueueOffset    int64
	PhysOffsets    []int64
	StoreTimestamp int64
}

// Store is the message store as the service uses it. Safe for concurrent
// use.
type Store interface {
	Read(group, topic string, queueID int32, offset int64, maxMsgNums int) ReadResult
	Put(ctx context.Context, m *record.Message) (PutResult, error)
	// ReadRecord reads the encoded record at a commit-log offset.
	ReadRecord(physOffset int64) ([]byte, error)
	MinOffset(topic string, queueID int32) int64
}

// Offsets keeps the check service's progress (the broker's consumer
// offsets, under TransGroup).
type Offsets interface {
	Query(group, topic string, queueID int32) (int64, bool)
	Commit(group, topic string, queueID int32, offset int64)
}

// ProcessorTable is the broker's processor table: Handle routes code to fn
// on the named executor, behind the broker's one ACL and readiness gate.
type ProcessorTable interface {
	Handle(code int32, executor string, fn remoting.ProcessorFunc)
}

// EndTransactionExecutor names the executor END_TRANSACTION runs on.
const EndTransactionExecutor = "end-transaction"

// Config is the service's part of the broker configuration.
type Config struct {
	// Slave: END_TRANSACTION is refused and nothing is checked.
	Slave      bool
	BrokerName string
	// The check knobs' initial values (changed at run time by the Set
	// methods).
	CheckInterval time.Duration
	Timeout       time.Duration
	CheckMax      int
}

// Deps is what the service needs from the broker. The functions may be
// called from any goroutine.
type Deps struct {
	Config  Config
	Store   Store
	Offsets Offsets
	// CreateTopic creates a system topic unless it exists.
	CreateTopic func(tc protocol.TopicConfig) error
	// StoreCommitted applies the send path's delay level and timer to a
	// committed message and stores it; a non-nil response refuses it.
	StoreCommitted func(ctx context.Context, m *record.Message) *remoting.Command
	// ProducerConn picks a live connection of a producer group (round
	// robin by seq), nil if none.
	ProducerConn func(group string, seq uint32) *remoting.Conn
	// StoreHost is the broker's address written into stored messages.
	StoreHost func() netip.AddrPort
	// Context bounds the check service's puts; Stop ends CheckLoop.
	Context context.Context
	Stop    <-chan struct{}
	Logger  *slog.Logger
}

// Service is the broker's transactional messages: DivertHalf on the send
// path, END_TRANSACTION (Register) and the check service (CheckLoop). Safe
// for concurrent use; CheckLoop runs on one goroutine.
type Service struct {
	deps    Deps
	cfg     Config
	store   Store
	offsets Offsets
	log     *slog.Logger
	ctx     context.Context
	stop    <-chan struct{}
	st      txnState
}

// New builds the service.
func New(d Deps) *Service {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Service{deps: d, cfg: d.Config, store: d.Store, offsets: d.Offsets, log: log, ctx: d.Context, stop: d.Stop}
	s.st.kick = make(chan struct{}, 1)
	s.st.interval.Store(int64(d.Config.CheckInterval))
	s.st.timeout.Store(int64(d.Config.Timeout))
	s.st.checkMax.Store(int64(d.Config.CheckMax))
	return s
}

// CheckInterval, CheckTimeout and CheckMax are the check knobs now
// (transactionCheckInterval, transactionTimeOut, transactionCheckMax).
func (s *Service) CheckInterval() time.Duration { return s.st.checkInterval() }
func (s *Service) CheckTimeout() time.Duration  { return s.st.checkTimeout() }
func (s *Service) CheckMax() int                { return s.st.maxChecks() }

// SetCheckInterval changes the interval and restarts the check service's
// wait; SetCheckTimeout and SetCheckMax take effect at the next scan.
func (s *Service) SetCheckInterval(d time.Duration) {
	s.st.interval.Store(int64(d))
	s.kick()
}

func (s *Service) SetCheckTimeout(d time.Duration) {
	s.st.timeout.Store(int64(d))
	s.kick()
}

func (s *Service) SetCheckMax(n int) { s.st.checkMax.Store(int64(n)) }

func (s *Service) kick() {
	select {
	case s.st.kick <- struct{}{}:
	default:
	}
}

// refusef is an error response.
func refusef(code int32, format string, args ...any) *remoting.Command {
	return remoting.NewResponse(code, fmt.Sprintf(format, args...))
}

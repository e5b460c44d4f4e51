package delay

import (
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// ReadStatus is the outcome of a Store read, as the broker's GetStatus
// (RocketMQ's GetMessageStatus) reduced to what the services tell apart.
type ReadStatus int

// Read statuses.
const (
	ReadFound ReadStatus = iota
	ReadNoMatchedMessage
	ReadMessageWasRemoving
	ReadOffsetFoundNull
	ReadOffsetOverflowBadly
	ReadOffsetTooSmall
	ReadOther // the queue's end, or nothing readable yet
)

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
	// Illegal: refused for good (MESSAGE_ILLEGAL, PROPERTIES_SIZE_EXCEEDED).
	Illegal bool
	// Status names the store's status, for logs.
	Status string
}

// Store is the message store as the services use it. Safe for concurrent
// use.
type Store interface {
	Read(group, topic string, queueID int32, offset int64, maxMsgNums int) ReadResult
	Put(m *record.Message) (PutResult, error)
	MinOffset(topic string, queueID int32) int64
	MaxOffset(topic string, queueID int32) int64
}

// Offsets keeps the scheduler's progress through each level's queue (the
// broker's consumer offsets, under the group SCHEDULE_TOPIC_XXXX).
type Offsets interface {
	Query(group, topic string, queueID int32) (int64, bool)
	Commit(group, topic string, queueID int32, offset int64)
}

// Config is the services' part of the broker configuration.
type Config struct {
	// DelayLevels are the delays of levels 1..n (messageDelayLevel).
	DelayLevels []time.Duration
	// ScheduleCheckInterval bounds how long a level's goroutine sleeps.
	ScheduleCheckInterval time.Duration
	// TimerEnable enables timer messages (timerWheelEnable).
	TimerEnable bool
	// TimerPrecision is the slot width (timerPrecisionMs).
	TimerPrecision time.Duration
	// TimerMaxDelay is the longest delay accepted (timerMaxDelaySec).
	TimerMaxDelay time.Duration
	// TimerLoadWindow is how far ahead due messages are kept in memory.
	TimerLoadWindow time.Duration
	// TimerMaxLoaded caps the in-memory index.
	TimerMaxLoaded int
	// TimerFlushInterval is how often progress is checkpointed.
	TimerFlushInterval time.Duration
}

// Deps is what the services need from the broker.
type Deps struct {
	Config  Config
	Store   Store
	Offsets Offsets
	// StoreHost is written into the messages the services store.
	StoreHost netip.AddrPort
	Logger    *slog.Logger
}

// env is what the scheduler, the timer service and the send-side checks
// share; immutable after New.
type env struct {
	cfg       Config
	store     Store
	offsets   Offsets
	storeHost netip.AddrPort
	log       *slog.Logger
}

// Service is the broker's delayed delivery: the delay-level scheduler
// (ScheduleMessageService) and the timer wheel (TimerMessageStore). Start
// and Stop are called once each by the broker's lifecycle; Wake,
// DivertTimer and TimerStats are safe for concurrent use at any time.
type Service struct {
	*env
	sched *scheduler
	timer *timerService
}

// New builds the services, not started.
func New(d Deps) *Service {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	e := &env{cfg: d.Config, store: d.Store, offsets: d.Offsets, storeHost: d.StoreHost, log: log}
	return &Service{env: e, sched: newScheduler(e), timer: newTimerService(e)}
}

// Start runs the scheduler and, when TimerEnable, the timer service (the
// master's job: a slave never starts them).
func (s *Service) Start() {
	s.sched.start()
	if s.cfg.TimerEnable {
		s.timer.start()
	}
}

// Stop ends what Start ran (the timer writes a last checkpoint). Stopping
// a service never started returns at once.
func (s *Service) Stop() {
	s.sched.stop()
	s.timer.stop()
}

// Wake is the store's arriving hook for the services' topics: it wakes the
// level of a schedule-topic queue or the timer service, and reports
// whether topic was theirs. It never blocks.
func (s *Service) Wake(topic string, queueID int32) bool {
	switch topic {
	case protocol.ScheduleTopic:
		s.sched.wake(queueID)
		return true
	case protocol.TimerTopic:
		if queueID == TimerMessageQueue {
			s.timer.notify()
		}
		return true
	}
	return false
}

// refusef is a refusal response to a send.
func refusef(code int32, format string, args ...any) *remoting.Command {
	return remoting.NewResponse(code, fmt.Sprintf(format, args...))
}

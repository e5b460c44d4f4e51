package admin

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/clients"
	"github.com/brokerlab/brokerlab/engine/broker/delay"
	"github.com/brokerlab/brokerlab/engine/broker/meta"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

// Table is the broker's processor table: Handle routes code to fn on the
// executor named executor ("" for the default one), behind the broker's
// one ACL and readiness gate.
type Table interface {
	Handle(code int32, executor string, fn remoting.ProcessorFunc)
}

// Store is what the admin codes read of the message store. Its calls
// come only from requests, after the broker's Start opened the store.
type Store interface {
	MinOffset(topic string, queueID int32) int64
	MaxOffset(topic string, queueID int32) int64
	// OffsetByTime is the first queue offset stored at or after ts (ms).
	OffsetByTime(topic string, queueID int32, ts int64) int64
	// EarliestMessageTime is the store time (ms) of the queue's oldest
	// message.
	EarliestMessageTime(topic string, queueID int32) (int64, error)
	// DeleteTopicData removes a deleted topic's consume queues.
	DeleteTopicData(topic string) error
	// StoreTime is the store timestamp of the message at a queue offset,
	// 0 when it cannot be read.
	StoreTime(topic string, queueID int32, offset int64) int64
}

// Config is the part of the broker's configuration the service reads.
type Config struct {
	BrokerName string
	Slave      bool
	// MaxReconsumeTimes is the retry limit of a group without a config.
	MaxReconsumeTimes int32
	// Executor queue capacities reported by GET_BROKER_RUNTIME_INFO.
	SendQueueCapacity, PullQueueCapacity, QueryQueueCapacity int
	// The first values of the settings UPDATE_BROKER_CONFIG changes live.
	AutoCreateSubscriptionGroup, AutoCreateTopic, LongPolling bool
	ShortPollingTime                                          time.Duration
}

// Deps is what the service needs from the broker.
type Deps struct {
	Config Config
	Store  Store
	// Meta holds the topic, group and offset tables (loaded before any
	// request is served); Clients the live producers and consumers.
	Meta    *meta.Service
	Clients *clients.Service
	// AwaitRoute waits until every name server took a registration
	// carrying topic table version (a topic "updated" or "deleted"); a
	// non-nil response (SYSTEM_ERROR naming those that did not) answers
	// the request instead of SUCCESS.
	AwaitRoute func(topic, what string, version int64) *remoting.Command
	// SendQueueLen is the number of sends waiting for a send worker.
	SendQueueLen func() int
	// Disk reports the store's commit log and disk, ok false when the
	// store cannot tell; Engine is the engine/store under the message
	// store, nil when there is none. Both may be nil.
	Disk   func() (DiskStats, bool)
	Engine func() *store.Store
	// Timer reports the timer wheel (nil: no timer keys).
	Timer func() delay.TimerStats
	// Properties are the broker's fixed settings under Java's key names
	// (GET_BROKER_CONFIG); LiveKeys are the broker's own settings that
	// UPDATE_BROKER_CONFIG changes at once, beside the service's.
	Properties func() map[string]string
	LiveKeys   map[string]LiveKey
	// Stop ends SampleLoop.
	Stop   <-chan struct{}
	Logger *slog.Logger
}

// Service is the broker's operator and admin codes (AdminBrokerProcessor,
// with BrokerStatsManager's counters and Broker2Client's offset reset):
// topics, queue offsets, subscription groups, runtime info, topic and consume stats, connection
// lists, offset reset, and the broker config with the settings it changes
// live. All methods are safe for concurrent use.
type Service struct {
	deps Deps
	cfg  Config
	log  *slog.Logger
	// Traffic counts sends and pulls (the send and pull paths add to it).
	Traffic *Traffic

	// Settings UPDATE_BROKER_CONFIG changes live, first taken from Config.
	autoCreateSubGroup atomic.Bool
	autoCreateTopic    atomic.Bool
	longPolling        atomic.Bool
	shortPolling       atomic.Int64 // time.Duration

	live       map[string]LiveKey // read-only after New
	cfgMu      sync.Mutex         // serializes UPDATE_BROKER_CONFIG
	cfgVersion struct {
		sync.Mutex
		v protocol.DataVersion
	}
}

// New builds the service; its traffic counters start now.
func New(d Deps) *Service {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Service{deps: d, cfg: d.Config, log: log, Traffic: NewTraffic()}
	s.autoCreateSubGroup.Store(d.Config.AutoCreateSubscriptionGroup)
	s.autoCreateTopic.Store(d.Config.AutoCreateTopic)
	s.longPolling.Store(d.Config.LongPolling)
	s.shortPolling.Store(int64(d.Config.ShortPollingTime))
	s.cfgVersion.v = protocol.DataVersion{Timestamp: time.Now().UnixMilli()}
	s.live = s.liveKeys(d.LiveKeys)
	return s
}

// Register registers the operator and admin request codes (issue 13 §1)
// on the default executor.
func (s *Service) Register(t Table) {
	t.Handle(protocol.ReqUpdateAndCreateTopic, "", s.updateAndCreateTopic)
	t.Handle(protocol.ReqDeleteTopicInBroker, "", s.deleteTopic)
	t.Handle(protocol.ReqGetAllTopicConfig, "", s.getAllTopicConfig)
	t.Handle(protocol.ReqGetMaxOffset, "", s.getMaxOffset)
	t.Handle(protocol.ReqGetMinOffset, "", s.getMinOffset)
	t.Handle(protocol.ReqSearchOffsetByTimestamp, "", s.searchOffsetByTimestamp)
	t.Handle(protocol.ReqGetEarliestMsgStoretime, "", s.getEarliestMsgStoreTime)
	t.Handle(protocol.ReqGetBrokerRuntimeInfo, "", s.getBrokerRuntimeInfo)
	t.Handle(protocol.ReqGetTopicStatsInfo, "", s.getTopicStatsInfo)
	t.Handle(protocol.ReqGetConsumeStats, "", s.getConsumeStats)
	t.Handle(protocol.ReqGetConsumerConnectionList, "", s.getConsumerConnectionList)
	t.Handle(protocol.ReqGetProducerConnectionList, "", s.getProducerConnectionList)
	t.Handle(protocol.ReqQueryTopicConsumeByWho, "", s.queryTopicConsumeByWho)
	t.Handle(protocol.ReqGetAllSubscriptionGroupConfig, "", s.getAllSubscriptionGroupConfig)
	t.Handle(protocol.ReqUpdateAndCreateSubscriptionGroup, "", s.updateAndCreateSubscriptionGroup)
	t.Handle(protocol.ReqDeleteSubscriptionGroup, "", s.deleteSubscriptionGroup)
	t.Handle(protocol.ReqInvokeBrokerToResetOffset, "", s.invokeBrokerToResetOffset)
	t.Handle(protocol.ReqInvokeBrokerToGetConsumerStatus, "", s.invokeBrokerToGetConsumerStatus)
	t.Handle(protocol.ReqGetBrokerConfig, "", s.getBrokerConfig)
	t.Handle(protocol.ReqUpdateBrokerConfig, "", s.updateBrokerConfig)
}

// AutoCreateTopic reports autoCreateTopicEnable (live).
func (s *Service) AutoCreateTopic() bool { return s.autoCreateTopic.Load() }

// ShortPolling reports whether long polling is off (longPollingEnable,
// live) and, if so, how long a pull that finds nothing is held
// (shortPollingTimeMills).
func (s *Service) ShortPolling() (time.Duration, bool) {
	if s.longPolling.Load() {
		return 0, false
	}
	return time.Duration(s.shortPolling.Load()), true
}

func success() *remoting.Command { return remoting.NewResponse(protocol.RespSuccess, "") }

func bodyResponse(body []byte) *remoting.Command {
	resp := success()
	resp.Body = body
	return resp
}

func responsef(code int32, format string, args ...any) *remoting.Command {
	return remoting.NewResponse(code, fmt.Sprintf(format, args...))
}

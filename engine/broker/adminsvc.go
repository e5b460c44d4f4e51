package broker

import (
	"maps"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/engine/broker/admin"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/store"
)

// Traffic counters and the admin bodies' offset tables, defined by
// engine/broker/admin.
type (
	RuntimeStats = admin.RuntimeStats
	TopicTraffic = admin.TopicTraffic
	GroupTraffic = admin.GroupTraffic
)

// BrokerVersionDesc is the version this broker reports (brokerVersionDesc).
const BrokerVersionDesc = admin.BrokerVersionDesc

// ParseMQMap and FieldOf read fastjson bodies keyed by MessageQueue
// (admin.ParseMQMap, admin.FieldOf).
var (
	ParseMQMap = admin.ParseMQMap
	FieldOf    = admin.FieldOf
)

// newAdmin builds the operator and admin service (engine/broker/admin) on
// the broker's store, metadata, client tables and settings.
func (b *Broker) newAdmin() *admin.Service {
	c := b.cfg
	return admin.New(admin.Deps{
		Config: admin.Config{BrokerName: c.BrokerName, Slave: c.Role == Slave, MaxReconsumeTimes: c.MaxReconsumeTimes,
			SendQueueCapacity: c.SendQueueSize, PullQueueCapacity: c.PullExecutor.QueueSize, QueryQueueCapacity: c.QueryExecutor.QueueSize,
			AutoCreateSubscriptionGroup: c.AutoCreateSubscriptionGroup, AutoCreateTopic: c.AutoCreateTopic,
			LongPolling: c.LongPolling, ShortPollingTime: c.ShortPollingTime},
		Store:        adminStore{b},
		Meta:         b.meta,
		Clients:      b.clients,
		AwaitRoute:   b.routeResponse,
		SendQueueLen: b.sendQ.len,
		Disk: func() (admin.DiskStats, bool) {
			if ds, ok := b.store.(DiskStatser); ok {
				return ds.DiskStats(), true
			}
			return admin.DiskStats{}, false
		},
		Engine: func() *store.Store {
			if es, ok := b.store.(EngineStore); ok {
				return es.EngineStore()
			}
			return nil
		},
		Timer:      b.TimerStats,
		Properties: b.brokerProperties,
		LiveKeys:   b.txnLiveKeys(),
		Stop:       b.stop,
		Logger:     b.log,
	})
}

// RuntimeStats returns the broker's traffic counters. Safe for concurrent
// use; an exporter may call it as often as it scrapes.
func (b *Broker) RuntimeStats() RuntimeStats { return b.admin.Traffic.Snapshot() }

// adminStore is admin.Store over the broker's store (set by Start).
type adminStore struct{ b *Broker }

func (a adminStore) MinOffset(topic string, queueID int32) int64 {
	return a.b.store.MinOffset(topic, queueID)
}

func (a adminStore) MaxOffset(topic string, queueID int32) int64 {
	return a.b.store.MaxOffset(topic, queueID)
}

func (a adminStore) OffsetByTime(topic string, queueID int32, ts int64) int64 {
	return a.b.store.OffsetByTime(topic, queueID, ts)
}

func (a adminStore) EarliestMessageTime(topic string, queueID int32) (int64, error) {
	return a.b.store.EarliestMessageTime(topic, queueID)
}

func (a adminStore) DeleteTopicData(topic string) error { return a.b.store.DeleteTopicData(topic) }

func (a adminStore) StoreTime(topic string, queueID int32, offset int64) int64 {
	return a.b.storeTimeAt(topic, queueID, offset)
}

// storeTimeAt is the store timestamp of the message at a queue offset, 0
// when it cannot be read.
func (b *Broker) storeTimeAt(topic string, queueID int32, offset int64) int64 {
	if offset < 0 {
		return 0
	}
	res := b.store.Get("", topic, queueID, offset, 1, nil)
	if res.Status != GetFound || len(res.Buffer) == 0 {
		return 0
	}
	ts, err := record.PeekStoreTimestamp(res.Buffer)
	if err != nil {
		return 0
	}
	return ts
}

// brokerProperties is the broker's fixed configuration under Java's key
// names (BrokerConfig, NettyServerConfig), as far as this broker has the
// setting; the admin service adds the store's and the live ones.
func (b *Broker) brokerProperties() map[string]string {
	c := b.cfg
	p := map[string]string{
		"brokerName":                           c.BrokerName,
		"brokerClusterName":                    c.ClusterName,
		"brokerId":                             strconv.FormatInt(c.BrokerID, 10),
		"brokerRole":                           string(c.Role),
		"namesrvAddr":                          strings.Join(c.NamesrvAddrs, ";"),
		"defaultTopicQueueNums":                strconv.Itoa(int(c.DefaultTopicQueueNums)),
		"sendMessageThreadPoolNums":            strconv.Itoa(c.SendWorkers),
		"sendThreadPoolQueueCapacity":          strconv.Itoa(c.SendQueueSize),
		"waitTimeMillsInSendQueue":             strconv.FormatInt(c.SendQueueMaxWait.Milliseconds(), 10),
		"pullMessageThreadPoolNums":            strconv.Itoa(c.PullExecutor.Workers),
		"pullThreadPoolQueueCapacity":          strconv.Itoa(c.PullExecutor.QueueSize),
		"queryMessageThreadPoolNums":           strconv.Itoa(c.QueryExecutor.Workers),
		"queryThreadPoolQueueCapacity":         strconv.Itoa(c.QueryExecutor.QueueSize),
		"clientManageThreadPoolNums":           strconv.Itoa(c.ClientManageExecutor.Workers),
		"clientManagerThreadPoolQueueCapacity": strconv.Itoa(c.ClientManageExecutor.QueueSize),
		"heartbeatThreadPoolNums":              strconv.Itoa(c.HeartbeatExecutor.Workers),
		"heartbeatThreadPoolQueueCapacity":     strconv.Itoa(c.HeartbeatExecutor.QueueSize),
		"slaveReadEnable":                      strconv.FormatBool(c.SlaveReadEnable),
		"haMasterAddress":                      c.HAMasterAddr,
		"messageDelayLevel":                    FormatDelayLevels(c.DelayLevels),
		"maxMessageSize":                       strconv.Itoa(c.MaxBodySize),
		"registerBrokerTimeoutMills":           strconv.FormatInt(c.RegisterTimeout.Milliseconds(), 10),
	}
	if b.storeHost.IsValid() {
		p["brokerIP1"] = b.storeHost.Addr().String()
		p["listenPort"] = strconv.Itoa(int(b.storeHost.Port()))
	}
	maps.Copy(p, b.timerProperties())
	return p
}

package broker

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/engine/acl"
	"github.com/brokerlab/brokerlab/engine/ha"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Config configures a Broker. Start from DefaultConfig.
type Config struct {
	BrokerName  string // "broker-a"
	ClusterName string // "DefaultCluster"
	// ListenAddr is the remoting listen address ("127.0.0.1:10911"; port 0 picks one).
	ListenAddr string
	// BrokerIP is the address registered with the name servers and written as
	// every record's store host. "" = the listen host, or the first
	// non-loopback IPv4 address when listening on all interfaces. It must be
	// a literal IP: the Go client refuses host names.
	BrokerIP string
	// NamesrvAddrs are the name servers registered with (none: standalone).
	NamesrvAddrs []string
	// RegisterInterval is how often the broker re-registers (30 s); a topic
	// change registers at once.
	RegisterInterval time.Duration
	// RegisterTimeout bounds one REGISTER_BROKER call (Java: 24 s; 3 s here,
	// so a topic change whose registration a hung name server holds up is
	// answered with an error naming it before the Go admin's 5 s timeout).
	RegisterTimeout time.Duration
	// NamesrvTLS, if set, registers with the name servers over TLS (Java's
	// tls.enable for BrokerOuterAPI); remoting.TLSClientConfig.Load builds
	// one. nil = plaintext.
	NamesrvTLS *tls.Config

	// AutoCreateTopic creates unknown topics on send from the default topic
	// TBW102 (autoCreateTopicEnable), which is then registered with
	// DefaultTopicQueueNums queues and perm 7.
	AutoCreateTopic bool
	// TraceTopic, when not empty, is created at start with one queue if
	// absent (traceTopicEnable with msgTraceTopicName, RMQ_SYS_TRACE_TOPIC).
	TraceTopic            string
	DefaultTopicQueueNums int32

	// LongPolling holds a pull that finds nothing (PULL_NOT_FOUND with the
	// suspend flag) until a message arrives or suspendTimeoutMillis passes,
	// capped at MaxSuspend; with it off the pull is held ShortPollingTime.
	LongPolling      bool
	MaxSuspend       time.Duration
	ShortPollingTime time.Duration
	// LongPollingCheckInterval re-checks held pulls against the queues' max
	// offsets, in case a store missed an arrival notification (Java: 5 s).
	LongPollingCheckInterval time.Duration

	// SendWorkers put messages concurrently. Over a store that stages its
	// puts (StagedPutter, engine/store) a worker appends and hands the wait
	// for the flush policy or a slave to a goroutine of its own (RocketMQ's
	// asyncPutMessage), so a group commit is not capped at SendWorkers;
	// over another store the workers wait, and more of them mean bigger
	// group commits. SendQueueSize also bounds the handed-on waits: beyond
	// it a worker waits itself.
	SendWorkers int
	// SendQueueSize bounds the sends waiting for a worker
	// (sendThreadPoolQueueCapacity); beyond it sends get SYSTEM_BUSY.
	SendQueueSize int
	// SendQueueMaxWait answers a send that waited this long for a worker
	// SYSTEM_BUSY (waitTimeMillsInSendQueue, 200 ms).
	SendQueueMaxWait time.Duration
	// FastFailureInterval is how often the send queue is swept for expired
	// sends and, while the page cache is busy, emptied (BrokerFastFailure, 10 ms).
	FastFailureInterval time.Duration

	// MaxReconsumeTimes is the retry count after which a message goes to
	// %DLQ%<group>, unless the consumer sends its own (16); a group with a
	// subscription group config uses its retryMaxTimes instead.
	MaxReconsumeTimes int32
	// AutoCreateSubscriptionGroup creates a consumer group's subscription
	// group config (persisted, defaults) on its first heartbeat or pull
	// (autoCreateSubscriptionGroup, default true); with it off, pulls of an
	// unconfigured group get SUBSCRIPTION_GROUP_NOT_EXIST.
	AutoCreateSubscriptionGroup bool
	// DelayLevels are the delays of levels 1..n (messageDelayLevel).
	DelayLevels []time.Duration
	// ScheduleCheckInterval bounds how long the delay scheduler sleeps
	// without a wake-up (Java polls every 100 ms).
	ScheduleCheckInterval time.Duration

	// Timer messages (RocketMQ 5's TIMER_DELIVER_MS / TIMER_DELAY_SEC /
	// TIMER_DELAY_MS; engine/broker/delay). TimerEnable is timerWheelEnable
	// (off: such messages are refused with SYSTEM_ERROR); TimerPrecision is
	// timerPrecisionMs, the slot a due time is rounded up to (a message is
	// delivered no earlier than due and at most one precision later);
	// TimerMaxDelay is timerMaxDelaySec (3 days: further is MESSAGE_ILLEGAL).
	// TimerLoadWindow is how far ahead of now the service keeps due times in
	// memory and TimerMaxLoaded caps that in-memory index (entries); beyond
	// them messages stay only in the store and are rescanned later.
	TimerEnable        bool
	TimerPrecision     time.Duration
	TimerMaxDelay      time.Duration
	TimerLoadWindow    time.Duration
	TimerMaxLoaded     int
	TimerFlushInterval time.Duration // how often progress is checkpointed (timerFlushIntervalMs, 1 s)

	// LitePullEnable serves LITE_PULL_MESSAGE (litePullMessageEnable); off,
	// lite pulls get NO_PERMISSION. LitePullExecutor is its pool.
	LitePullEnable bool

	// Transactions (txn.go). TransactionCheckInterval is how often pending
	// half messages are scanned (transactionCheckInterval, 60 s);
	// TransactionTimeout is how old a half must be before its producer
	// group is asked for its state (transactionTimeOut, 6 s);
	// TransactionCheckMax is how many times it is asked before the half is
	// discarded to TRANS_CHECK_MAX_TIME_TOPIC (transactionCheckMax, 15).
	TransactionCheckInterval time.Duration
	TransactionTimeout       time.Duration
	TransactionCheckMax      int

	// MaxBodySize is maxMessageSize (4 MiB).
	MaxBodySize int

	// EnablePropertyFilter serves SQL92 subscriptions (enablePropertyFilter).
	// Java defaults to false; brokerlab defaults to true, because the
	// official Go client never asks (it sends no CHECK_CLIENT_CONFIG) and
	// its SQL92 consumers would otherwise get SYSTEM_ERROR on every pull.
	EnablePropertyFilter bool
	// StoreReplyMessage also stores a request-reply reply in its reply
	// topic after pushing it to the requester (storeReplyMessageEnable,
	// default true).
	StoreReplyMessage bool

	// Replication (RocketMQ's classic HA, ha.go and engine/ha). Role is
	// brokerRole: ASYNC_MASTER (default), SYNC_MASTER or SLAVE; the HA
	// service runs only over an engine/store store. BrokerID is 0 for a
	// master and at least 1 for a slave of the master with the same
	// BrokerName.
	Role     BrokerRole
	BrokerID int64
	// HA configures a master's HA listener; HA.ListenAddr "" is the listen
	// host at the listen port + 1 (haListenPort), or an ephemeral port when
	// the listen port is (ListenAddr port 0).
	HA ha.Config
	// HAMasterAddr is a slave's master HA address (haMasterAddress); "" =
	// the haServerAddr the name servers return at registration.
	HAMasterAddr string
	// HAClient holds a slave's link timings (MasterAddr is ignored).
	HAClient ha.ClientConfig
	// SlaveTimeout bounds a SYNC_MASTER put's wait for a slave
	// (slaveTimeout, 3 s): FLUSH_SLAVE_TIMEOUT after it.
	SlaveTimeout time.Duration
	// SlaveReadEnable lets consumers read from the slave: a master suggests
	// broker id 1 in pull replies when the consumer reads cold data
	// (slaveReadEnable, default false); a slave without it answers pulls
	// PULL_RETRY_IMMEDIATELY pointing at the master (4.9.x).
	SlaveReadEnable bool
	// SlaveSyncInterval is how often a slave copies its master's topic
	// configs (GET_ALL_TOPIC_CONFIG; 10 s).
	SlaveSyncInterval time.Duration

	// ClientChannelExpiry drops a client that sent no heartbeat for this
	// long (120 s); ClientScanInterval is how often that is checked (10 s).
	ClientChannelExpiry time.Duration
	ClientScanInterval  time.Duration

	// FlushConsumerOffsetInterval is how often the consumer offsets are
	// written to the store's consumerOffset.json (flushConsumerOffsetInterval,
	// 5 s; zero means the default); Shutdown writes them too.
	FlushConsumerOffsetInterval time.Duration

	// Remoting configures the listener; its Addr is replaced by ListenAddr.
	Remoting remoting.ServerConfig
	// Executors of the request classes (Java's pools).
	SendExecutor, PullExecutor, HeartbeatExecutor, ClientManageExecutor, QueryExecutor remoting.ExecutorConfig
	LitePullExecutor                                                                   remoting.ExecutorConfig

	// ACL, if set, checks every request against RocketMQ's plain ACL
	// (engine/acl, acl.go); refusals are answered NO_PERMISSION and nothing
	// is done. Store new rules on the checker to change them live. nil = off.
	ACL *acl.Checker

	Logger *slog.Logger // nil = slog.Default()
}

// DefaultDelayLevels is RocketMQ's messageDelayLevel.
const DefaultDelayLevels = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"

// DefaultConfig is RocketMQ's BrokerConfig defaults: broker-a in
// DefaultCluster on 127.0.0.1:10911, registration every 30 s, auto-created
// topics from TBW102 (8 queues), long polling capped at 25 s, a 200 ms send
// queue limit, 16 reconsume times and the 18 default delay levels.
func DefaultConfig() Config {
	levels, err := ParseDelayLevels(DefaultDelayLevels)
	if err != nil {
		panic(err) // a constant that does not parse is a broken invariant
	}
	cpus := runtime.NumCPU()
	return Config{
		BrokerName:                  "broker-a",
		ClusterName:                 "DefaultCluster",
		ListenAddr:                  "127.0.0.1:10911",
		RegisterInterval:            30 * time.Second,
		RegisterTimeout:             3 * time.Second,
		AutoCreateTopic:             true,
		DefaultTopicQueueNums:       8,
		LongPolling:                 true,
		MaxSuspend:                  25 * time.Second,
		ShortPollingTime:            time.Second,
		LongPollingCheckInterval:    5 * time.Second,
		SendWorkers:                 16,
		SendQueueSize:               10000,
		SendQueueMaxWait:            200 * time.Millisecond,
		FastFailureInterval:         10 * time.Millisecond,
		MaxReconsumeTimes:           16,
		AutoCreateSubscriptionGroup: true,
		DelayLevels:                 levels,
		ScheduleCheckInterval:       time.Second,
		TimerEnable:                 true,
		TimerPrecision:              time.Second,
		TimerMaxDelay:               3 * 24 * time.Hour,
		TimerLoadWindow:             time.Minute,
		TimerMaxLoaded:              1 << 20,
		TimerFlushInterval:          time.Second,
		LitePullEnable:              true,
		TransactionCheckInterval:    60 * time.Second,
		TransactionTimeout:          6 * time.Second,
		TransactionCheckMax:         15,
		MaxBodySize:                 4 << 20,
		EnablePropertyFilter:        true,
		StoreReplyMessage:           true,
		Role:                        AsyncMaster,
		SlaveTimeout:                3 * time.Second,
		SlaveSyncInterval:           10 * time.Second,
		ClientChannelExpiry:         120 * time.Second,
		ClientScanInterval:          10 * time.Second,
		FlushConsumerOffsetInterval: 5 * time.Second,
		Remoting:                    remoting.DefaultServerConfig(),
		SendExecutor:                remoting.ExecutorConfig{Workers: 2, QueueSize: 10000},
		PullExecutor:                remoting.ExecutorConfig{Workers: 16 + 2*cpus, QueueSize: 100000},
		LitePullExecutor:            remoting.ExecutorConfig{Workers: 16 + 2*cpus, QueueSize: 100000},
		HeartbeatExecutor:           remoting.ExecutorConfig{Workers: max(2, min(32, cpus)), QueueSize: 50000},
		ClientManageExecutor:        remoting.ExecutorConfig{Workers: 32, QueueSize: 1000000},
		QueryExecutor:               remoting.ExecutorConfig{Workers: 8 + cpus, QueueSize: 20000},
	}
}

// ParseDelayLevels parses a messageDelayLevel string: space-separated
// durations with one unit each, s, m, h or d ("1s 5s 10s 30s 1m ... 2h").
func ParseDelayLevels(s string) ([]time.Duration, error) {
	var levels []time.Duration
	for _, f := range strings.Fields(s) {
		if len(f) < 2 {
			return nil, fmt.Errorf("%w: delay level %q", ErrBadConfig, f)
		}
		n, err := strconv.ParseInt(f[:len(f)-1], 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%w: delay level %q", ErrBadConfig, f)
		}
		var unit time.Duration
		switch f[len(f)-1] {
		case 's':
			unit = time.Second
		case 'm':
			unit = time.Minute
		case 'h':
			unit = time.Hour
		case 'd':
			unit = 24 * time.Hour
		default:
			return nil, fmt.Errorf("%w: delay level %q: unit must be s, m, h or d", ErrBadConfig, f)
		}
		levels = append(levels, time.Duration(n)*unit)
	}
	if len(levels) == 0 {
		return nil, fmt.Errorf("%w: no delay levels", ErrBadConfig)
	}
	return levels, nil
}

// FormatDelayLevels is the inverse of ParseDelayLevels (in whole seconds
// where a larger unit does not divide the delay).
func FormatDelayLevels(levels []time.Duration) string {
	parts := make([]string, len(levels))
	for i, d := range levels {
		switch {
		case d%(24*time.Hour) == 0:
			parts[i] = strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
		case d%time.Hour == 0:
			parts[i] = strconv.FormatInt(int64(d/time.Hour), 10) + "h"
		case d%time.Minute == 0:
			parts[i] = strconv.FormatInt(int64(d/time.Minute), 10) + "m"
		default:
			parts[i] = strconv.FormatInt(int64(d/time.Second), 10) + "s"
		}
	}
	return strings.Join(parts, " ")
}

func (c *Config) validate() error {
	switch {
	case c.BrokerName == "" || c.ClusterName == "":
		return fmt.Errorf("%w: broker and cluster names are required", ErrBadConfig)
	case c.ListenAddr == "":
		return fmt.Errorf("%w: listen address is required", ErrBadConfig)
	case c.DefaultTopicQueueNums <= 0:
		return fmt.Errorf("%w: default topic queue nums must be positive", ErrBadConfig)
	case len(c.DelayLevels) == 0:
		return fmt.Errorf("%w: no delay levels", ErrBadConfig)
	case c.SendWorkers <= 0 || c.SendQueueSize <= 0:
		return fmt.Errorf("%w: send workers and queue size must be positive", ErrBadConfig)
	case c.RegisterInterval <= 0 || c.RegisterTimeout <= 0:
		return fmt.Errorf("%w: register interval and timeout must be positive", ErrBadConfig)
	case c.TransactionCheckInterval <= 0 || c.TransactionTimeout < 0 || c.TransactionCheckMax <= 0:
		return fmt.Errorf("%w: transaction check interval and max must be positive, the timeout not negative", ErrBadConfig)
	}
	if c.FlushConsumerOffsetInterval <= 0 {
		c.FlushConsumerOffsetInterval = 5 * time.Second
	}
	if err := c.validateHA(); err != nil {
		return err
	}
	if err := c.validateTimer(); err != nil {
		return err
	}
	for _, d := range c.DelayLevels {
		if d <= 0 {
			return fmt.Errorf("%w: delay levels must be positive", ErrBadConfig)
		}
	}
	return nil
}

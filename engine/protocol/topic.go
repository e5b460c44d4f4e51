package protocol

import "encoding/json"

// Permission bits of a topic or broker (PermName).
const (
	PermPriority int32 = 8
	PermRead     int32 = 4
	PermWrite    int32 = 2
	PermInherit  int32 = 1
	// DefaultPerm is read + write, what topics get unless configured otherwise.
	DefaultPerm = PermRead | PermWrite
)

// MasterID is the broker id of a master; slaves have ids ≥ 1.
const MasterID int64 = 0

// System topics and topic name affixes (TopicValidator, MixAll,
// TimerMessageStore).
const (
	// DefaultTopic is the template of auto-created topics (TBW102).
	DefaultTopic = "TBW102"
	// ScheduleTopic holds delayed messages, one queue per delay level.
	ScheduleTopic = "SCHEDULE_TOPIC_XXXX"
	// TransHalfTopic holds prepared (half) transactional messages.
	TransHalfTopic = "RMQ_SYS_TRANS_HALF_TOPIC"
	// TransOpHalfTopic records the commit/rollback of half messages.
	TransOpHalfTopic = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
	// TransCheckMaxTimeTopic receives half messages checked too often.
	TransCheckMaxTimeTopic = "TRANS_CHECK_MAX_TIME_TOPIC"
	// SelfTestTopic is the broker's self-test topic.
	SelfTestTopic = "SELF_TEST_TOPIC"
	// OffsetMovedEvent is the topic of offset-moved events.
	OffsetMovedEvent = "OFFSET_MOVED_EVENT"
	// TraceTopic is the message-trace topic (RMQ_SYS_TRACE_TOPIC).
	TraceTopic = "RMQ_SYS_TRACE_TOPIC"
	// TimerTopic is RocketMQ 5's timer system topic (TIMER_TOPIC): queue 0
	// holds every timer message until it is due, queue 1 the timer service's
	// checkpoints.
	TimerTopic = "rmq_sys_wheel_timer"

	// RetryTopicPrefix prefixes a consumer group's retry topic.
	RetryTopicPrefix = "%RETRY%"
	// DLQTopicPrefix prefixes a consumer group's dead-letter topic.
	DLQTopicPrefix = "%DLQ%"
	// ReplyTopicSuffix follows the cluster name in its reply topic
	// (MixAll.REPLY_TOPIC_POSTFIX).
	ReplyTopicSuffix = "_REPLY_TOPIC"

	// DefaultTopicFilterType is the topicFilterType of every topic.
	DefaultTopicFilterType = "SINGLE_TAG"
)

// RetryTopic is the retry topic of a consumer group.
func RetryTopic(group string) string { return RetryTopicPrefix + group }

// DLQTopic is the dead-letter topic of a consumer group.
func DLQTopic(group string) string { return DLQTopicPrefix + group }

// ReplyTopic is a cluster's reply topic, "<cluster>_REPLY_TOPIC".
func ReplyTopic(cluster string) string { return cluster + ReplyTopicSuffix }

// DataVersion versions a config table (topics, subscription groups, consumer
// offsets): bumped on every change so peers (the name server, a slave) can
// tell tables apart.
type DataVersion struct {
	Counter      int64 `json:"counter"`
	StateVersion int64 `json:"stateVersion"`
	Timestamp    int64 `json:"timestamp"`
}

// TopicConfig is one topic as the broker configures it, as it appears in
// topics.json and in registration bodies (fields in fastjson's order).
type TopicConfig struct {
	Attributes      map[string]string `json:"attributes"`
	Order           bool              `json:"order"`
	Perm            int32             `json:"perm"`
	ReadQueueNums   int32             `json:"readQueueNums"`
	TopicFilterType string            `json:"topicFilterType"` // "SINGLE_TAG"
	TopicName       string            `json:"topicName"`
	TopicSysFlag    int32             `json:"topicSysFlag"`
	WriteQueueNums  int32             `json:"writeQueueNums"`
}

// NewTopicConfig returns a read-write topic with queues read and write queues.
func NewTopicConfig(name string, queues int32) TopicConfig {
	return TopicConfig{Attributes: map[string]string{}, Perm: DefaultPerm, ReadQueueNums: queues,
		TopicFilterType: DefaultTopicFilterType, TopicName: name, WriteQueueNums: queues}
}

// TopicConfigSerializeWrapper is a broker's topic table with its version; the
// body of GET_ALL_TOPIC_CONFIG (21), part of RegisterBrokerBody and the
// content of topics.json. The mapping fields (static topics) are carried but
// not interpreted.
type TopicConfigSerializeWrapper struct {
	DataVersion                DataVersion                `json:"dataVersion"`
	MappingDataVersion         *DataVersion               `json:"mappingDataVersion,omitempty"`
	TopicConfigTable           map[string]TopicConfig     `json:"topicConfigTable"`
	TopicQueueMappingDetailMap map[string]json.RawMessage `json:"topicQueueMappingDetailMap,omitempty"`
	TopicQueueMappingInfoMap   map[string]json.RawMessage `json:"topicQueueMappingInfoMap,omitempty"`
}

// CreateTopicRequestHeader is the header of UPDATE_AND_CREATE_TOPIC (17) as
// the admin client fills it (defaultTopic TBW102 and topicFilterType
// SINGLE_TAG are implied).
type CreateTopicRequestHeader struct {
	TopicName      string `json:"topicName"`
	ReadQueueNums  int32  `json:"readQueueNums"`
	WriteQueueNums int32  `json:"writeQueueNums"`
	Perm           int32  `json:"perm"`
	TopicSysFlag   int32  `json:"topicSysFlag"`
	Order          bool   `json:"order"`
	// Attributes is AttributeParser's text form: "+a=b,+c=d,-e".
	Attributes string `json:"attributes,omitempty"`
}

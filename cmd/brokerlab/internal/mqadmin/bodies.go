package mqadmin

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// decodeMQTable turns a normalised MessageQueue-keyed map (keys are the
// queues' JSON text) into entries sorted by queue; mk builds an entry.
func decodeMQTable[V, E any](what string, raw map[string]V, mk func(protocol.MessageQueue, V) E, key func(E) protocol.MessageQueue) ([]E, error) {
	out := make([]E, 0, len(raw))
	for k, v := range raw {
		var mq protocol.MessageQueue
		if err := json.Unmarshal([]byte(k), &mq); err != nil {
			return nil, fmt.Errorf("%w: %s: key %q is not a MessageQueue", ErrMalformed, what, k)
		}
		out = append(out, mk(mq, v))
	}
	slices.SortFunc(out, func(a, b E) int { return key(a).Compare(key(b)) })
	return out, nil
}

// TopicOffset is one queue of GET_TOPIC_STATS_INFO (TopicOffset.java).
type TopicOffset struct {
	protocol.MessageQueue
	MinOffset           int64 `json:"minOffset"`
	MaxOffset           int64 `json:"maxOffset"`
	LastUpdateTimestamp int64 `json:"lastUpdateTimestamp"`
}

// TopicStats is a TopicStatsTable: per-queue offsets, sorted by queue.
type TopicStats struct {
	Queues      []TopicOffset `json:"queues"`
	TopicPutTps float64       `json:"topicPutTps"`
}

// DecodeTopicStats reads a TopicStatsTable body (GET_TOPIC_STATS_INFO, 202).
func DecodeTopicStats(b []byte) (*TopicStats, error) {
	var raw struct {
		OffsetTable map[string]TopicOffset `json:"offsetTable"`
		TopicPutTps float64                `json:"topicPutTps"`
	}
	if err := unmarshal("TopicStatsTable", b, &raw); err != nil {
		return nil, err
	}
	qs, err := decodeMQTable("TopicStatsTable", raw.OffsetTable,
		func(mq protocol.MessageQueue, v TopicOffset) TopicOffset { v.MessageQueue = mq; return v },
		func(e TopicOffset) protocol.MessageQueue { return e.MessageQueue })
	if err != nil {
		return nil, err
	}
	return &TopicStats{Queues: qs, TopicPutTps: raw.TopicPutTps}, nil
}

// OffsetWrapper is one queue of GET_CONSUME_STATS (OffsetWrapper.java) with
// Diff (broker − consumer offset, mqadmin's #Diff) and Inflight (pull −
// consumer offset) filled in.
type OffsetWrapper struct {
	protocol.MessageQueue
	BrokerOffset   int64 `json:"brokerOffset"`
	ConsumerOffset int64 `json:"consumerOffset"`
	PullOffset     int64 `json:"pullOffset"`
	LastTimestamp  int64 `json:"lastTimestamp"`
	Diff           int64 `json:"diff"`
	Inflight       int64 `json:"inflight"`
}

// ConsumeStats is a group's consume progress, sorted by queue.
type ConsumeStats struct {
	Queues     []OffsetWrapper `json:"queues"`
	ConsumeTps float64         `json:"consumeTps"`
}

// DiffTotal is the sum of the queues' Diff (ConsumeStats.computeTotalDiff).
func (s *ConsumeStats) DiffTotal() int64 {
	var t int64
	for _, q := range s.Queues {
		t += q.Diff
	}
	return t
}

// DecodeConsumeStats reads a ConsumeStats body (GET_CONSUME_STATS, 208).
func DecodeConsumeStats(b []byte) (*ConsumeStats, error) {
	var raw struct {
		OffsetTable map[string]OffsetWrapper `json:"offsetTable"`
		ConsumeTps  float64                  `json:"consumeTps"`
	}
	if err := unmarshal("ConsumeStats", b, &raw); err != nil {
		return nil, err
	}
	qs, err := decodeMQTable("ConsumeStats", raw.OffsetTable,
		func(mq protocol.MessageQueue, v OffsetWrapper) OffsetWrapper {
			v.MessageQueue = mq
			v.Diff = v.BrokerOffset - v.ConsumerOffset
			v.Inflight = v.PullOffset - v.ConsumerOffset
			return v
		},
		func(e OffsetWrapper) protocol.MessageQueue { return e.MessageQueue })
	if err != nil {
		return nil, err
	}
	return &ConsumeStats{Queues: qs, ConsumeTps: raw.ConsumeTps}, nil
}

// QueueOffset is one queue's new offset in a ResetOffsetBody.
type QueueOffset struct {
	protocol.MessageQueue
	Offset int64 `json:"offset"`
}

// DecodeResetOffsetBody reads INVOKE_BROKER_TO_RESET_OFFSET's (222) body:
// {"offsetTable":{MessageQueue:offset}}.
func DecodeResetOffsetBody(b []byte) ([]QueueOffset, error) {
	var raw struct {
		OffsetTable map[string]int64 `json:"offsetTable"`
	}
	if err := unmarshal("ResetOffsetBody", b, &raw); err != nil {
		return nil, err
	}
	return decodeMQTable("ResetOffsetBody", raw.OffsetTable,
		func(mq protocol.MessageQueue, v int64) QueueOffset { return QueueOffset{mq, v} },
		func(e QueueOffset) protocol.MessageQueue { return e.MessageQueue })
}

// text reads a JSON string or number as text: fastjson writes enums by
// name, older brokers by ordinal.
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = text(s)
		return nil
	}
	if string(b) == "null" {
		*t = ""
		return nil
	}
	*t = text(b)
	return nil
}

// Connection is one client connection (Connection.java); Language is the
// LanguageCode name, VersionDesc the MQVersion name of Version.
type Connection struct {
	ClientID    string `json:"clientId"`
	ClientAddr  string `json:"clientAddr"`
	Language    string `json:"language"`
	Version     int32  `json:"version"`
	VersionDesc string `json:"versionDesc"`
}

type rawConnection struct {
	ClientID   string `json:"clientId"`
	ClientAddr string `json:"clientAddr"`
	Language   text   `json:"language"`
	Version    int32  `json:"version"`
}

func connections(raw []rawConnection) []Connection {
	out := make([]Connection, 0, len(raw))
	for _, c := range raw {
		lang := string(c.Language)
		if n, err := strconv.Atoi(lang); err == nil {
			lang = languageName(n)
		}
		out = append(out, Connection{ClientID: c.ClientID, ClientAddr: c.ClientAddr, Language: lang,
			Version: c.Version, VersionDesc: VersionDesc(c.Version)})
	}
	slices.SortFunc(out, func(a, b Connection) int { return cmp.Compare(a.ClientID, b.ClientID) })
	return out
}

var languageNames = []string{"JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY", "OTHER",
	"HTTP", "GO", "PHP", "OMS", "RUST", "NODE_JS"}

func languageName(n int) string {
	if n >= 0 && n < len(languageNames) {
		return languageNames[n]
	}
	return "OTHER"
}

// Subscription is one topic a consumer group subscribes (SubscriptionData).
type Subscription struct {
	Topic          string   `json:"topic"`
	SubString      string   `json:"subString"`
	ExpressionType string   `json:"expressionType"`
	TagsSet        []string `json:"tagsSet"`
	SubVersion     int64    `json:"subVersion"`
}

// ConsumerConnection answers GET_CONSUMER_CONNECTION_LIST (203).
type ConsumerConnection struct {
	Connections      []Connection   `json:"connections"`
	Subscriptions    []Subscription `json:"subscriptions"`
	ConsumeType      string         `json:"consumeType"`
	MessageModel     string         `json:"messageModel"`
	ConsumeFromWhere string         `json:"consumeFromWhere"`
}

// DecodeConsumerConnection reads a ConsumerConnection body; connections
// sorted by client id, subscriptions by topic.
func DecodeConsumerConnection(b []byte) (*ConsumerConnection, error) {
	var raw struct {
		ConnectionSet     []rawConnection         `json:"connectionSet"`
		SubscriptionTable map[string]Subscription `json:"subscriptionTable"`
		ConsumeType       text                    `json:"consumeType"`
		MessageModel      text                    `json:"messageModel"`
		ConsumeFromWhere  text                    `json:"consumeFromWhere"`
	}
	if err := unmarshal("ConsumerConnection", b, &raw); err != nil {
		return nil, err
	}
	cc := &ConsumerConnection{Connections: connections(raw.ConnectionSet), ConsumeType: string(raw.ConsumeType),
		MessageModel: string(raw.MessageModel), ConsumeFromWhere: string(raw.ConsumeFromWhere),
		Subscriptions: []Subscription{}}
	for _, topic := range slices.Sorted(maps.Keys(raw.SubscriptionTable)) {
		s := raw.SubscriptionTable[topic]
		if s.Topic == "" {
			s.Topic = topic
		}
		if s.TagsSet == nil {
			s.TagsSet = []string{}
		}
		slices.Sort(s.TagsSet)
		cc.Subscriptions = append(cc.Subscriptions, s)
	}
	return cc, nil
}

// DecodeProducerConnection reads a ProducerConnection body (GET_PRODUCER_CONNECTION_LIST, 204).
func DecodeProducerConnection(b []byte) ([]Connection, error) {
	var raw struct {
		ConnectionSet []rawConnection `json:"connectionSet"`
	}
	if err := unmarshal("ProducerConnection", b, &raw); err != nil {
		return nil, err
	}
	return connections(raw.ConnectionSet), nil
}

// DecodeGroupList reads a GroupList body (QUERY_TOPIC_CONSUME_BY_WHO, 300), sorted.
func DecodeGroupList(b []byte) ([]string, error) {
	var raw protocol.GroupList
	if err := unmarshal("GroupList", b, &raw); err != nil {
		return nil, err
	}
	if raw.GroupList == nil {
		raw.GroupList = []string{}
	}
	slices.Sort(raw.GroupList)
	return raw.GroupList, nil
}

// DecodeKVTable reads a KVTable body (GET_BROKER_RUNTIME_INFO, 28).
func DecodeKVTable(b []byte) (map[string]string, error) {
	var raw protocol.KVTable
	if err := unmarshal("KVTable", b, &raw); err != nil {
		return nil, err
	}
	if raw.Table == nil {
		raw.Table = map[string]string{}
	}
	return raw.Table, nil
}

// DecodeTopicList reads a TopicList body (GET_ALL_TOPIC_LIST_FROM_NAMESERVER, 206), sorted.
func DecodeTopicList(b []byte) ([]string, error) {
	var raw protocol.TopicList
	if err := unmarshal("TopicList", b, &raw); err != nil {
		return nil, err
	}
	if raw.TopicList == nil {
		raw.TopicList = []string{}
	}
	slices.Sort(raw.TopicList)
	return raw.TopicList, nil
}

// NewSubscriptionGroupConfig returns SubscriptionGroupConfig's defaults as
// mqadmin updateSubGroup starts from them (broadcast and from-min off).
func NewSubscriptionGroupConfig(group string) protocol.SubscriptionGroupConfig {
	return protocol.SubscriptionGroupConfig{GroupName: group, ConsumeEnable: true, RetryQueueNums: 1, RetryMaxTimes: 16,
		WhichBrokerWhenConsumeSlowly: 1, NotifyConsumerIdsChangedEnable: true, ConsumeTimeoutMinute: 15,
		Attributes: map[string]string{}}
}

// DecodeSubscriptionGroups reads a SubscriptionGroupWrapper body
// (GET_ALL_SUBSCRIPTIONGROUP_CONFIG, 201), sorted by group name.
func DecodeSubscriptionGroups(b []byte) ([]protocol.SubscriptionGroupConfig, error) {
	var raw struct {
		SubscriptionGroupTable map[string]protocol.SubscriptionGroupConfig `json:"subscriptionGroupTable"`
	}
	if err := unmarshal("SubscriptionGroupWrapper", b, &raw); err != nil {
		return nil, err
	}
	out := make([]protocol.SubscriptionGroupConfig, 0, len(raw.SubscriptionGroupTable))
	for _, name := range slices.Sorted(maps.Keys(raw.SubscriptionGroupTable)) {
		g := raw.SubscriptionGroupTable[name]
		if g.GroupName == "" {
			g.GroupName = name
		}
		out = append(out, g)
	}
	return out, nil
}

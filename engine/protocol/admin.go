package protocol

import "cmp"

// MessageQueue names one queue of one broker (MessageQueue.java): the
// orderly consumer's lock unit and the key of the offset tables of the admin
// bodies.
type MessageQueue struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
}

// Compare orders queues as MessageQueue.compareTo does: topic, broker name,
// queue id.
func (q MessageQueue) Compare(o MessageQueue) int {
	if c := cmp.Compare(q.Topic, o.Topic); c != 0 {
		return c
	}
	if c := cmp.Compare(q.BrokerName, o.BrokerName); c != 0 {
		return c
	}
	return cmp.Compare(q.QueueID, o.QueueID)
}

// TopicOffset is TopicStatsTable's per-queue value (GET_TOPIC_STATS_INFO, 202).
type TopicOffset struct {
	LastUpdateTimestamp int64 `json:"lastUpdateTimestamp"`
	MaxOffset           int64 `json:"maxOffset"`
	MinOffset           int64 `json:"minOffset"`
}

// OffsetWrapper is ConsumeStats' per-queue value (GET_CONSUME_STATS, 208).
type OffsetWrapper struct {
	BrokerOffset   int64 `json:"brokerOffset"`
	ConsumerOffset int64 `json:"consumerOffset"`
	LastTimestamp  int64 `json:"lastTimestamp"`
	PullOffset     int64 `json:"pullOffset"`
}

// Connection is one client connection (body.Connection) as the broker
// writes it; Language is the LanguageCode name.
type Connection struct {
	ClientAddr string `json:"clientAddr"`
	ClientID   string `json:"clientId"`
	Language   string `json:"language"`
	Version    int32  `json:"version"`
}

// SubscriptionData is a consumer's subscription to one topic as fastjson
// writes it in admin bodies.
type SubscriptionData struct {
	ClassFilterMode bool     `json:"classFilterMode"`
	CodeSet         []int32  `json:"codeSet"`
	ExpressionType  string   `json:"expressionType"`
	SubString       string   `json:"subString"`
	SubVersion      int64    `json:"subVersion"`
	TagsSet         []string `json:"tagsSet"`
	Topic           string   `json:"topic"`
}

// ConsumerConnection is the GET_CONSUMER_CONNECTION_LIST (203) body.
type ConsumerConnection struct {
	ConnectionSet     []Connection                `json:"connectionSet"`
	ConsumeFromWhere  string                      `json:"consumeFromWhere"`
	ConsumeType       string                      `json:"consumeType"`
	MessageModel      string                      `json:"messageModel"`
	SubscriptionTable map[string]SubscriptionData `json:"subscriptionTable"`
}

// ProducerConnection is the GET_PRODUCER_CONNECTION_LIST (204) body.
type ProducerConnection struct {
	ConnectionSet []Connection `json:"connectionSet"`
}

// GroupList is the QUERY_TOPIC_CONSUME_BY_WHO (300) body.
type GroupList struct {
	GroupList []string `json:"groupList"`
}

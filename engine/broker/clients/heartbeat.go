package clients

import (
	"encoding/json"
	"fmt"
)

// HeartbeatData is the body of HEART_BEAT (34): the client's producer and
// consumer groups. clientID is ClientIP@instance; the Go client sends one
// heartbeat per client instance carrying every group it has.
type HeartbeatData struct {
	ClientID        string         `json:"clientID"`
	ProducerDataSet []ProducerData `json:"producerDataSet"`
	ConsumerDataSet []ConsumerData `json:"consumerDataSet"`
}

// ProducerData names a producer group.
type ProducerData struct {
	GroupName string `json:"groupName"`
}

// ConsumerData is one consumer group of a client.
type ConsumerData struct {
	GroupName           string             `json:"groupName"`
	ConsumeType         string             `json:"consumeType"`      // CONSUME_PASSIVELY (push) | CONSUME_ACTIVELY (pull)
	MessageModel        string             `json:"messageModel"`     // CLUSTERING | BROADCASTING
	ConsumeFromWhere    string             `json:"consumeFromWhere"` // CONSUME_FROM_LAST_OFFSET | ...
	SubscriptionDataSet []SubscriptionData `json:"subscriptionDataSet"`
	UnitMode            bool               `json:"unitMode"`
}

// SubscriptionData is one subscribed topic. codeSet is not read: the Go
// client sends strings and Java numbers, and the codes follow from tagsSet.
// subVersion exceeds 2^53 (UnixNano), so it is decoded as int64.
type SubscriptionData struct {
	ClassFilterMode bool     `json:"classFilterMode"`
	Topic           string   `json:"topic"`
	SubString       string   `json:"subString"`
	TagsSet         []string `json:"tagsSet"`
	SubVersion      int64    `json:"subVersion"`
	ExpressionType  string   `json:"expressionType"`
}

// DecodeHeartbeat parses a HEART_BEAT body.
func DecodeHeartbeat(b []byte) (*HeartbeatData, error) {
	var hb HeartbeatData
	if err := json.Unmarshal(b, &hb); err != nil {
		return nil, fmt.Errorf("clients: heartbeat body: %w", err)
	}
	if hb.ClientID == "" && (len(hb.ConsumerDataSet) > 0 || len(hb.ProducerDataSet) > 0) {
		// The Go client sends "" as its IP on hosts without a non-loopback
		// IPv4 address, so clientID is "@instance" rather than empty; an
		// empty id cannot be told apart from another client.
		return nil, fmt.Errorf("clients: heartbeat without clientID")
	}
	return &hb, nil
}

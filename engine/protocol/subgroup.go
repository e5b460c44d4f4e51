package protocol

import "encoding/json"

// SubscriptionGroupConfig is a consumer group's broker-side settings
// (SubscriptionGroupConfig.java) as fastjson writes them (fields in
// alphabetical order; nulls left out): the body of
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200), an entry of
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) and of subscriptionGroup.json.
// groupRetryPolicy and subscriptionDataSet are kept as given.
type SubscriptionGroupConfig struct {
	Attributes                     map[string]string `json:"attributes"`
	BrokerID                       int64             `json:"brokerId"`
	ConsumeBroadcastEnable         bool              `json:"consumeBroadcastEnable"`
	ConsumeEnable                  bool              `json:"consumeEnable"`
	ConsumeFromMinEnable           bool              `json:"consumeFromMinEnable"`
	ConsumeMessageOrderly          bool              `json:"consumeMessageOrderly"`
	ConsumeTimeoutMinute           int32             `json:"consumeTimeoutMinute"`
	GroupName                      string            `json:"groupName"`
	GroupRetryPolicy               json.RawMessage   `json:"groupRetryPolicy,omitempty"`
	GroupSysFlag                   int32             `json:"groupSysFlag"`
	NotifyConsumerIdsChangedEnable bool              `json:"notifyConsumerIdsChangedEnable"`
	RetryMaxTimes                  int32             `json:"retryMaxTimes"`
	RetryQueueNums                 int32             `json:"retryQueueNums"`
	SubscriptionDataSet            json.RawMessage   `json:"subscriptionDataSet,omitempty"`
	WhichBrokerWhenConsumeSlowly   int64             `json:"whichBrokerWhenConsumeSlowly"`
}

// DefaultSubscriptionGroupConfig is a new group's config with Java's
// defaults: consume, consume from min and broadcast enabled, one retry
// queue, 16 retries, master reads, slave 1 when slow, notifications on,
// a 15-minute consume timeout and the CUSTOMIZED retry policy.
func DefaultSubscriptionGroupConfig(name string) SubscriptionGroupConfig {
	return SubscriptionGroupConfig{
		Attributes: map[string]string{}, ConsumeBroadcastEnable: true, ConsumeEnable: true, ConsumeFromMinEnable: true,
		ConsumeTimeoutMinute: 15, GroupName: name, GroupRetryPolicy: json.RawMessage(`{"type":"CUSTOMIZED"}`),
		NotifyConsumerIdsChangedEnable: true, RetryMaxTimes: 16, RetryQueueNums: 1, WhichBrokerWhenConsumeSlowly: 1,
	}
}

// SubscriptionGroupWrapper is the GET_ALL_SUBSCRIPTIONGROUP_CONFIG body and
// the subscriptionGroup.json content.
type SubscriptionGroupWrapper struct {
	DataVersion            DataVersion                        `json:"dataVersion"`
	ForbiddenTable         map[string]map[string]int32        `json:"forbiddenTable"`
	SubscriptionGroupTable map[string]SubscriptionGroupConfig `json:"subscriptionGroupTable"`
}

package main

import "github.com/brokerlab/brokerlab/engine/broker"

// replyFile are the --config keys of SQL92 filtering and request-reply,
// under RocketMQ's BrokerConfig names.
type replyFile struct {
	// EnablePropertyFilter serves SQL92 subscriptions (default true here,
	// false in Java; see broker.Config.EnablePropertyFilter).
	EnablePropertyFilter *bool `yaml:"enablePropertyFilter"`
	// StoreReplyMessageEnable also stores replies in <cluster>_REPLY_TOPIC.
	StoreReplyMessageEnable *bool `yaml:"storeReplyMessageEnable"`
}

// apply copies the keys present onto cfg.
func (f replyFile) apply(cfg *broker.Config) {
	if f.EnablePropertyFilter != nil {
		cfg.EnablePropertyFilter = *f.EnablePropertyFilter
	}
	if f.StoreReplyMessageEnable != nil {
		cfg.StoreReplyMessage = *f.StoreReplyMessageEnable
	}
}

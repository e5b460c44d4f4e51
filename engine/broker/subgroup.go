package broker

import "github.com/brokerlab/brokerlab/engine/protocol"

// FindSubscriptionGroup returns a consumer group's config, creating it
// with the defaults when autoCreateSubscriptionGroup is on
// (SubscriptionGroupManager.findSubscriptionGroupConfig, as RocketMQ's
// proxy reads it in local mode); ok is false for an unknown group
// otherwise. Safe for concurrent use.
func (b *Broker) FindSubscriptionGroup(group string) (c protocol.SubscriptionGroupConfig, ok bool, err error) {
	return b.admin.FindGroup(group)
}

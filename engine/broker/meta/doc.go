// Package meta is the broker's metadata managers, in the shape of
// RocketMQ's TopicConfigManager, SubscriptionGroupManager,
// ConsumerOffsetManager and RebalanceLockManager: the topic table with the
// DataVersion the name servers compare, the subscription groups, the
// committed consumer offsets and the orderly-consumption queue locks. It
// serves QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET, LOCK_BATCH_MQ and
// UNLOCK_BATCH_MQ (Service.Register).
//
// It is not the message store: messages, queues and their offsets are the
// store's. It is not the admin surface either: creating and deleting
// topics and groups over the wire stays with the broker, which calls these
// tables.
//
// # Files
//
// The tables persist through ConfigFiles (engine/store's config directory,
// an in-memory MemFiles for memstore) as RocketMQ writes them: TopicsFile
// (topics.json), ConsumerOffsetsFile (consumerOffset.json, queue ids as
// bare integers read too) and SubscriptionGroupFile
// (subscriptionGroup.json), each replaced atomically. Topic and group
// changes are written at once; consumer offsets when the broker calls
// Offsets.Persist (periodically and at shutdown) and on removals.
//
// # Concurrency
//
// Every table is safe for concurrent use. Service.Load runs once, before
// the broker serves a request; the Topics and Offsets fields are set by it
// and read-only afterwards. The service never imports engine/broker: it
// gets what it needs through Deps and the Table it registers on.
package meta

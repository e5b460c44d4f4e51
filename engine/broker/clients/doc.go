// Package clients is the broker's client management, in the shape of
// RocketMQ's ProducerManager, ConsumerManager and ClientManageProcessor:
// which clients (by client id, each on one connection) are in which
// producer and consumer groups, each consumer group's subscriptions with
// their compiled filters, the connection lists the admin codes show, and
// NOTIFY_CONSUMER_IDS_CHANGED when a group's membership changes. It serves
// HEART_BEAT, UNREGISTER_CLIENT and GET_CONSUMER_LIST_BY_GROUP
// (Service.Register).
//
// It is not the subscription-group configuration (engine/broker/meta) nor
// the filters themselves: the broker compiles them (Deps.CompileFilter)
// and creates a heartbeat's retry topics and groups (Deps.BeforeHeartbeat).
//
// # Concurrency
//
// Table and Service are safe for concurrent use; the table has one mutex,
// never held while calling out (notifications are written on their own
// goroutines, which Service.Wait waits for). The service never imports
// engine/broker.
package clients

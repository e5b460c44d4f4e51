// Package rmqdriver is a workloads.Driver and workloads.Source built on the
// official Apache RocketMQ Go client (github.com/apache/rocketmq-client-go/v2),
// so an experiment can put what a user's client achieves beside brokerlab's
// own client (workloads/netdriver) on the same broker. It is outside engine/
// on purpose: the engine never depends on the official client.
//
// # What runs
//
//	Send       the client's Producer.SendSync with a manual queue selector:
//	           the workloads.Message's QueueID picks the queue, TAGS and KEYS
//	           are set as the client sets them. The client retries a failed
//	           send Config.Retries times (its own behaviour, on by default).
//	Pull       the client's PullConsumer.PullFrom. The client always asks the
//	           broker to hold a pull that finds nothing (suspend flag, 20 s)
//	           and ignores the context while it waits; Pull returns ctx's
//	           error when ctx ends first and the held pull is dropped when it
//	           returns. Brokers used with it should cap the hold (brokerlab's
//	           MaxSuspend) so that a caught-up consumer comes back quickly.
//	           The client binds a pull consumer to one topic and its
//	           PullFrom is not safe for concurrent calls, so the driver runs
//	           one pull consumer (a client instance) per topic and queue,
//	           and serialises pulls of one queue.
//	MaxOffset  the client's OffsetForTimestamp with a time in the future
//	           (SEARCH_OFFSET_BY_TIMESTAMP: the queue's max offset), the one
//	           offset query the client's public API offers.
//
// Topics are created by whoever sets the broker up (the harness creates
// them through netdriver before the measured phase).
//
// # Routing
//
// Queues come from the name servers (Config.Namesrv, required: the client
// cannot talk to a broker without one) through the client's route lookup,
// sorted by (broker name, queue id) and cached for RouteTTL; a Message's
// QueueID is an index into that list, modulo its length, as in netdriver.
//
// # Logging
//
// The client logs every connection, rebalance and route refresh at info
// level. New sets its log level to Config.LogLevel ("error" unless set):
// the level is the client's global, so the last driver created decides it.
//
// # Concurrency
//
// Every method is safe for concurrent use; Close once, after the others
// returned.
package rmqdriver

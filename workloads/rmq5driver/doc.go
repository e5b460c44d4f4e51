// Package rmq5driver is a workloads.Driver and workloads.Source built on the
// official Apache RocketMQ 5 Go client (github.com/apache/rocketmq-clients/
// golang/v5) over gRPC, so an experiment can put what the gRPC hop and POP
// consumption cost beside remoting and classic pull (workloads/rmqdriver) on
// the same broker. It is outside engine/ on purpose.
//
// # What runs
//
//	Send       the client's Producer.Send (synchronous): it returns once the
//	           service answered OK. The client picks the broker's queue
//	           itself (round robin); the workloads.Message's QueueID travels
//	           as the user property QueueProperty, TAGS and KEYS as the
//	           client sets them. The client retries a failed send
//	           (Config.MaxAttempts tries in all, its default 3).
//	Pull       the simple consumer (POP): Config.Receivers loops each
//	           receive a batch of up to Config.ReceiveBatch messages with
//	           Config.Invisible as invisible duration (long polling
//	           Config.Await), file every body under the queue its
//	           QueueProperty names, then ack each message. Pull returns
//	           the bodies filed for its queue, waiting up to Config.PullHold
//	           for one, so the harness stamps a message's end-to-end
//	           latency when a consumer holds its body, as with rmqdriver's
//	           pull. Offsets are the driver's own (see Pull), and one driver
//	           is one consumer of its group: several gen consumers on one
//	           driver share its messages instead of each reading all.
//	MaxOffset  the number of messages received for the queue so far; the
//	           first call for a topic subscribes to it.
//
// Failed sends wrap the client's error; a status with a remoting
// counterpart (TOO_MANY_REQUESTS, MASTER_PERSISTENCE_TIMEOUT, …) also wraps
// a *remoting.ResponseError of that code, so gen.FailureCode counts it
// under the same name as for the remoting clients.
//
// # Process-wide settings
//
// The client keeps its log settings and its TLS switch in the process: the
// first New points the client's log at Config.LogDir (a temporary directory
// by default; never ~/logs) at Config.LogLevel with TLS as Config.TLS, and
// each New sets the long-polling workaround's await (longpoll.go: the client never sets a
// receive's long_polling_timeout, which the driver fills in).
//
// # Concurrency
//
// Every method is safe for concurrent use; Close once, after the others
// returned.
package rmq5driver

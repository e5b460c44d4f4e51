// Package netdriver is the network driver of the harness: a
// workloads.Driver and workloads.Source that talk RocketMQ's remoting
// protocol to brokerlab's broker (or any RocketMQ broker) through
// engine/remoting's client, so every experiment can run over loopback or
// against remote hosts, with the broker in-process or a separate process.
//
// # Routing
//
// With Config.Namesrv set, a topic's route comes from the name servers
// (GET_ROUTEINFO_BY_TOPIC) and is cached for RouteTTL. Its queues, sorted by
// (broker name, queue id), are numbered 0..n-1: a workloads.Message's QueueID
// (and Pull's queueID) is an index into that list, modulo its length, so a
// topic spread over several brokers looks like one list of queues. With only
// Config.Broker set, every request goes to that broker and queue ids are the
// broker's own.
//
// # Requests
//
//	Send        SEND_MESSAGE_V2 (310), short header, properties TAGS and KEYS;
//	            with Config.Batch > 1 concurrent Sends of one queue are grouped
//	            into SEND_BATCH_MESSAGE (320) requests of up to Batch messages
//	            (no timer: a batch is whatever queued while the previous ones
//	            of that queue were in flight, at most MaxInFlightBatches).
//	SendAsync   SEND_MESSAGE_V2, callback on the reply.
//	SendOneway  SEND_MESSAGE_V2 with the oneway flag: no reply.
//	Pull        PULL_MESSAGE (11) without suspension; the body's records are
//	            decoded with engine/record (zlib bodies inflated).
//	MaxOffset   GET_MAX_OFFSET (30).
//	CreateTopic UPDATE_AND_CREATE_TOPIC (17) on every master broker.
//
// # Concurrency
//
// Every method is safe for concurrent use; Close once, after the others
// returned. Bodies returned by Pull are owned by the caller.
package netdriver

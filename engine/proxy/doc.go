// Package proxy is RocketMQ 5's gRPC front end (apache.rocketmq.v2
// MessagingService) served by the broker process itself, as RocketMQ's
// proxy does in its LOCAL mode, so that the RocketMQ 5 SDKs (Java 5, Go v5,
// C#, Python, Node.js, Rust) can use brokerlab.
//
// It is the only engine package that imports grpc and protobuf; it uses the
// generated code RocketMQ publishes (rocketmq-clients/golang/v5/protocol/v2).
//
// # How requests reach the broker
//
// Message traffic is translated into the broker's remoting requests and sent
// over one remoting connection from the proxy to the broker's own listen
// address (SEND_MESSAGE_V2, END_TRANSACTION, HEART_BEAT, UNREGISTER_CLIENT,
// PULL_MESSAGE, QUERY/UPDATE_CONSUMER_OFFSET, GET_MAX/MIN_OFFSET,
// SEARCH_OFFSET_BY_TIMESTAMP, RECALL_MESSAGE), as the proxy's CLUSTER mode does; the broker's
// send path, transaction service, timer and ACL therefore apply unchanged.
// Routes and topic message types are read from the broker's topic table in
// process. POP (ReceiveMessage, AckMessage, ChangeInvisibleDuration,
// ForwardMessageToDeadLetterQueue) goes to a Consumer (the broker's POP
// service) in process.
//
// # Clients and transactions
//
// Every gRPC client is known by its x-mq-client-id; its Telemetry stream is
// its session: the first Settings it sends is answered with the server's
// Settings (the handshake the SDKs wait for). Heartbeats are forwarded to the
// broker as HEART_BEAT carrying the gRPC client id, so the broker's producer
// table lists the client's producer group on the proxy's connection. The
// broker's transaction check-back (CHECK_TRANSACTION_STATE on that
// connection) is turned into a RecoverOrphanedTransactionCommand pushed on
// the Telemetry stream of a live producer of the message's group; its answer
// comes back as EndTransaction with source SERVER_CHECK.
//
// # Consumers
//
// ReceiveMessage pops with init mode MAX (a group new to a queue starts at
// its end, or at its first message while that is in memory), as Java's
// proxy. Messages received with auto_renew (the push consumer) are leased
// while their client stays connected (renew.go): their invisible time is
// extended ahead of its end, and an ack, invisible-time change or DLQ
// forward with the handle the client got uses the renewed one; a client
// gone has its leases made visible again soon after. The FIFO flag and
// the retry policy in a consumer's settings are its subscription group's
// (consumeMessageOrderly, retryMaxTimes and groupRetryPolicy), and a
// group's ReceiveMessage pops in FIFO order when that flag is set.
//
// # Access control
//
// With Config.ACL set, every call must carry the authorization metadata
// ("MQv2-HMAC-SHA1 Credential=<accessKey>/..., SignedHeaders=x-mq-date-time,
// Signature=<hex HmacSHA1(secretKey, x-mq-date-time)>"); the request is then
// checked against the same plain-ACL rules the remoting port uses, as the
// remoting request it turns into, with the gRPC peer's address, and the
// remoting request is signed with the caller's account.
//
// # Concurrency
//
// A Server is safe for concurrent use; Start and Shutdown are called once
// each. Sessions, transaction records, leases and the receive-time table
// are guarded by their own mutexes; one goroutine renews the leases.
package proxy

// Package broker is a RocketMQ broker over engine/remoting, so that the
// official clients work against brokerlab unmodified: a message store, a
// remoting server with processors registered by request code on executors
// per request class, and periodic registration with the name servers
// (Java's BrokerController).
//
// # Lifecycle
//
// New validates a Config and registers the processors. Start listens,
// works out the address to advertise (Config.BrokerIP, the listen host, or
// the first non-loopback IPv4), opens the store through the StoreOpener with
// that address as store host, loads the topic table, starts the services and
// registers with every name server at once; then every RegisterInterval and
// whenever a topic changes (DataVersion.Counter is bumped on every change:
// the name server re-reads a broker's topics only when it changed).
// Registration rounds are serialised (Java's synchronized registerBrokerAll).
// A request that changes a topic — UPDATE_AND_CREATE_TOPIC,
// DELETE_TOPIC_IN_BROKER, the first send to a topic (auto-creation, %RETRY%
// and %DLQ% topics), a heartbeat or send-back that creates a group's retry
// topic — is answered only once every name server took a registration
// carrying the change, or with SYSTEM_ERROR naming the name servers that did
// not within RegisterTimeout; the broker keeps the change and the periodic
// registration repairs the name server later. (Subscription groups are not
// route data in RocketMQ: the name server holds none, so a group's only
// route-visible trace is its retry topic.) Shutdown
// unregisters, stops the server (held pulls are answered, queued sends run),
// stops the services, writes the consumer offsets and closes the store.
// The broker owns the store.
//
// The store is reached through the MessageStore interface, message I/O
// only: OpenStore and FromStore adapt engine/store's DefaultMessageStore to
// it; package memstore is an in-memory implementation for tests and
// network-only benchmarks. What a store may offer besides is found by type
// assertion (storecaps.go): meta.ConfigFiles, where the metadata tables
// persist; EngineStore, for replication; DiskStatser, for runtime info.
//
// # Services
//
// Jobs with their own state live in packages under this one, each built
// with New(Deps) and registering its request codes on the broker's
// processor table (so the one ACL and readiness gate wraps them all):
// meta/ holds the topic table, subscription groups, consumer offsets and
// queue locks (RocketMQ's managers) and serves QUERY/UPDATE_CONSUMER_OFFSET
// and LOCK/UNLOCK_BATCH_MQ; clients/ the producer and consumer tables and
// heartbeats; delay/ the delay levels and the timer wheel; txn/
// transactional messages; admin/ the operator and admin codes (topics,
// queue offsets, groups, stats, offset reset, broker config), the traffic
// counters and the settings UPDATE_BROKER_CONFIG changes live; reply/
// request-reply (SEND_REPLY_MESSAGE pushed to the requester); slave/ a
// slave's copy of its master's topics and groups; msgfilter/ the TAG and
// SQL92 message filters. The services never import this package.
//
// # Requests
//
//	SEND_MESSAGE 10, SEND_MESSAGE_V2 310   header via protocol.ParseSendMessageHeader (long or short names);
//	SEND_BATCH_MESSAGE 320                 body = batch items (record.DecodeBatch). Reply ext msgId (offset
//	                                       message id, comma-joined for a batch), queueId, queueOffset,
//	                                       transactionId (UNIQ_KEY, added when missing). A DELAY level sends the
//	                                       message to the schedule topic's queue level-1 (REAL_TOPIC, REAL_QID).
//	CONSUMER_SEND_MSG_BACK 36              re-stores the record at "offset" in %RETRY%<group> with level
//	                                       delayLevel (0: 3+reconsumeTimes) or, after maxReconsumeTimes (the
//	                                       group's retryMaxTimes, 16 by default), in %DLQ%<group>.
//	PULL_MESSAGE 11                        every reply carries nextBeginOffset, minOffset, maxOffset,
//	                                       suggestWhichBrokerId; body = raw records. PULL_NOT_FOUND with the
//	                                       suspend flag is held until the store reports an arrival, the
//	                                       suspend timeout (capped by MaxSuspend) or the connection closes.
//	HEART_BEAT 34, UNREGISTER_CLIENT 35    consumer/producer groups; a closed connection or 120 s without a
//	                                       heartbeat drops the client; NOTIFY_CONSUMER_IDS_CHANGED 40 is pushed
//	                                       to a group's members whenever its membership changes.
//	GET_CONSUMER_LIST_BY_GROUP 38          body {"consumerIdList":[...]}.
//	QUERY/UPDATE_CONSUMER_OFFSET 14/15     none stored: 0 when the queue starts at 0 and its first message is
//	                                       in memory, else QUERY_NOT_FOUND (Java); negative commits ignored.
//	GET_MAX/MIN_OFFSET 30/31, SEARCH_OFFSET_BY_TIMESTAMP 29, GET_EARLIEST_MSG_STORETIME 32,
//	QUERY_MESSAGE 12, VIEW_MESSAGE_BY_ID 33, UPDATE_AND_CREATE_TOPIC 17, DELETE_TOPIC_IN_BROKER 215,
//	GET_ALL_TOPIC_CONFIG 21, LOCK/UNLOCK_BATCH_MQ 41/42.
//	Operator codes (admin/)                GET_BROKER_RUNTIME_INFO 28, GET_TOPIC_STATS_INFO 202,
//	                                       GET_CONSUME_STATS 208, GET_CONSUMER/PRODUCER_CONNECTION_LIST
//	                                       203/204, QUERY_TOPIC_CONSUME_BY_WHO 300, subscription groups
//	                                       200/201/207 (config/subscriptionGroup.json, meta.Groups; honoured
//	                                       by pulls and send-back), INVOKE_BROKER_TO_RESET_OFFSET 222 (pushes
//	                                       RESET_CONSUMER_CLIENT_OFFSET 220), INVOKE_BROKER_TO_GET_CONSUMER_STATUS
//	                                       223, GET/UPDATE_BROKER_CONFIG 26/25; DELETE_TOPIC_IN_BROKER also
//	                                       removes the topic's consume queues and offsets.
//	END_TRANSACTION 37                     commits (to REAL_TOPIC/REAL_QID) or rolls back a half message that
//	                                       a send with TRAN_MSG stored in RMQ_SYS_TRANS_HALF_TOPIC; pending
//	                                       halves are checked back with CHECK_TRANSACTION_STATE 39 (txn.go).
//	POP_MESSAGE 200050, ACK_MESSAGE 200051, POP consumption: leased messages, receipt handles, checkpoints
//	BATCH_ACK_MESSAGE 200151, PEEK 200052, in the revive topic, retry then DLQ, FIFO (engine/broker/pop,
//	CHANGE_MESSAGE_INVISIBLETIME 200053,   wired in pop.go; Broker.Pop is its Go API for the gRPC front end).
//	NOTIFICATION 200054, POLLING_INFO 200055
//	RECALL_MESSAGE 370                     stores the timer's delete marker for the recall handle a timed send
//	                                       answered with (ext recallHandle): the message is never delivered
//	                                       (engine/broker/delay recall.go, wired in delay.go).
//
// Store statuses map to response codes as SendMessageProcessor and
// PullMessageProcessor do (rocketmq-store.md §8.1, §10.7). Sends are
// refused with SYSTEM_BUSY while the store's page cache is busy and when they
// waited SendQueueMaxWait (200 ms) for a send worker; a sweep every
// FastFailureInterval answers those still queued (BrokerFastFailure).
//
// # Delay levels
//
// A delayed message lives in queue level-1 of ScheduleTopic (RocketMQ's
// SCHEDULE_TOPIC_XXXX, renamed because the commit log refuses that name). One
// goroutine per level reads its queue in order and, once store time + the
// level's delay has passed, stores the message again in REAL_TOPIC/REAL_QID
// without the delay properties. Its progress is kept as the consumer offset
// of group ScheduleTopic, so delayed messages survive restarts.
//
// # Concurrency
//
// Processors run on the remoting executors; the topic table, client table,
// held pulls, send queue and lock table (meta/) each have their own mutex and are
// never locked together. Store calls are made without broker locks held.
// The store's arriving listener only signals (never blocks).
package broker

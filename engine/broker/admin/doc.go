// Package admin is the broker's operator and admin codes, in the shape of
// RocketMQ's AdminBrokerProcessor with BrokerStatsManager's counters and
// Broker2Client's offset reset, split by concern:
//
//   - topics.go: UPDATE_AND_CREATE_TOPIC, DELETE_TOPIC_IN_BROKER (with the
//     topic's consume queues and offsets), GET_ALL_TOPIC_CONFIG.
//   - offsets.go: GET_MAX/MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP,
//     GET_EARLIEST_MSG_STORETIME.
//   - groups.go: subscription groups (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
//     DELETE_SUBSCRIPTIONGROUP, GET_ALL_SUBSCRIPTIONGROUP_CONFIG) and the
//     lookups the send and pull paths make (FindGroup with auto-creation,
//     CheckConsumeGroup, RetryMaxTimes, RetryQueueNums, NotifyEnabled).
//   - runtimeinfo.go, diskratio.go, disk_*.go: GET_BROKER_RUNTIME_INFO.
//   - traffic.go: the traffic counters (Traffic) and their sampler.
//   - stats.go: GET_TOPIC_STATS_INFO and GET_CONSUME_STATS; lag.go the
//     consumer lag an exporter reads (ConsumerLags).
//   - connections.go: GET_CONSUMER/PRODUCER_CONNECTION_LIST and
//     QUERY_TOPIC_CONSUME_BY_WHO.
//   - resetoffset.go: INVOKE_BROKER_TO_RESET_OFFSET and
//     INVOKE_BROKER_TO_GET_CONSUMER_STATUS (the broker asks its clients).
//   - config.go: GET_BROKER_CONFIG and UPDATE_BROKER_CONFIG, with the
//     settings that change at once (LiveKey).
//   - mqmap.go: fastjson maps keyed by MessageQueue (the bodies' offset
//     tables), written and parsed.
//
// Concurrency: every handler and method is safe for concurrent use. The
// live settings are atomics; UPDATE_BROKER_CONFIG runs under one mutex so
// an update is all or nothing, and the config's DataVersion has its own
// lock. Traffic counts lock-free on the hot paths; SampleLoop is one
// goroutine. The tables the handlers read (Deps.Meta, Deps.Clients) carry
// their own locks; Deps.Store is read only from requests, after the
// broker's Start opened the store.
//
// It is not the topic table nor the offsets (engine/broker/meta), the
// client tables (engine/broker/clients), nor the slave's copy of the
// master's groups (the broker's HA glue). The package never imports
// engine/broker.
package admin

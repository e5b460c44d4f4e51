// Package namesrv is a RocketMQ name server: it keeps the route table brokers
// register into and answers clients' route queries, over engine/remoting.
//
// # State
//
// One routeTable under one RWMutex (RouteInfoManager in Java):
//
//	topicQueues   topic → brokerName → QueueData{perm, read/write queue counts, topicSysFlag}
//	brokers       brokerName → BrokerData{cluster, brokerAddrs: brokerId → "ip:port"}
//	clusters      clusterName → set of brokerName
//	live          (clusterName, brokerAddr) → last registration time, timeout, DataVersion, connection
//	filterServers (clusterName, brokerAddr) → filter server addresses
//
// A broker is dropped (its address, and its queue data once no address of its
// broker name is left) when it unregisters, when the connection it last
// registered over closes, or when it has not registered for its timeout
// (120 s unless the registration carried heartbeatTimeoutMillis), checked
// every ScanInterval (5 s).
//
// # Wire
//
//	REGISTER_BROKER (103)   header brokerName*, brokerAddr*, clusterName*, haServerAddr*, brokerId*,
//	                        heartbeatTimeoutMillis, enableActingMaster, compressed, bodyCrc32, zoneName;
//	                        body RegisterBrokerBody JSON (bare TopicConfigSerializeWrapper if the
//	                        request version < 37). bodyCrc32 ≠ 0 must equal CRC32(body)&0x7FFFFFFF.
//	                        Reply SUCCESS, ext haServerAddr/masterAddr (slaves), body {"table":{}}.
//	UNREGISTER_BROKER (104) header brokerName, brokerAddr, clusterName, brokerId.
//	GET_ROUTEINFO_BY_TOPIC (105) header topic*, acceptStandardJsonOnly. Reply TopicRouteData JSON,
//	                        or TOPIC_NOT_EXIST (17). brokerAddrs keys are unquoted numbers
//	                        ({0:"ip:port"}, fastjson) unless the request version ≥ 401 or
//	                        acceptStandardJsonOnly is true; the JSON is compact (the Go client
//	                        splits brokerAddrs by hand and breaks on whitespace).
//	GET_BROKER_CLUSTER_INFO (106)            ClusterInfo JSON, same key rule.
//	GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206) {"topicList":[...]}.
//	DELETE_TOPIC_IN_NAMESRV (216)            header topic*, clusterName.
//	GET_TOPICS_BY_CLUSTER (224)              header cluster*; {"topicList":[...]}.
//	QUERY_DATA_VERSION (322)                 body DataVersion; ext changed; body current DataVersion.
//	BROKER_HEARTBEAT (904)                   header clusterName*, brokerAddr*; refreshes liveness.
//
// Deviations from the Java name server: a first registration carrying exactly
// one topic is accepted (Java refuses it, guarding its register-single-topic
// path); the compressed REGISTER_BROKER body is not supported; static topics
// (topic queue mappings) are ignored; KV config requests are not served.
//
// # Concurrency
//
// Server methods are safe for concurrent use. Request processors run on the
// remoting executors and share the route table through its RWMutex; route
// queries copy what they return.
package namesrv

// Package mqadmin is the wire-level admin client behind `brokerlab admin`:
// it builds the RocketMQ remoting requests mqadmin (DefaultMQAdminExt)
// sends to name servers and brokers, and decodes the Java broker's response
// bodies.
//
// Java brokers serialise bodies with fastjson, which writes maps keyed by
// objects with the key object itself in key position, e.g. a
// TopicStatsTable as
//
//	{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"t"}:{"lastUpdateTimestamp":0,"maxOffset":3,"minOffset":0}},"topicPutTps":0.0}
//
// and maps keyed by numbers with bare numeric keys ({0:"addr"}). Neither is
// valid JSON. Normalize rewrites such a body into standard JSON (an object
// or number key becomes a string holding its compact JSON text), after
// which encoding/json decodes it; the Decode* functions turn the
// MessageQueue-keyed tables into slices sorted as mqadmin prints them.
//
// An Admin is safe for concurrent use; it keeps one connection per address.
package mqadmin

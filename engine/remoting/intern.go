package remoting

// knownExtKeys are the ext field names of the hot requests and responses;
// decoders reuse these strings instead of allocating a key per field.
var knownExtKeys = func() map[string]string {
	m := make(map[string]string)
	for _, k := range []string{
		// send (long and V2 short names) and its response
		"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag",
		"bornTimestamp", "flag", "properties", "reconsumeTimes", "unitMode", "maxReconsumeTimes", "batch",
		"bname", "brokerName", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n",
		"msgId", "queueOffset", "transactionId", "batchUniqId",
		// pull and its response
		"consumerGroup", "commitOffset", "suspendTimeoutMillis", "subscription", "subVersion",
		"expressionType", "maxMsgBytes", "maxMsgNums", "nextBeginOffset", "minOffset", "maxOffset",
		"suggestWhichBrokerId", "offsetDelta", "topicSysFlag", "groupSysFlag",
		// offsets, heartbeat, name server
		"offset", "timestamp", "group", "delayLevel", "originMsgId", "originTopic", "clientID",
		"brokerAddr", "clusterName", "haServerAddr", "brokerId", "bodyCrc32", "masterAddr",
		// the header's own members
		"code", "language", "version", "opaque", "remark", "extFields", "serializeTypeCurrentRPC",
	} {
		m[k] = k
	}
	return m
}()

// internKey returns b as a string, shared for known keys.
func internKey(b []byte) string {
	if s, ok := knownExtKeys[string(b)]; ok { // the conversion in a map index does not allocate
		return s
	}
	return string(b)
}

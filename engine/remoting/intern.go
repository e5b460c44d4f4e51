package remoting

import "unsafe"

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

// knownValues are short ext values the hot requests repeat (booleans, the
// default topic, filter types, common counts); decoders reuse these strings
// instead of allocating one per value. One-byte values ("0", "3") need no
// table: the runtime makes them without allocating.
var knownValues = func() map[string]string {
	m := make(map[string]string)
	for _, v := range []string{
		"true", "false", "TBW102", "TAG", "SQL92", "*", "-1", "10", "16", "32", "64", "20000", "DefaultCluster",
	} {
		m[v] = v
	}
	return m
}()

// maxInternedValue is the longest entry of knownValues: longer values are
// not looked up.
const maxInternedValue = len("DefaultCluster")

// strArena makes the strings of one decoded header (keys, values,
// remark) so that none aliases the buffer they were read from (a frame
// that may be recycled, and that a kept string would pin whole) while a
// header still costs about one allocation instead of one per string: a
// string is copied into the current chunk of arenaChunk bytes if it fits,
// into a new chunk if it is at most arenaMaxShared bytes, else into an
// allocation of its own. A string
// kept past its request (a topic name in the broker's topic table) thus
// pins at most one chunk — its header's other short strings, never the
// header or the frame. A chunk's bytes are not written again once a
// string covers them. Not safe for concurrent use: one per decoder.
type strArena struct {
	chunk []byte // the current chunk; len is the bytes handed out
}

const (
	arenaChunk     = 256
	arenaMaxShared = arenaChunk / 4
)

// str returns b as a string that does not alias b.
func (a *strArena) str(b []byte) string {
	n := len(b)
	if n <= 1 {
		return string(b) // no allocation: the runtime has every 1-byte string
	}
	if cap(a.chunk)-len(a.chunk) < n {
		if n > arenaMaxShared {
			return string(b)
		}
		a.chunk = make([]byte, 0, arenaChunk)
	}
	start := len(a.chunk)
	a.chunk = append(a.chunk, b...)
	return unsafe.String(&a.chunk[start], n)
}

// key returns b as a key string that does not alias b: shared for a known
// key, else from the arena.
func (a *strArena) key(b []byte) string {
	if s, ok := knownExtKeys[string(b)]; ok { // the conversion in a map index does not allocate
		return s
	}
	return a.str(b)
}

// value returns b as a value string that does not alias b: shared for a
// known value, else from the arena.
func (a *strArena) value(b []byte) string {
	if len(b) <= maxInternedValue && len(b) > 1 {
		if s, ok := knownValues[string(b)]; ok {
			return s
		}
	}
	return a.str(b)
}

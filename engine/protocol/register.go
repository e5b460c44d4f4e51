package protocol

import "strconv"

// RegisterBrokerBody is the body of REGISTER_BROKER (103): the broker's topic
// table (a client older than V3_0_11 sends the wrapper alone).
type RegisterBrokerBody struct {
	FilterServerList            []string                    `json:"filterServerList"`
	TopicConfigSerializeWrapper TopicConfigSerializeWrapper `json:"topicConfigSerializeWrapper"`
}

// RegisterBrokerHeader is RegisterBrokerRequestHeader, the custom header
// of REGISTER_BROKER (103).
type RegisterBrokerHeader struct {
	BrokerName, BrokerAddr, ClusterName, HAServerAddr string // required
	BrokerID                                          int64  // required
	// HeartbeatTimeoutMillis is how long the name server keeps the broker
	// without a registration (0: its default); written only when positive.
	HeartbeatTimeoutMillis int64
	EnableActingMaster     bool
	Compressed             bool
	// BodyCrc32 is the body's masked IEEE CRC32 (0: not checked).
	BodyCrc32 int32
	ZoneName  string // written only when set
}

// ParseRegisterBrokerHeader decodes a REGISTER_BROKER header (a request's
// remoting.ExtFields); the first missing required field or malformed value
// is a *FieldError.
func ParseRegisterBrokerHeader(ext map[string]string) (RegisterBrokerHeader, error) {
	r := fieldReader{ext: ext}
	h := RegisterBrokerHeader{
		BrokerName:             r.str("brokerName"),
		BrokerAddr:             r.str("brokerAddr"),
		ClusterName:            r.str("clusterName"),
		HAServerAddr:           r.str("haServerAddr"),
		BrokerID:               r.i64("brokerId"),
		HeartbeatTimeoutMillis: r.optI64("heartbeatTimeoutMillis", 0),
		EnableActingMaster:     r.optBool("enableActingMaster", false),
		Compressed:             r.optBool("compressed", false),
		BodyCrc32:              int32(r.int("bodyCrc32", 32, false, 0)),
		ZoneName:               r.optStr("zoneName", ""),
	}
	return h, r.err
}

// ExtFields encodes the header as RocketMQ 4.9's broker does.
func (h RegisterBrokerHeader) ExtFields() map[string]string {
	e := map[string]string{
		"brokerName": h.BrokerName, "brokerAddr": h.BrokerAddr, "clusterName": h.ClusterName,
		"haServerAddr": h.HAServerAddr, "compressed": strconv.FormatBool(h.Compressed),
		"brokerId": i64s(h.BrokerID), "bodyCrc32": i32s(h.BodyCrc32),
		"enableActingMaster": strconv.FormatBool(h.EnableActingMaster),
	}
	if h.HeartbeatTimeoutMillis > 0 {
		e["heartbeatTimeoutMillis"] = i64s(h.HeartbeatTimeoutMillis)
	}
	if h.ZoneName != "" {
		e["zoneName"] = h.ZoneName
	}
	return e
}

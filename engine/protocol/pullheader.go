package protocol

// PullMessageHeader is PullMessageRequestHeader, the custom header of
// PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361).
type PullMessageHeader struct {
	ConsumerGroup string // required
	Topic         string // required
	QueueID       int32  // required
	QueueOffset   int64  // required
	MaxMsgNums    int32  // required; ≤ 0: the broker's default batch
	SysFlag       int32  // required; PullFlag* bits
	// CommitOffset is the consumer's offset to commit with the pull, -1
	// when absent (none).
	CommitOffset int64
	// SuspendTimeoutMillis is how long a pull that finds nothing may be
	// held (with PullFlagSuspend), 0 when absent.
	SuspendTimeoutMillis int64
	// Subscription and ExpressionType are the subscription sent with the
	// pull (PullFlagSubscription); ExpressionType is TAG when absent.
	Subscription   string
	SubVersion     int64  // written by clients, not read by the broker
	ExpressionType string //
	BrokerName     string // bname, optional
}

// ParsePullMessageHeader decodes a pull header (a request's
// remoting.ExtFields); the first missing required field or malformed
// value is a *FieldError.
func ParsePullMessageHeader(ext map[string]string) (PullMessageHeader, error) {
	r := fieldReader{ext: ext}
	h := PullMessageHeader{
		ConsumerGroup:        r.str("consumerGroup"),
		Topic:                r.str("topic"),
		QueueID:              r.i32("queueId"),
		QueueOffset:          r.i64("queueOffset"),
		MaxMsgNums:           r.i32("maxMsgNums"),
		SysFlag:              r.i32("sysFlag"),
		CommitOffset:         r.optI64("commitOffset", -1),
		SuspendTimeoutMillis: r.optI64("suspendTimeoutMillis", 0),
		Subscription:         r.optStr("subscription", ""),
		ExpressionType:       r.optStr("expressionType", "TAG"),
		BrokerName:           r.optStr("bname", ""),
	}
	return h, r.err
}

// ExtFields encodes the header as the Go client sends it: every field,
// bname only when set.
func (h PullMessageHeader) ExtFields() map[string]string {
	e := map[string]string{
		"consumerGroup": h.ConsumerGroup, "topic": h.Topic, "queueId": i32s(h.QueueID),
		"queueOffset": i64s(h.QueueOffset), "maxMsgNums": i32s(h.MaxMsgNums), "sysFlag": i32s(h.SysFlag),
		"commitOffset": i64s(h.CommitOffset), "suspendTimeoutMillis": i64s(h.SuspendTimeoutMillis),
		"subscription": h.Subscription, "subVersion": i64s(h.SubVersion), "expressionType": h.ExpressionType,
	}
	if h.BrokerName != "" {
		e["bname"] = h.BrokerName
	}
	return e
}

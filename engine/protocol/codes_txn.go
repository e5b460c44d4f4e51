package protocol

// Response codes of transactional messages (ResponseCode.java) used by
// engine/broker/txn.go, in addition to those in codes.go.
const (
	// RespIllegalOperation answers an END_TRANSACTION that comes after the
	// message's CHECK_IMMUNITY_TIME_IN_SECONDS: the check decides instead.
	RespIllegalOperation int32 = 604
)

func init() { responseCodeNames[RespIllegalOperation] = "ILLEGAL_OPERATION" }

package protocol

// EndTransactionHeader is EndTransactionRequestHeader, the custom header of
// END_TRANSACTION (37).
type EndTransactionHeader struct {
	ProducerGroup        string // required
	TranStateTableOffset int64  // required: the half's queue offset
	CommitLogOffset      int64  // required: the half's commit-log offset
	// CommitOrRollback is the transaction bits of the decision (required):
	// 0 unknown, 8 commit, 12 rollback.
	CommitOrRollback     int32
	FromTransactionCheck bool   // the answer to CHECK_TRANSACTION_STATE
	MsgID                string // required
	TransactionID        string
}

// ParseEndTransactionHeader decodes an END_TRANSACTION header (a request's
// remoting.ExtFields); the first missing required field or malformed value
// is a *FieldError. It does not judge CommitOrRollback.
func ParseEndTransactionHeader(ext map[string]string) (EndTransactionHeader, error) {
	r := fieldReader{ext: ext}
	h := EndTransactionHeader{
		ProducerGroup:        r.str("producerGroup"),
		TranStateTableOffset: r.i64("tranStateTableOffset"),
		CommitLogOffset:      r.i64("commitLogOffset"),
		CommitOrRollback:     r.i32("commitOrRollback"),
		FromTransactionCheck: r.optBool("fromTransactionCheck", false),
		MsgID:                r.str("msgId"),
		TransactionID:        r.optStr("transactionId", ""),
	}
	return h, r.err
}

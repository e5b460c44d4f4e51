package pop

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// Topic types of a receipt handle's fifth field (ExtraInfoUtil).
const (
	topicNormal = "0"
	topicRetry  = "1" // %RETRY%<group>_<topic>
)

// Handle is a receipt handle: Java's ExtraInfo (ExtraInfoUtil.buildExtraInfo)
// with the proxy's commit-log offset appended (ReceiptHandle.encode):
//
//	startOffset popTime invisibleTime reviveQid topicType brokerName queueId offset [commitLogOffset]
//
// fields separated by one space. startOffset is the queue offset of the
// first message of the pop's checkpoint (a FIFO pop's batch), popTime the
// pop's time (ms), invisibleTime ms, reviveQid the revive queue of the
// checkpoint (999 for a FIFO pop), topicType "0" for the topic, "1" for
// its retry topic, offset the message's queue offset.
type Handle struct {
	StartOffset   int64
	PopTime       int64
	InvisibleTime int64
	ReviveQid     int32
	Retry         bool
	BrokerName    string
	QueueID       int32
	Offset        int64
	// CommitLogOffset is -1 when the handle has no ninth field (a
	// remoting client's ExtraInfo).
	CommitLogOffset int64
}

// ExtraInfo is the handle's first eight fields (the POP_CK property).
func (h Handle) ExtraInfo() string {
	t := topicNormal
	if h.Retry {
		t = topicRetry
	}
	var b strings.Builder
	b.Grow(64)
	b.WriteString(strconv.FormatInt(h.StartOffset, 10))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(h.PopTime, 10))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(h.InvisibleTime, 10))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(int64(h.ReviveQid), 10))
	b.WriteByte(' ')
	b.WriteString(t)
	b.WriteByte(' ')
	b.WriteString(h.BrokerName)
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(int64(h.QueueID), 10))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(h.Offset, 10))
	return b.String()
}

// String is the full handle (ExtraInfo and the commit-log offset).
func (h Handle) String() string {
	if h.CommitLogOffset < 0 {
		return h.ExtraInfo()
	}
	return h.ExtraInfo() + " " + strconv.FormatInt(h.CommitLogOffset, 10)
}

// FIFO reports whether the handle is a FIFO pop's.
func (h Handle) FIFO() bool { return h.ReviveQid == protocol.PopOrderReviveQueue }

// Expiry is when the message becomes visible again (ms).
func (h Handle) Expiry() int64 { return h.PopTime + h.InvisibleTime }

// ParseHandle parses a receipt handle of eight or nine fields; errors
// wrap ErrInvalidHandle.
func ParseHandle(s string) (Handle, error) {
	f := strings.Split(s, " ")
	if len(f) != 8 && len(f) != 9 {
		return Handle{}, fmt.Errorf("%w: %d fields", ErrInvalidHandle, len(f))
	}
	var h Handle
	var err error
	num := func(i int) int64 {
		if err != nil {
			return 0
		}
		var n int64
		n, err = strconv.ParseInt(f[i], 10, 64)
		return n
	}
	h.StartOffset, h.PopTime, h.InvisibleTime = num(0), num(1), num(2)
	rq := num(3)
	h.QueueID = int32(num(6))
	h.Offset = num(7)
	h.CommitLogOffset = -1
	if len(f) == 9 {
		h.CommitLogOffset = num(8)
	}
	if err != nil {
		return Handle{}, fmt.Errorf("%w: %w", ErrInvalidHandle, err)
	}
	switch f[4] {
	case topicNormal:
	case topicRetry:
		h.Retry = true
	default:
		return Handle{}, fmt.Errorf("%w: topic type %q", ErrInvalidHandle, f[4])
	}
	if rq < 0 || rq > 1<<20 || h.QueueID < 0 || h.Offset < h.StartOffset || h.InvisibleTime < 0 || h.StartOffset < 0 {
		return Handle{}, fmt.Errorf("%w: fields out of range", ErrInvalidHandle)
	}
	h.ReviveQid = int32(rq)
	h.BrokerName = f[5]
	return h, nil
}

package broker

import (
	"context"
	"time"

	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/store"
)

// MessageStore is what the broker needs from a message store (RocketMQ's
// MessageStore, reduced to the calls the processors make): message I/O
// only. Topic configs, subscription groups and consumer offsets are the
// broker's (engine/broker/meta), kept in the store's config files when it
// offers meta.ConfigFiles; replication and disk statistics are optional
// capabilities too (EngineStore, DiskStatser), found by type assertion.
// engine/store's DefaultMessageStore is adapted to it; memstore is an
// in-memory implementation for tests and network benchmarks.
//
// Every method may be called concurrently. A put (Put, PutBatch,
// StagedPutter.AppendStaged) must not keep the message, its Body or its
// Properties once it returns: a single send's message and the request
// frame its body points into are reused after the send is answered
// (copy what must outlive the call). Records handed out (GetResult,
// QueryResult, ReadRecord) are complete commit-log records in the
// engine/record format; the broker owns the buffers it is given (it sends
// them as response bodies) and never modifies them.
type MessageStore interface {
	// Put appends one message and returns once it is durable under the
	// store's flush policy. A non-nil error explains a status that did not
	// store the message (the response remark).
	Put(ctx context.Context, m *record.Message) (PutResult, error)
	// PutBatch appends messages of one topic and queue with consecutive
	// queue offsets.
	PutBatch(ctx context.Context, ms []*record.Message) (PutResult, error)
	// Get reads up to maxMsgNums records of (topic, queueID) from offset whose
	// consume-queue tags code filter accepts (nil accepts all).
	Get(group, topic string, queueID int32, offset int64, maxMsgNums int, filter MessageFilter) GetResult
	// MaxOffset is the queue offset the next message of (topic, queueID) gets.
	MaxOffset(topic string, queueID int32) int64
	// MinOffset is the smallest queue offset still stored.
	MinOffset(topic string, queueID int32) int64
	// InMemory reports whether the message at queue offset of (topic,
	// queueID) is still stored and held in memory by the store's own
	// measure (Java's checkInMemByConsumeOffset with a batch of one);
	// false when the queue has no message there.
	InMemory(topic string, queueID int32, offset int64) bool
	// OffsetByTime is the queue offset of the first message stored at or
	// after timestampMs (the max offset if none).
	OffsetByTime(topic string, queueID int32, timestampMs int64) int64
	// EarliestMessageTime is the store timestamp (ms) of the queue's oldest message.
	EarliestMessageTime(topic string, queueID int32) (int64, error)
	// ReadRecord returns the record at a commit-log offset.
	ReadRecord(physOffset int64) ([]byte, error)
	// QueryByKey returns up to maxNum records of topic indexed under key
	// (KEYS or UNIQ_KEY) stored in [beginMs, endMs].
	QueryByKey(topic, key string, maxNum int, beginMs, endMs int64) (QueryResult, error)
	// SetArrivingListener installs the callback the store calls after a
	// message becomes readable through its consume queue (long polling).
	// It must not block.
	SetArrivingListener(fn ArrivingListener)
	// OSPageCacheBusy reports that the current append has held the append lock
	// over osPageCacheBusyTimeOutMills (1 s).
	OSPageCacheBusy() bool

	// DeleteTopicData removes a topic's messages as far as readers can
	// see: its consume queues (a new message of the topic gets queue
	// offset 0, old ones are never served again); not the config or
	// offsets on it, which are the broker's (meta.Offsets).
	DeleteTopicData(topic string) error

	// Close flushes and releases the store.
	Close() error
}

// StagedPutter is a MessageStore that can split Put in two, as RocketMQ's
// asyncPutMessage: AppendStaged appends m and returns; when the producer
// must wait (for the flush policy or a slave), wait is true and
// WaitStaged(ctx, res) blocks until m is as durable as Put would have made
// it, returning Put's result. The send workers append and run the wait on
// another goroutine, so a group commit serves every producer waiting, not
// at most SendWorkers of them. The two stages pass their state in res (no
// closure or other allocation per put).
type StagedPutter interface {
	// AppendStaged appends m. With wait false, res and err are final.
	// With wait true, err is nil, res is provisional (no offsets set) and
	// WaitStaged must be called with it exactly once, from any
	// goroutine; until then m's producer is not answered. Either stage's
	// result reports the record's offset in PhysOffset (with End), not
	// PhysOffsets.
	AppendStaged(ctx context.Context, m *record.Message) (res PutResult, wait bool, err error)
	// WaitStaged waits for the message AppendStaged stored as res.
	WaitStaged(ctx context.Context, res PutResult) (PutResult, error)
}

// stagedPut is what a staged put's WaitStaged continues from, carried in
// its PutResult between the stages.
type stagedPut struct {
	store      store.PutResult // storeAdapter: the engine/store append to wait for
	innerWaits bool            // haStore: the wrapped store's wait is pending
	slaveWaits bool            // haStore: the producer waits for a slave
	err        error           // haStore: the append's error, when only the slave is waited for
}

// ArrivingListener is told that (topic, queueID) now holds messages up to
// nextOffset-1.
type ArrivingListener func(topic string, queueID int32, nextOffset int64)

// MessageFilter decides from a consume-queue unit's tags code whether a
// message matches a subscription (RocketMQ's isMatchedByConsumeQueue).
type MessageFilter interface {
	MatchTagsCode(tagsCode int64) bool
}

// PutStatus is the outcome of a put, named as RocketMQ's PutMessageStatus.
type PutStatus int

// Put statuses (PutMessageStatus).
const (
	PutOK PutStatus = iota
	PutFlushDiskTimeout
	PutFlushSlaveTimeout
	PutSlaveNotAvailable
	PutServiceNotAvailable
	PutCreateMappedFileFailed
	PutMessageIllegal
	PutPropertiesSizeExceeded
	PutOSPageCacheBusy
	PutUnknownError
)

var putStatusNames = [...]string{
	PutOK: "PUT_OK", PutFlushDiskTimeout: "FLUSH_DISK_TIMEOUT", PutFlushSlaveTimeout: "FLUSH_SLAVE_TIMEOUT",
	PutSlaveNotAvailable: "SLAVE_NOT_AVAILABLE", PutServiceNotAvailable: "SERVICE_NOT_AVAILABLE",
	PutCreateMappedFileFailed: "CREATE_MAPPED_FILE_FAILED", PutMessageIllegal: "MESSAGE_ILLEGAL",
	PutPropertiesSizeExceeded: "PROPERTIES_SIZE_EXCEEDED", PutOSPageCacheBusy: "OS_PAGE_CACHE_BUSY",
	PutUnknownError: "UNKNOWN_ERROR",
}

func (s PutStatus) String() string {
	if s >= 0 && int(s) < len(putStatusNames) {
		return putStatusNames[s]
	}
	return "UNKNOWN_ERROR"
}

// Stored reports whether the message was stored (the send counts as done,
// possibly with a durability warning).
func (s PutStatus) Stored() bool {
	switch s {
	case PutOK, PutFlushDiskTimeout, PutFlushSlaveTimeout, PutSlaveNotAvailable:
		return true
	}
	return false
}

// PutResult describes a put.
type PutResult struct {
	Status PutStatus
	// QueueOffset is the queue offset of the (first) message.
	QueueOffset int64
	// PhysOffsets holds each stored record's commit-log offset, in order.
	// A staged put's result (StagedPutter) leaves it nil and reports its
	// one record in PhysOffset (no allocation per put).
	PhysOffsets []int64
	// PhysOffset is the (first) stored record's commit-log offset when the
	// store sets it (engine/store does); see firstPhys.
	PhysOffset int64
	// StoreTimestamp is the (first) record's STORETIMESTAMP, ms.
	StoreTimestamp int64
	// End is the commit-log offset one past the last stored record (what a
	// SYNC_MASTER waits for its slave to reach); 0 when unknown.
	End int64
	// LockWait, LockHeld and FlushWait are the put's store stages (see
	// engine/store.PutResult); zero when the store does not report them.
	LockWait, LockHeld, FlushWait time.Duration

	staged stagedPut // between AppendStaged and WaitStaged (StagedPutter)
}

// firstPhys is the first stored record's commit-log offset: PhysOffsets[0],
// else PhysOffset when the result has a record's end (a staged put's);
// false when the store reported no offset.
func (r PutResult) firstPhys() (int64, bool) {
	if len(r.PhysOffsets) > 0 {
		return r.PhysOffsets[0], true
	}
	return r.PhysOffset, r.End > 0
}

// GetStatus is the outcome of a read, named as RocketMQ's GetMessageStatus.
type GetStatus int

// Get statuses (GetMessageStatus).
const (
	GetFound GetStatus = iota
	GetNoMatchedMessage
	GetMessageWasRemoving
	GetOffsetFoundNull
	GetOffsetOverflowBadly
	GetOffsetOverflowOne
	GetOffsetTooSmall
	GetNoMatchedLogicQueue
	GetNoMessageInQueue
	GetOffsetReset
)

var getStatusNames = [...]string{
	GetFound: "FOUND", GetNoMatchedMessage: "NO_MATCHED_MESSAGE", GetMessageWasRemoving: "MESSAGE_WAS_REMOVING",
	GetOffsetFoundNull: "OFFSET_FOUND_NULL", GetOffsetOverflowBadly: "OFFSET_OVERFLOW_BADLY",
	GetOffsetOverflowOne: "OFFSET_OVERFLOW_ONE", GetOffsetTooSmall: "OFFSET_TOO_SMALL",
	GetNoMatchedLogicQueue: "NO_MATCHED_LOGIC_QUEUE", GetNoMessageInQueue: "NO_MESSAGE_IN_QUEUE",
	GetOffsetReset: "OFFSET_RESET",
}

func (s GetStatus) String() string {
	if s >= 0 && int(s) < len(getStatusNames) {
		return getStatusNames[s]
	}
	return "UNKNOWN"
}

// GetResult is what a read returns.
type GetResult struct {
	Status GetStatus
	// Buffer holds whole commit-log records, concatenated in queue order
	// (the pull response body).
	Buffer []byte
	// NextBeginOffset is where the consumer should read next.
	NextBeginOffset int64
	MinOffset       int64
	MaxOffset       int64
	// SuggestPullingFromSlave: the consumer reads data beyond the store's
	// in-memory window (suggestWhichBrokerId).
	SuggestPullingFromSlave bool
}

// QueryResult is what a lookup by key returns.
type QueryResult struct {
	// Buffer holds the matching records concatenated.
	Buffer                   []byte
	IndexLastUpdateTimestamp int64
	IndexLastUpdatePhyOffset int64
}

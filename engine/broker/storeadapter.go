package broker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/store"
)

// maxPullBytes is the maxTotalMsgSize the broker asks a pull for; the store
// applies its own in-memory and on-disk caps below it.
const maxPullBytes = 128 << 20

// OpenStore is the StoreOpener of an engine/store DefaultMessageStore: it
// sets cfg's store host to the broker's address and its delay levels to
// delayLevels (the schedule topic's tags codes are delivery times), then
// opens and recovers it.
func OpenStore(cfg store.Config, delayLevels []time.Duration) StoreOpener {
	return func(host netip.AddrPort) (MessageStore, error) {
		cfg.CommitLog.StoreHost = host
		if len(delayLevels) > 0 {
			cfg.MessageDelayLevel = FormatDelayLevels(delayLevels)
		}
		s, err := store.Open(cfg)
		if err != nil {
			return nil, err
		}
		return FromStore(s), nil
	}
}

// FromStore adapts an open engine/store Store to MessageStore.
func FromStore(s *store.Store) MessageStore { return storeAdapter{s} }

type storeAdapter struct{ s *store.Store }

func putStatus(st store.PutStatus) PutStatus {
	switch st {
	case store.PutOK:
		return PutOK
	case store.FlushDiskTimeout:
		return PutFlushDiskTimeout
	case store.ServiceNotAvailable:
		return PutServiceNotAvailable
	case store.CreateMappedFileFailed:
		return PutCreateMappedFileFailed
	case store.MessageIllegal:
		return PutMessageIllegal
	case store.PropertiesSizeExceeded:
		return PutPropertiesSizeExceeded
	case store.OSPageCacheBusy:
		return PutOSPageCacheBusy
	}
	return PutUnknownError
}

func (a storeAdapter) Put(ctx context.Context, m *record.Message) (PutResult, error) {
	res, err := a.s.Put(ctx, m)
	return fromStorePut(res), err
}

// AppendStaged is store.AppendStaged (StagedPutter); a provisional result
// keeps the store's in res.staged for WaitStaged.
func (a storeAdapter) AppendStaged(ctx context.Context, m *record.Message) (PutResult, bool, error) {
	res, wait, err := a.s.AppendStaged(ctx, m)
	if !wait {
		return fromStagedPut(res), false, err
	}
	out := PutResult{Status: putStatus(res.Status), QueueOffset: res.QueueOffset, StoreTimestamp: res.StoreTimestamp,
		LockWait: res.LockWait, LockHeld: res.LockHeld}
	out.staged.store = res
	return out, true, nil
}

// WaitStaged is store.WaitStaged (StagedPutter).
func (a storeAdapter) WaitStaged(ctx context.Context, res PutResult) (PutResult, error) {
	r, err := a.s.WaitStaged(ctx, res.staged.store)
	return fromStagedPut(r), err
}

// fromStorePut is a single put's result in the broker's terms.
func fromStorePut(res store.PutResult) PutResult {
	out := fromStagedPut(res)
	if out.Status.Stored() {
		out.PhysOffsets = []int64{res.WroteOffset}
	}
	return out
}

// fromStagedPut is fromStorePut for a staged put: the record's offset in
// PhysOffset only, without the PhysOffsets slice (StagedPutter).
func fromStagedPut(res store.PutResult) PutResult {
	out := PutResult{Status: putStatus(res.Status), QueueOffset: res.QueueOffset, StoreTimestamp: res.StoreTimestamp,
		LockWait: res.LockWait, LockHeld: res.LockHeld, FlushWait: res.FlushWait}
	if out.Status.Stored() {
		out.PhysOffset = res.WroteOffset
		out.End = res.WroteOffset + res.WroteBytes
	}
	return out
}

func (a storeAdapter) PutBatch(ctx context.Context, ms []*record.Message) (PutResult, error) {
	res, err := a.s.PutBatch(ctx, ms)
	out := PutResult{Status: putStatus(res.Status), QueueOffset: res.QueueOffset, StoreTimestamp: res.StoreTimestamp,
		LockWait: res.LockWait, LockHeld: res.LockHeld, FlushWait: res.FlushWait}
	if !out.Status.Stored() {
		return out, err
	}
	out.End = res.WroteOffset + res.WroteBytes
	ids := strings.Split(res.MsgID(), ",")
	out.PhysOffsets = make([]int64, 0, len(ids))
	for _, id := range ids {
		_, off, perr := record.ParseOffsetMsgID(id)
		if perr != nil {
			return PutResult{Status: PutUnknownError}, fmt.Errorf("broker: store returned msgId %q: %w", id, perr)
		}
		out.PhysOffsets = append(out.PhysOffsets, off)
	}
	return out, err
}

// storeFilter adapts a MessageFilter to the store's; a RecordFilter's
// MatchRecord is its commit-log check.
type storeFilter struct{ f MessageFilter }

func (f storeFilter) MatchesConsumeQueue(tagsCode int64) bool { return f.f.MatchTagsCode(tagsCode) }
func (f storeFilter) MatchesCommitLog(rec []byte) bool {
	rf, ok := f.f.(RecordFilter)
	return !ok || rf.MatchRecord(rec)
}

// UnitsOnly tells the store that a filter without a record check (a tag
// filter) decides on consume-queue units alone, so matching records are
// read contiguously.
func (f storeFilter) UnitsOnly() bool {
	_, ok := f.f.(RecordFilter)
	return !ok
}

var getStatuses = map[store.GetMessageStatus]GetStatus{
	store.Found: GetFound, store.NoMatchedMessage: GetNoMatchedMessage, store.MessageWasRemoving: GetMessageWasRemoving,
	store.OffsetFoundNull: GetOffsetFoundNull, store.OffsetOverflowBadly: GetOffsetOverflowBadly,
	store.OffsetOverflowOne: GetOffsetOverflowOne, store.OffsetTooSmall: GetOffsetTooSmall,
	store.NoMatchedLogicQueue: GetNoMatchedLogicQueue, store.NoMessageInQueue: GetNoMessageInQueue,
}

func (a storeAdapter) Get(group, topic string, queueID int32, offset int64, maxMsgNums int, filter MessageFilter) GetResult {
	var sf store.MessageFilter
	if filter != nil {
		sf = storeFilter{filter}
	}
	res, err := a.s.GetMessage(group, topic, queueID, offset, maxMsgNums, maxPullBytes, sf)
	st, ok := getStatuses[res.Status]
	if !ok {
		st = GetMessageWasRemoving
	}
	out := GetResult{Status: st, Buffer: res.Buffer, NextBeginOffset: res.NextBeginOffset, MinOffset: res.MinOffset, MaxOffset: res.MaxOffset,
		SuggestPullingFromSlave: res.SuggestPullingFromSlave}
	if err != nil && len(res.Buffer) == 0 {
		// Nothing servable at offset. A corrupt record is skipped (RocketMQ's
		// OFFSET_FOUND_NULL moves on by one); a read failure is retried.
		out.Status, out.Buffer, out.NextBeginOffset = GetOffsetFoundNull, nil, offset
		if store.IsCorruption(err) {
			out.NextBeginOffset = offset + 1
		}
	}
	return out
}

// InMemory reads the unit at offset and applies the store's in-memory
// measure to its record, the one pulls use for their transfer caps: within
// AccessMessageInMemoryMaxRatio (40 %) of RAM from the commit log's end
// (RocketMQ's estimateInMemByCommitOffset, and 4.x's test for this very
// question, checkInDiskByConsumeOffset). A pull of that one message
// reports it: its SuggestPullingFromSlave is set exactly when the record
// lies beyond the in-memory window.
func (a storeAdapter) InMemory(topic string, queueID int32, offset int64) bool {
	res, err := a.s.GetMessage("", topic, queueID, offset, 1, maxPullBytes, nil)
	return err == nil && res.Status == store.Found && len(res.Messages) == 1 &&
		res.Messages[0].QueueOffset == offset && !res.SuggestPullingFromSlave
}

func (a storeAdapter) MaxOffset(topic string, queueID int32) int64 {
	return a.s.GetMaxOffsetInQueue(topic, queueID)
}

func (a storeAdapter) MinOffset(topic string, queueID int32) int64 {
	return max(a.s.GetMinOffsetInQueue(topic, queueID), 0)
}

func (a storeAdapter) OffsetByTime(topic string, queueID int32, ts int64) int64 {
	off, err := a.s.GetOffsetInQueueByTime(topic, queueID, ts, store.BoundaryLower)
	if err != nil {
		return a.s.GetMaxOffsetInQueue(topic, queueID)
	}
	return off
}

func (a storeAdapter) EarliestMessageTime(topic string, queueID int32) (int64, error) {
	ts, err := a.s.GetEarliestMessageTime(topic, queueID)
	if errors.Is(err, store.ErrNoMessage) {
		return -1, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return ts, err
}

func (a storeAdapter) ReadRecord(physOffset int64) ([]byte, error) {
	raw, _, err := a.s.LookMessageByOffset(physOffset)
	return raw, err
}

func (a storeAdapter) QueryByKey(topic, key string, maxNum int, beginMs, endMs int64) (QueryResult, error) {
	res, err := a.s.QueryMessage(topic, key, maxNum, beginMs, endMs)
	if errors.Is(err, store.ErrNoMessage) {
		return QueryResult{}, nil
	}
	return QueryResult{Buffer: res.Buffer, IndexLastUpdateTimestamp: res.IndexLastUpdateTimestamp,
		IndexLastUpdatePhyOffset: res.IndexLastUpdatePhyOffset}, err
}

func (a storeAdapter) SetArrivingListener(fn ArrivingListener) {
	if fn == nil {
		a.s.SetMessageArrivingListener(nil)
		return
	}
	a.s.SetMessageArrivingListener(func(topic string, queueID int32, maxOffset int64) { fn(topic, queueID, maxOffset) })
}

func (a storeAdapter) OSPageCacheBusy() bool { return a.s.IsOSPageCacheBusy() }

func (a storeAdapter) Close() error { return a.s.Close() }

// DeleteTopicData is store.DeleteTopicData (DELETE_TOPIC_IN_BROKER).
func (a storeAdapter) DeleteTopicData(topic string) error { return a.s.DeleteTopicData(topic) }

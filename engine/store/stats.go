package store

import (
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
)

type counters struct {
	puts, putMessages, putBytes, putFailures, flushTimeouts atomic.Uint64
	gets, getMessages, getBytes, getCorrupt                 atomic.Uint64
	getStatus                                               [len(getStatusNames)]atomic.Uint64
	segmentsCleaned                                         atomic.Uint64
	// cleanDispatchWaits counts cleaning passes held back by the
	// dispatcher; cleanWaitLoggedAt (unix ns) and cleanWaitLoggedN (the
	// count then) rate-limit their log line. Written under cleanMu.
	cleanDispatchWaits, cleanWaitLoggedN atomic.Uint64
	cleanWaitLoggedAt                    atomic.Int64
}

// Stats is a snapshot of the store's counters (cumulative unless noted).
type Stats struct {
	// Puts counts successful Put/PutBatch calls, PutMessages the messages
	// they stored, PutBytes the record bytes; PutFailures the refused ones;
	// FlushTimeouts the puts answered FLUSH_DISK_TIMEOUT.
	Puts, PutMessages, PutBytes, PutFailures, FlushTimeouts uint64
	// Gets counts GetMessage calls, GetMessages/GetBytes what they served,
	// GetStatus the calls per GetMessageStatus, GetCorrupt the records
	// refused by verification.
	Gets, GetMessages, GetBytes, GetCorrupt uint64
	GetStatus                               map[string]uint64
	// CommitLog holds appends, bytes, lock hold times, busy refusals, the
	// write path's segment stats and the written/flushed offsets (its Flush
	// field is the same as Flush).
	CommitLog commitlog.Stats
	// Flush is the commit log's flush policy: flushes, flush time (latency),
	// group-commit batch sizes, timeouts.
	Flush flush.Stats
	// Dispatch: records dispatched; DispatchBehindBytes is the current lag
	// behind the written end; DispatchLastDelay/DispatchMaxDelay the time
	// between a record's store timestamp and its dispatch (ms resolution).
	DispatchedRecords   uint64
	DispatchedOffset    int64
	DispatchBehindBytes int64
	DispatchLastDelay   time.Duration
	DispatchMaxDelay    time.Duration
	DispatchErrors      uint64
	// IndexErrors counts failed index writes (a new index file that did
	// not fit the disk, ...) and IndexSkippedRecords the records dispatched
	// without their index entries meanwhile: dispatch does not wait for the
	// index, as in RocketMQ; those records are not found by key.
	IndexErrors, IndexSkippedRecords uint64
	// DispatchSkips counts the times the dispatcher found its position
	// below the commit log's min offset and jumped to it, and
	// DispatchSkippedBytes the commit-log bytes so never dispatched
	// (their messages are in no consume queue). The cleaner never deletes
	// undispatched segments, so this means segments vanished some other
	// way (deleted by hand under a running store); it stays 0 in normal
	// operation. A slave's first copy starting at its master's segment
	// boundary is not a skip.
	DispatchSkips        uint64
	DispatchSkippedBytes uint64
	// ReadCache is the direct path's block cache (zero without one).
	ReadCache iopath.CacheStats
	// SegmentsCleaned counts commit-log segments removed by cleaning;
	// CleanWaitsForDispatch the cleaning passes that left a segment due
	// for deletion because the dispatcher had not passed it yet (CleanOnce);
	// DiskFull is the current state.
	SegmentsCleaned       uint64
	CleanWaitsForDispatch uint64
	DiskFull              bool
}

// Stats returns a snapshot of the counters.
func (s *Store) Stats() Stats {
	st := Stats{
		Puts:                  s.st.puts.Load(),
		PutMessages:           s.st.putMessages.Load(),
		PutBytes:              s.st.putBytes.Load(),
		PutFailures:           s.st.putFailures.Load(),
		FlushTimeouts:         s.st.flushTimeouts.Load(),
		Gets:                  s.st.gets.Load(),
		GetMessages:           s.st.getMessages.Load(),
		GetBytes:              s.st.getBytes.Load(),
		GetCorrupt:            s.st.getCorrupt.Load(),
		GetStatus:             map[string]uint64{},
		CommitLog:             s.log.Stats(),
		Flush:                 s.log.Stats().Flush,
		DispatchedRecords:     s.disp.records.Load(),
		DispatchedOffset:      s.disp.from.Load(),
		DispatchBehindBytes:   s.DispatchBehindBytes(),
		DispatchLastDelay:     time.Duration(s.disp.lastDelay.Load()),
		DispatchMaxDelay:      time.Duration(s.disp.maxDelay.Load()),
		DispatchErrors:        s.disp.errors.Load(),
		IndexErrors:           s.disp.indexErrors.Load(),
		IndexSkippedRecords:   s.disp.indexSkipped.Load(),
		DispatchSkips:         s.disp.skips.Load(),
		DispatchSkippedBytes:  s.disp.skippedBytes.Load(),
		SegmentsCleaned:       s.st.segmentsCleaned.Load(),
		CleanWaitsForDispatch: s.st.cleanDispatchWaits.Load(),
		DiskFull:              s.diskFull.Load(),
	}
	for i := range s.st.getStatus {
		if n := s.st.getStatus[i].Load(); n > 0 {
			st.GetStatus[GetMessageStatus(i).String()] = n
		}
	}
	if s.cache != nil {
		st.ReadCache = s.cache.Stats()
	}
	return st
}

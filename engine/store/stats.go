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
	// ReadCache is the direct path's block cache (zero without one).
	ReadCache iopath.CacheStats
	// SegmentsCleaned counts commit-log segments removed by cleaning;
	// DiskFull is the current state.
	SegmentsCleaned uint64
	DiskFull        bool
}

// Stats returns a snapshot of the counters.
func (s *Store) Stats() Stats {
	st := Stats{
		Puts:                s.st.puts.Load(),
		PutMessages:         s.st.putMessages.Load(),
		PutBytes:            s.st.putBytes.Load(),
		PutFailures:         s.st.putFailures.Load(),
		FlushTimeouts:       s.st.flushTimeouts.Load(),
		Gets:                s.st.gets.Load(),
		GetMessages:         s.st.getMessages.Load(),
		GetBytes:            s.st.getBytes.Load(),
		GetCorrupt:          s.st.getCorrupt.Load(),
		GetStatus:           map[string]uint64{},
		CommitLog:           s.log.Stats(),
		Flush:               s.log.Stats().Flush,
		DispatchedRecords:   s.disp.records.Load(),
		DispatchedOffset:    s.disp.from.Load(),
		DispatchBehindBytes: s.DispatchBehindBytes(),
		DispatchLastDelay:   time.Duration(s.disp.lastDelay.Load()),
		DispatchMaxDelay:    time.Duration(s.disp.maxDelay.Load()),
		DispatchErrors:      s.disp.errors.Load(),
		SegmentsCleaned:     s.st.segmentsCleaned.Load(),
		DiskFull:            s.diskFull.Load(),
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

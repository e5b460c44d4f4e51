package store

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
)

// indexVouch is the queue of full index files whose end time the checkpoint
// may not vouch for yet.
//
// The dispatcher indexes records as soon as they are written, before the
// commit log flushes them, and a full index file is msynced at once. Had the
// checkpoint's indexMsgTimestamp covered such a file right away, a power cut
// that took the newest records from the log would leave a durable index file
// naming them, vouched for: recovery would keep it, and records re-appended
// at those offsets would be skipped as already indexed. So a full file's end
// time enters indexTS only once the commit log is durable past its written
// end at the time the file was reported (which covers every record the file
// names).
//
// Concurrency: mu guards pending; reports arrive from the index service's
// background goroutine, advances from the reput and checkpoint loops.
type indexVouch struct {
	// logOpen is set once recovery has opened the commit log: reports
	// from the index's goroutine read s.log only after seeing it.
	logOpen atomic.Bool
	mu      sync.Mutex
	pending []vouchEntry // in report order: need and ts non-decreasing
}

type vouchEntry struct {
	ts   int64 // the full file's endTimestamp
	need int64 // commit-log offset that must be flushed first
}

// needUnknown marks a file reported while recovery scans the log (before the
// log is open); recovery replaces it with the recovered end.
const needUnknown = math.MaxInt64

// onIndexFileFull is the index service's OnFileFull: the file is msynced;
// its end time is vouched for once the log is durable past it.
func (s *Store) onIndexFileFull(endTS int64) {
	s.vouch.mu.Lock() // read logOpen under mu: settleRecoveredVouches sets it there
	need := int64(needUnknown)
	open := s.vouch.logOpen.Load()
	if open {
		// The written end covers every record dispatched so far (the
		// dispatcher's own position may still trail the chunk that
		// filled the file).
		need = s.log.MaxOffset()
	}
	s.vouch.pending = append(s.vouch.pending, vouchEntry{ts: endTS, need: need})
	s.vouch.mu.Unlock()
	if !open {
		return
	}
	if s.advanceIndexTS() {
		if err := s.writeCheckpoint(); err != nil && !errors.Is(err, ErrClosed) {
			s.cfg.Logger.Error("store: checkpoint after index flush", "err", err)
		}
	}
}

// settleRecoveredVouches gives files reported during the recovery scan the
// recovered end as the offset they wait for.
func (s *Store) settleRecoveredVouches(end int64) {
	s.vouch.mu.Lock()
	defer s.vouch.mu.Unlock()
	s.vouch.logOpen.Store(true)
	for i := range s.vouch.pending {
		if s.vouch.pending[i].need == needUnknown {
			s.vouch.pending[i].need = end
		}
	}
}

// advanceIndexTS moves indexTS to the newest reported full file the commit
// log is durable past; true if it moved.
func (s *Store) advanceIndexTS() bool {
	if !s.vouch.logOpen.Load() {
		return false
	}
	flushed := s.log.FlushedOffset()
	s.vouch.mu.Lock()
	defer s.vouch.mu.Unlock()
	p := s.vouch.pending
	i := 0
	for i < len(p) && p[i].need <= flushed {
		maxStore(&s.indexTS, p[i].ts)
		i++
	}
	if i > 0 {
		s.vouch.pending = append(p[:0], p[i:]...)
	}
	return i > 0
}

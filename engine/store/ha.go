package store

import (
	"errors"
	"fmt"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/record"
)

// Replication (RocketMQ's classic master–slave HA, package engine/ha) needs
// four things from a store:
//
//   - on the master, ReplicaRead: committed commit-log bytes at an offset,
//     shipped verbatim in frames, and CheckReplicaOffset: whether a slave's
//     reported offset is a place in this log a stream can start from;
//   - on the slave, ReplicaAppend: the master's bytes written at the same
//     offsets through the commit log (segments roll exactly where the
//     master's did, since the bytes include its end-of-file blanks), after
//     which the dispatcher builds the slave's own consume queues and index
//     from them; and ReplicaOffset, the offset the slave reports.
//
// A store becomes a slave with SetSlave(true): puts are then refused with
// SERVICE_NOT_AVAILABLE (ErrSlave), as RocketMQ refuses puts on a SLAVE.
//
// Divergence. Classic HA never truncates. If a slave's log is ahead of its
// master's (the master lost an unflushed tail in a power cut, or restarted
// from an older copy), or its offset falls inside a master record,
// CheckReplicaOffset reports ErrReplicaAhead or ErrReplicaDiverged and
// the master refuses to stream to it (RocketMQ's master would keep sending
// heartbeats and the slave would silently stall; a master that later grew
// past the slave's offset would even stream the middle of a record). An
// operator must then rebuild that slave from an empty store.

// Replication errors.
var (
	// ErrSlave is the cause of SERVICE_NOT_AVAILABLE for a put on a slave.
	ErrSlave = errors.New("store: messages are put to the slave; send them to its master")
	// ErrReplicaAhead: a slave reported an offset beyond this log's end.
	ErrReplicaAhead = errors.New("store: the slave's log is ahead of this master's")
	// ErrReplicaBehind: a slave reported an offset below this log's first
	// segment (cleaned): it can never catch up.
	ErrReplicaBehind = errors.New("store: the slave's offset was cleaned from this master's log")
	// ErrReplicaDiverged: a slave's offset is not a record boundary here, or
	// replicated bytes are not a valid log at their offsets.
	ErrReplicaDiverged = commitlog.ErrRawDiverged
)

// SetSlave makes the store a replica (puts refused, ReplicaAppend allowed)
// or a master again.
func (s *Store) SetSlave(on bool) { s.slave.Store(on) }

// IsSlave reports whether the store is a replica.
func (s *Store) IsSlave() bool { return s.slave.Load() }

// ReplicaOffset is the offset a slave reports to its master: one past the
// last byte it has stored (records cut in half by the stream included; they
// are served once complete).
func (s *Store) ReplicaOffset() int64 { return s.log.RawEnd() }

// MaxPhyOffset is the commit log's published end (getMaxPhyOffset).
func (s *Store) MaxPhyOffset() int64 { return s.log.MaxOffset() }

// MinPhyOffset is the first commit-log offset still stored.
func (s *Store) MinPhyOffset() int64 { return s.log.MinOffset() }

// ReplicaAppend stores bytes received from the master at physical offset
// off, which must equal ReplicaOffset (or, on an empty store, a segment
// boundary where the copy starts), and wakes the dispatcher. The store must
// be a slave. Errors wrap commitlog.ErrRawOffset (nothing written),
// ErrReplicaDiverged or a write error (both sticky: the slave's log is no
// longer writable), ErrClosed.
func (s *Store) ReplicaAppend(off int64, p []byte) error {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if !s.slave.Load() {
		return fmt.Errorf("store: replica append on a master")
	}
	err := s.log.AppendRaw(off, p)
	s.wakeDispatcher()
	return err
}

// ReplicaRead copies commit-log bytes at off into p for a slave: only bytes
// that survive a crash of this process (the committed offset), at most to
// the end of off's segment, so one frame never spans two segments. It
// returns 0 and no error when nothing new is there.
func (s *Store) ReplicaRead(p []byte, off int64) (int, error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		return 0, ErrClosed
	}
	return s.log.ReadRaw(p, off, s.log.CommittedOffset())
}

// ReplicaStart is where a master starts streaming to a slave that reported
// off: off itself after CheckReplicaOffset accepts it; for an empty slave
// (0) the start of this log's last segment (RocketMQ: a fresh slave never
// receives older segments) or, with fullCopy, its first segment.
func (s *Store) ReplicaStart(off int64, fullCopy bool) (int64, error) {
	if off != 0 {
		return off, s.CheckReplicaOffset(off)
	}
	if fullCopy {
		return s.log.MinOffset(), nil
	}
	maxOff := s.log.MaxOffset()
	return max(0, maxOff-maxOff%s.log.SegmentSize(), s.log.MinOffset()), nil
}

// CheckReplicaOffset reports whether a stream to a slave can start at off:
// off must lie in [MinPhyOffset, MaxPhyOffset] and be a record boundary of
// this log (the end, a segment start, an end-of-file blank or a record whose
// PHYSICALOFFSET is off).
func (s *Store) CheckReplicaOffset(off int64) error {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		return ErrClosed
	}
	maxOff, minOff := s.log.MaxOffset(), s.log.MinOffset()
	switch {
	case off > maxOff:
		return fmt.Errorf("%w: slave at %d, master's log ends at %d", ErrReplicaAhead, off, maxOff)
	case off < minOff:
		return fmt.Errorf("%w: slave at %d, master's log starts at %d", ErrReplicaBehind, off, minOff)
	case off == maxOff || off%s.log.SegmentSize() == 0:
		return nil
	}
	_, rec, err := s.log.ReadRecord(off, nil)
	if errors.Is(err, record.ErrBlank) {
		segEnd := s.log.RollNextFile(off)
		if int64(rec.TotalSize) == segEnd-off {
			return nil
		}
		return fmt.Errorf("%w: blank of %d bytes at %d", ErrReplicaDiverged, rec.TotalSize, off)
	}
	if err != nil {
		return fmt.Errorf("%w: slave at %d: %w", ErrReplicaDiverged, off, err)
	}
	if rec.PhysicalOffset != off {
		return fmt.Errorf("%w: slave at %d, the record there says %d", ErrReplicaDiverged, off, rec.PhysicalOffset)
	}
	return nil
}

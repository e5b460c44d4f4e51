package index

import (
	"errors"
	"fmt"
)

// DeleteBelowPhy removes the oldest files whose endPhyOffset < minPhy, the
// commit log's new minimum offset, stopping at the first that is not; the
// last file is never removed (RocketMQ deleteExpiredFile). It returns the
// number of files removed.
func (s *Service) DeleteBelowPhy(minPhy int64) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	s.mu.Lock()
	n := 0
	for n < len(s.files)-1 && s.files[n].endPhy.Load() < minPhy {
		n++
	}
	removed := s.files[:n:n]
	s.files = append([]*file(nil), s.files[n:]...)
	s.mu.Unlock()
	return n, s.destroy(removed)
}

// DeleteNewerThan removes every file whose endTimestamp > ts, the last one
// included: RocketMQ's load after an abnormal exit, with ts the checkpoint's
// indexMsgTimestamp (data in such files may not have reached the disk). It
// returns the number of files removed; the next Put starts a fresh file.
func (s *Service) DeleteNewerThan(ts int64) (int, error) {
	return s.removeWhere(func(x *file, _ bool) bool { return x.endTS.Load() > ts })
}

// removeWhere removes the files drop picks, called on each file oldest
// first (last: it is the newest), and returns how many it removed.
func (s *Service) removeWhere(drop func(x *file, last bool) bool) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	s.mu.Lock()
	var kept, removed []*file
	for i, x := range s.files {
		if drop(x, i == len(s.files)-1) {
			removed = append(removed, x)
		} else {
			kept = append(kept, x)
		}
	}
	s.files = kept
	s.mu.Unlock()
	return len(removed), s.destroy(removed)
}

// TruncateFromPhy removes every entry whose phyOffset >= phyEnd, the end of
// the recovered commit log, so the records there can be re-indexed: newest
// file first, a file whose first entry is cut (or an empty file seeded at or
// beyond phyEnd) is removed; in the first file that keeps entries the cut
// entries are unlinked from their buckets and zeroed, and the header's end
// fields move to the last kept entry (its endTimestamp then has the
// entries' one-second precision).
func (s *Service) TruncateFromPhy(phyEnd int64) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.mu.Lock()
	var removed []*file
	for len(s.files) > 0 {
		x := s.files[len(s.files)-1]
		var drop bool
		if x.count.Load() <= 1 {
			drop = x.endPhy.Load() >= phyEnd
		} else {
			drop = x.readEntry(1).phy >= phyEnd
		}
		if !drop {
			if x.count.Load() > 1 && x.endPhy.Load() >= phyEnd {
				x.truncateFrom(phyEnd)
			}
			break
		}
		removed = append(removed, x)
		s.files = s.files[:len(s.files)-1]
	}
	s.mu.Unlock()
	return s.destroy(removed)
}

// destroy unlinks files already taken out of the list and drops their owner
// references (a background flush holding one unmaps when it finishes).
// REQUIRES: s.wmu held.
func (s *Service) destroy(files []*file) error {
	var errs []error
	for _, x := range files {
		if err := s.fsys.Remove(x.path); err != nil {
			errs = append(errs, fmt.Errorf("index: remove %s: %w", x.path, err))
		}
		errs = append(errs, x.release())
	}
	if len(files) > 0 {
		errs = append(errs, s.fsys.SyncDir(s.dir))
	}
	return errors.Join(errs...)
}

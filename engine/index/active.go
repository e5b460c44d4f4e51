package index

// DeleteUnsafe removes, after an abnormal exit, the files whose content on
// disk is unknown although they survive DeleteNewerThan(ts), ts being the
// checkpoint's indexMsgTimestamp. Full files are msynced in the order they
// filled, and the checkpoint names one only once it and every earlier one
// are durable; but files are told apart by millisecond end times, so
//
//   - of several files ending exactly at ts only the oldest is surely
//     durable (the one the checkpoint named may be any of them): the others
//     go;
//   - the last file, if not full, was never msynced whole (its header may
//     be on disk without all of its entries, and a header claiming a later
//     end would make Put skip the records a recovery re-dispatches): it
//     goes.
//
// Call it after DeleteNewerThan(ts). The records of the removed files were
// all stored at or after ts, so a recovery that re-dispatches from the
// newest segment whose first record is older than ts indexes them again
// (the store does so with MessageIndexSafe). It returns the number of files
// removed.
func (s *Service) DeleteUnsafe(ts int64) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	s.mu.Lock()
	var kept, removed []*file
	seenTie := false
	for i, x := range s.files {
		switch {
		case x.endTS.Load() == ts && seenTie:
			removed = append(removed, x)
		case i == len(s.files)-1 && !x.full():
			removed = append(removed, x)
		default:
			seenTie = seenTie || x.endTS.Load() == ts
			kept = append(kept, x)
		}
	}
	s.files = kept
	s.mu.Unlock()
	return len(removed), s.destroy(removed)
}

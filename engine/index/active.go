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
	seenTie := false
	return s.removeWhere(func(x *file, last bool) bool {
		tie := x.endTS.Load() == ts
		if tie && seenTie || last && !x.full() {
			return true
		}
		seenTie = seenTie || tie
		return false
	})
}

package index

// DeleteActive removes the last file if it is not full. An index file is
// msynced whole only when it fills (and at Close), so after an abnormal exit
// the active file's content on disk is unknown: its header may have been
// written back without all of its entries, and a header claiming a later
// end would make Put skip the records a recovery re-dispatches. The store
// calls it with MessageIndexSafe, whose recovery re-dispatches from before
// the file began. It returns the number of files removed (0 or 1).
func (s *Service) DeleteActive() (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	s.mu.Lock()
	if len(s.files) == 0 || s.files[len(s.files)-1].full() {
		s.mu.Unlock()
		return 0, nil
	}
	last := s.files[len(s.files)-1]
	s.files = s.files[:len(s.files)-1]
	s.mu.Unlock()
	return 1, s.destroy([]*file{last})
}

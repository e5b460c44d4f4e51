package proxy

// RenewedLeases counts the successful lease renewals (tests).
func (s *Server) RenewedLeases() int64 {
	s.leases.mu.Lock()
	defer s.leases.mu.Unlock()
	return s.leases.renewed
}

package broker

// Stats are the broker's counters of what it met on the wire and what is
// waiting in it. Safe to call at any time after New.
type Stats struct {
	// BadRequests were well framed but answered with an error because of
	// what they carried: a header member of the wrong type, a missing or
	// malformed custom field, a body that does not decode (SYSTEM_ERROR), an
	// unknown request code (REQUEST_CODE_NOT_SUPPORTED). Their connections
	// stayed open.
	BadRequests uint64
	// BadInputCloses are connections closed on a framing error (length out
	// of limits, unknown serialize type, a header that is not a JSON object
	// or a valid ROCKETMQ header) or a frame the peer cut off.
	BadInputCloses uint64
	// HeldPulls are pulls parked by long polling; QueuedSends are sends
	// waiting for a send worker.
	HeldPulls   int
	QueuedSends int
}

// Stats returns the broker's current counters.
func (b *Broker) Stats() Stats {
	rs := b.server.Stats()
	return Stats{
		BadRequests:    rs.BadRequests,
		BadInputCloses: rs.BadInputCloses,
		HeldPulls:      b.holds.held(),
		QueuedSends:    b.sendQ.len(),
	}
}

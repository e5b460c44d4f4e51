package delay

import (
	"github.com/brokerlab/brokerlab/engine/protocol"
)

// TimerStats is a snapshot of the timer service (the timer rows of
// mqadmin brokerStatus and the timer metrics). Safe to call at any time.
type TimerStats struct {
	// Enabled is TimerEnable on a master (a slave runs no timer service).
	Enabled bool
	// Pending is how many parked timer messages the service knows to be
	// undelivered: the loaded ones plus those beyond the window counted at
	// the last scan (approximate after the index shrank).
	Pending int64
	// Loaded is how many pending messages are indexed in memory.
	Loaded int64
	// Delivered counts the messages stored in their topics since start.
	Delivered int64
	// OffsetBehind is how many arrived timer messages the service has not
	// read yet (Java's timerOffsetBehind).
	OffsetBehind int64
	// RescanRecords counts the records read again to load later windows
	// (the cost of messages due beyond TimerLoadWindow).
	RescanRecords int64
	// Recalled counts the messages a delete marker (RECALL_MESSAGE) kept
	// from delivery since start.
	Recalled int64
}

// TimerStats returns the timer service's statistics (zero before Start or
// when the timer is not running).
func (s *Service) TimerStats() TimerStats {
	t := s.timer
	if t == nil || !t.started.Load() {
		return TimerStats{}
	}
	return TimerStats{Enabled: true, Pending: t.pending.Load(), Loaded: t.loaded.Load(), Delivered: t.delivered.Load(),
		RescanRecords: t.rescanRecords.Load(), Recalled: t.recalled.Load(),
		OffsetBehind: max(0, s.store.MaxOffset(protocol.TimerTopic, TimerMessageQueue)-t.scannedStat.Load())}
}

package broker

import (
	"strconv"
	"time"

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
}

// TimerStats returns the timer service's statistics (zero before Start).
func (b *Broker) TimerStats() TimerStats {
	s := b.timer
	if s == nil || !s.started.Load() {
		return TimerStats{}
	}
	st := TimerStats{Enabled: true, Pending: s.pending.Load(), Loaded: s.loaded.Load(), Delivered: s.delivered.Load(),
		RescanRecords: s.rescanRecords.Load()}
	if b.store != nil {
		st.OffsetBehind = max(0, b.store.MaxOffset(protocol.TimerTopic, timerMessageQueue)-s.scannedStat.Load())
	}
	return st
}

// timerProperties are the timer and lite pull settings under Java's key
// names, for GET_BROKER_CONFIG.
func (b *Broker) timerProperties() map[string]string {
	c := b.cfg
	return map[string]string{
		"timerWheelEnable":                strconv.FormatBool(c.TimerEnable),
		"timerPrecisionMs":                strconv.FormatInt(c.TimerPrecision.Milliseconds(), 10),
		"timerMaxDelaySec":                strconv.FormatInt(int64(c.TimerMaxDelay/time.Second), 10),
		"timerFlushIntervalMs":            strconv.FormatInt(c.TimerFlushInterval.Milliseconds(), 10),
		"litePullMessageEnable":           strconv.FormatBool(c.LitePullEnable),
		"litePullMessageThreadPoolNums":   strconv.FormatInt(int64(c.LitePullExecutor.Workers), 10),
		"litePullThreadPoolQueueCapacity": strconv.FormatInt(int64(c.LitePullExecutor.QueueSize), 10),
	}
}

package delay

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// Queues of TimerTopic.
const (
	TimerMessageQueue    int32 = 0 // timer messages, in arrival order
	TimerCheckpointQueue int32 = 1 // the service's checkpoints, newest last
	TimerQueueNums             = 2
)

// timerCheckpoint is the timer service's persisted progress (Java keeps the
// like in its timercheck file). It is stored as a record of its own in
// TimerTopic's queue 1, so it lives in the commit log behind the deliveries
// it covers: whatever prefix of the log survives a crash, a checkpoint that
// survived has every delivery it counts survive too (the store's flush
// policy applies to it; it is written without WAIT=false).
//
// The body is JSON:
//
//	{"v":1,"deliveredDueMs":D,"deliveredOffset":O,"scannedOffset":S,"lowOffset":L,"writtenMs":T}
//
// stating, about queue 0 of TimerTopic: every message at a queue offset
// below L was delivered; every message at an offset below S whose
// (TIMER_OUT_MS, offset) is at most (D, O) in lexical order was delivered
// (the service delivers in that order); nothing else is claimed. A broker
// that finds no checkpoint starts from queue 0's min offset with nothing
// delivered. T is the broker's clock when written (informational).
type timerCheckpoint struct {
	Version         int   `json:"v"`
	DeliveredDueMS  int64 `json:"deliveredDueMs"`
	DeliveredOffset int64 `json:"deliveredOffset"`
	ScannedOffset   int64 `json:"scannedOffset"`
	LowOffset       int64 `json:"lowOffset"`
	WrittenMS       int64 `json:"writtenMs"`
}

const timerCheckpointVersion = 1

// emptyTimerCheckpoint claims nothing delivered below low.
func emptyTimerCheckpoint(low int64) timerCheckpoint {
	return timerCheckpoint{Version: timerCheckpointVersion, DeliveredDueMS: math.MinInt64, DeliveredOffset: -1,
		ScannedOffset: low, LowOffset: low}
}

// sameProgress reports whether c and o state the same progress.
func (c timerCheckpoint) sameProgress(o timerCheckpoint) bool {
	return c.DeliveredDueMS == o.DeliveredDueMS && c.DeliveredOffset == o.DeliveredOffset &&
		c.ScannedOffset == o.ScannedOffset && c.LowOffset == o.LowOffset
}

// delivered reports whether the checkpoint says e was delivered.
func (c timerCheckpoint) delivered(e timerEntry) bool {
	if e.off < c.LowOffset {
		return true
	}
	return e.off < c.ScannedOffset && !(timerEntry{c.DeliveredDueMS, c.DeliveredOffset}).less(e)
}

func decodeTimerCheckpoint(body []byte) (timerCheckpoint, error) {
	var c timerCheckpoint
	if err := json.Unmarshal(body, &c); err != nil {
		return c, fmt.Errorf("delay: timer checkpoint: %w", err)
	}
	if c.Version != timerCheckpointVersion {
		return c, fmt.Errorf("delay: timer checkpoint version %d, want %d", c.Version, timerCheckpointVersion)
	}
	if c.LowOffset < 0 || c.ScannedOffset < c.LowOffset {
		return c, fmt.Errorf("delay: timer checkpoint offsets low %d scanned %d are inconsistent", c.LowOffset, c.ScannedOffset)
	}
	return c, nil
}

// readTimerCheckpoint returns the newest decodable checkpoint in queue 1
// (looking back over a few in case the newest is damaged), or ok false.
func (s *timerService) readCheckpoint() (timerCheckpoint, bool) {
	st := s.store
	minOff := st.MinOffset(protocol.TimerTopic, TimerCheckpointQueue)
	maxOff := st.MaxOffset(protocol.TimerTopic, TimerCheckpointQueue)
	for off := maxOff - 1; off >= minOff && off >= 0 && off >= maxOff-16; off-- {
		res := st.Read(protocol.TimerTopic, protocol.TimerTopic, TimerCheckpointQueue, off, 1)
		if res.Status != ReadFound {
			continue
		}
		rec, err := record.Decode(res.Buffer, false)
		if err == nil {
			var c timerCheckpoint
			if c, err = decodeTimerCheckpoint(rec.Body); err == nil {
				return c, true
			}
		}
		s.log.Warn("timer checkpoint unreadable, trying the one before", "offset", off, "err", err)
	}
	return timerCheckpoint{}, false
}

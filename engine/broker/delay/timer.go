package delay

import (
	"fmt"
	"strconv"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Timer message properties (MessageConst). A producer sets one of
// TIMER_DELIVER_MS (absolute, ms since the epoch), TIMER_DELAY_SEC or
// TIMER_DELAY_MS (relative to the broker's clock at arrival); the broker adds
// TIMER_OUT_MS (the delivery slot) when it diverts the message to TimerTopic,
// and TIMER_ENQUEUE_MS / TIMER_DEQUEUE_MS to the copy it delivers.
const (
	PropertyTimerDeliverMS = "TIMER_DELIVER_MS"
	PropertyTimerDelaySec  = "TIMER_DELAY_SEC"
	PropertyTimerDelayMS   = "TIMER_DELAY_MS"
	PropertyTimerOutMS     = "TIMER_OUT_MS"
	PropertyTimerEnqueueMS = "TIMER_ENQUEUE_MS"
	PropertyTimerDequeueMS = "TIMER_DEQUEUE_MS"
	PropertyTimerDelUniq   = "TIMER_DEL_UNIQKEY"
)

// isTimerMessage reports whether props ask for timer delivery: one of the
// three TIMER_* request properties and no TIMER_OUT_MS (a message the timer
// already delivered, sent on again, is not timed twice: HookUtils'
// double check).
func isTimerMessage(props string) bool {
	if _, ok := record.Property(props, PropertyTimerOutMS); ok {
		return false
	}
	for _, name := range [...]string{PropertyTimerDeliverMS, PropertyTimerDelaySec, PropertyTimerDelayMS} {
		if _, ok := record.Property(props, name); ok {
			return true
		}
	}
	return false
}

// DivertTimer diverts a message carrying TIMER_DELIVER_MS / TIMER_DELAY_SEC /
// TIMER_DELAY_MS to the timer store, or refuses it; nil means "store as is".
//
// As HookUtils.handleScheduleMessage: a DELAY level wins (applyDelay already
// moved the message to the schedule topic; its timer properties are
// dropped); half and rollback transaction messages are left alone (the
// commit is timed); TIMER_DELAY_SEC is read first, then TIMER_DELAY_MS, then
// TIMER_DELIVER_MS. Unlike Java, which rounds the due time down to the
// precision (delivering up to one precision early), the slot here is the due
// time rounded up: never early, at most one precision late. A due time not
// in the future is stored in its topic at once.
func (s *Service) DivertTimer(m *record.Message) *remoting.Command {
	if m.Topic == protocol.TimerTopic {
		return refusef(protocol.RespNoPermission, "sending message to topic[%s] is forbidden", m.Topic)
	}
	if !isTimerMessage(m.Properties) {
		return nil
	}
	if m.Topic == protocol.ScheduleTopic {
		m.Properties = record.RemoveProperties(m.Properties, PropertyTimerDeliverMS, PropertyTimerDelaySec, PropertyTimerDelayMS)
		return nil
	}
	if tt := record.TransactionType(m.SysFlag); tt == record.TransactionPrepared || tt == record.TransactionRollback {
		return nil
	}
	if !s.cfg.TimerEnable {
		return refusef(protocol.RespSystemError, "accurate timer message is not enabled, timerWheelEnable is false")
	}
	now := time.Now().UnixMilli()
	deliver, err := timerDeliverMS(m.Properties, now)
	if err != nil {
		return refusef(protocol.RespMessageIllegal, "timer message illegal: %v", err)
	}
	if deliver <= now {
		if _, ok := record.Property(m.Properties, PropertyTimerDelUniq); ok {
			return refusef(protocol.RespMessageIllegal, "timer message illegal: a delete (%s) must be due in the future", PropertyTimerDelUniq)
		}
		return nil
	}
	if maxMS := s.cfg.TimerMaxDelay.Milliseconds(); deliver-now > maxMS {
		return refusef(protocol.RespMessageIllegal,
			"timer message illegal, the delay time should not be bigger than the max delay %dms (timerMaxDelaySec), asked %dms", maxMS, deliver-now)
	}
	slot := timerSlot(deliver, s.cfg.TimerPrecision.Milliseconds())
	props := record.AppendProperty([]byte(m.Properties), PropertyTimerOutMS, strconv.FormatInt(slot, 10))
	props = record.AppendProperty(props, record.PropertyRealTopic, m.Topic)
	props = record.AppendProperty(props, record.PropertyRealQueueID, strconv.Itoa(int(m.QueueID)))
	m.Properties = string(props)
	m.Topic, m.QueueID = protocol.TimerTopic, TimerMessageQueue
	return nil
}

// RefuseTimerInBatch answers a batch item for the timer topic or one that
// asks for timer delivery:
// batches are stored as one unit and cannot be timed per item (Java ignores
// the properties and delivers at once; refusing is never early).
func RefuseTimerInBatch(m *record.Message) *remoting.Command {
	if m.Topic == protocol.TimerTopic {
		return refusef(protocol.RespNoPermission, "sending message to topic[%s] is forbidden", m.Topic)
	}
	if isTimerMessage(m.Properties) {
		return refusef(protocol.RespMessageIllegal, "timer message illegal: a batch cannot carry %s/%s/%s",
			PropertyTimerDeliverMS, PropertyTimerDelaySec, PropertyTimerDelayMS)
	}
	return nil
}

// timerDeliverMS is the absolute due time of a timer message.
func timerDeliverMS(props string, now int64) (int64, error) {
	parse := func(name string) (int64, bool, error) {
		v, ok := record.Property(props, name)
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, true, fmt.Errorf("%s %q is not an integer", name, v)
		}
		return n, true, nil
	}
	if n, ok, err := parse(PropertyTimerDelaySec); ok || err != nil {
		if n > (1<<62)/1000 || n < -(1<<62)/1000 {
			return 0, fmt.Errorf("%s %d is out of range", PropertyTimerDelaySec, n)
		}
		return now + n*1000, err
	}
	if n, ok, err := parse(PropertyTimerDelayMS); ok || err != nil {
		if n > 1<<62 || n < -(1<<62) {
			return 0, fmt.Errorf("%s %d is out of range", PropertyTimerDelayMS, n)
		}
		return now + n, err
	}
	n, _, err := parse(PropertyTimerDeliverMS)
	return n, err
}

// timerSlot rounds deliverMS up to a multiple of precisionMS.
func timerSlot(deliverMS, precisionMS int64) int64 {
	if precisionMS <= 1 {
		return deliverMS
	}
	return (deliverMS + precisionMS - 1) / precisionMS * precisionMS
}

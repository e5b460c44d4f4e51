package delay

import (
	"strconv"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// scheduleOffsetGroup is the consumer group under which the scheduler's
// progress through each level's queue is stored (Java's delayOffset.json),
// so delayed messages survive a restart and are delivered once per clean run.
const scheduleOffsetGroup = protocol.ScheduleTopic

// scheduler is ScheduleMessageService: one goroutine per delay level reads
// the level's queue of the schedule topic in order (every message of a level
// has the same delay, so the queue is in due order) and, once a message's
// store time plus the level's delay has passed, stores it again in its
// REAL_TOPIC and REAL_QID without the delay properties.
type scheduler struct {
	*env
	wakes []chan struct{}
	quit  chan struct{}
	wg    sync.WaitGroup
}

func newScheduler(e *env) *scheduler {
	s := &scheduler{env: e, quit: make(chan struct{})}
	s.wakes = make([]chan struct{}, len(s.cfg.DelayLevels))
	for i := range s.wakes {
		s.wakes[i] = make(chan struct{}, 1)
	}
	return s
}

func (s *scheduler) start() {
	for level := range s.wakes {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.run(int32(level))
		}()
	}
}

func (s *scheduler) stop() {
	close(s.quit)
	s.wg.Wait()
}

// wake tells a level's goroutine that its queue grew. It never blocks.
func (s *scheduler) wake(queueID int32) {
	if queueID >= 0 && int(queueID) < len(s.wakes) {
		select {
		case s.wakes[queueID] <- struct{}{}:
		default:
		}
	}
}

func (s *scheduler) run(queueID int32) {
	offset, ok := s.offsets.Query(scheduleOffsetGroup, protocol.ScheduleTopic, queueID)
	if !ok {
		offset = s.store.MinOffset(protocol.ScheduleTopic, queueID)
	}
	delay := s.cfg.DelayLevels[queueID]
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		wait := s.deliver(queueID, delay, &offset)
		if wait == 0 {
			select {
			case <-s.quit:
				return
			default:
				continue
			}
		}
		timer.Reset(wait)
		select {
		case <-s.quit:
			return
		case <-s.wakes[queueID]:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// deliver re-stores the due messages from *offset on and returns how long to
// wait before looking again (0: look again at once).
func (s *scheduler) deliver(queueID int32, delay time.Duration, offset *int64) time.Duration {

	check := s.cfg.ScheduleCheckInterval
	res := s.store.Read(scheduleOffsetGroup, protocol.ScheduleTopic, queueID, *offset, 32)
	switch res.Status {
	case ReadFound:
	case ReadOffsetTooSmall, ReadOffsetOverflowBadly:
		if res.NextBeginOffset == *offset {
			return check
		}
		s.log.Warn("schedule queue offset moved", "level", queueID+1, "from", *offset, "to", res.NextBeginOffset)
		*offset = res.NextBeginOffset
		s.offsets.Commit(scheduleOffsetGroup, protocol.ScheduleTopic, queueID, *offset)
		return 0
	default:
		return check
	}
	for buf := res.Buffer; len(buf) > 0; {
		rec, err := record.Decode(buf, false)
		if err != nil {
			s.log.Error("undecodable record in schedule queue, skipped", "level", queueID+1, "offset", *offset, "err", err)
			*offset++
			s.offsets.Commit(scheduleOffsetGroup, protocol.ScheduleTopic, queueID, *offset)
			return 0
		}
		buf = buf[rec.TotalSize:]
		if wait := time.Until(time.UnixMilli(rec.StoreTimestamp).Add(delay)); wait > 0 {
			return min(wait, check)
		}
		if !s.redeliver(&rec) {
			return check
		}
		*offset = rec.QueueOffset + 1
		s.offsets.Commit(scheduleOffsetGroup, protocol.ScheduleTopic, queueID, *offset)
	}
	return 0
}

// redeliver stores a due message in its real topic; false means "retry
// later" (the store refused it for a reason that may pass).
func (s *scheduler) redeliver(rec *record.Record) bool {
	return s.putToRealTopic("delayed", rec, rec.PhysicalOffset, func(props map[string]string) {
		delete(props, record.PropertyDelayTimeLevel)
	})
}

// putToRealTopic stores a parked message (delay level, timer) again in the
// topic and queue named by its REAL_TOPIC/REAL_QID properties, without
// them, after edit has adjusted the other properties. It reports whether
// the message is done with: stored, or dropped because it can never be
// stored (no real topic, refused as illegal); false means "retry later".
// what and off name the message in logs.
func (s *env) putToRealTopic(what string, rec *record.Record, off int64, edit func(props map[string]string)) bool {
	props := record.DecodeProperties(string(rec.Properties))
	topic := props[record.PropertyRealTopic]
	qid, err := strconv.Atoi(props[record.PropertyRealQueueID])
	if topic == "" || err != nil {
		s.log.Error(what+" message without REAL_TOPIC/REAL_QID dropped", "offset", off)
		return true
	}
	delete(props, record.PropertyRealTopic)
	delete(props, record.PropertyRealQueueID)
	edit(props)
	m := &record.Message{
		Topic: topic, QueueID: int32(qid), Flag: rec.Flag,
		SysFlag: rec.SysFlag &^ (record.FlagBornHostV6 | record.FlagStoreHostV6),
		Body:    rec.Body, Properties: record.EncodeProperties(props),
		BornTimestamp: rec.BornTimestamp, BornHost: rec.BornHost, StoreHost: s.storeHost,
		ReconsumeTimes: rec.ReconsumeTimes, PreparedTransactionOffset: rec.PreparedTransactionOffset,
	}
	res, err := s.store.Put(m)
	switch {
	case res.Stored:
		return true
	case res.Illegal:
		s.log.Error(what+" message refused by the store, dropped", "topic", topic, "err", err)
		return true
	default:
		s.log.Warn(what+" message not stored, will retry", "topic", topic, "status", res.Status, "err", err)
		return false
	}
}

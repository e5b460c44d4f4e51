package delay

import (
	"container/heap"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// timerService delivers the messages DivertTimer parked in TimerTopic's
// queue 0 (RocketMQ 5's TimerMessageStore, reduced): when a message's slot
// (TIMER_OUT_MS) has come it is stored again in its REAL_TOPIC / REAL_QID
// with the timer's delivery properties, keeping its UNIQ_KEY (the client's
// message id).
//
// Design. Queue 0 is in arrival order, not due order. One goroutine owns all
// state:
//
//   - an in-memory min-heap of (slot, queue offset) holding every scanned,
//     undelivered message due at or before the window end wend (about
//     now + TimerLoadWindow);
//   - scanned, the queue offset up to which queue 0 has been read;
//   - far, where the scanned messages due after wend lie: per slot bucket
//     of half a window, the range of their queue offsets (timer_far.go);
//     such messages are not in memory.
//
// New arrivals (woken by the store's arriving listener) are read from
// scanned on; when now comes within half a window of wend and far messages
// exist, the offset ranges of the buckets the new window reaches are read
// again to load it. A rescan so reads the messages due in the next half
// window and those stored among them, not the whole backlog; TimerStats'
// RescanRecords counts what it read. The heap is capped at
// TimerMaxLoaded entries: past it the window shrinks to the first half of
// the loaded due times, the rest become far again, and the next rescan
// waits until a quarter of the index is delivered. So memory is bounded by
// TimerMaxLoaded entries of 16 bytes (the slice up to twice that; entries
// already due are always kept and delivered at once) whatever the number
// of pending timers; the store keeps the messages themselves.
//
// Invariants between loop iterations (what progress() checkpoints): every
// message below min(far's smallest offset, the heap's offsets, scanned) was
// delivered; every scanned undelivered message is in the heap (due at or
// before wend) or due after wend and inside its far bucket's offset range;
// deliveries run in (slot, offset) order except for a
// message loaded after a later one was delivered (its slot passed before it
// was read), which is delivered at once and not claimed until then.
//
// Due messages are delivered in (slot, offset) order as soon as the clock
// reaches the slot (never before: DivertTimer rounds the due time up to the
// precision). Progress is checkpointed (timer_checkpoint.go) every
// TimerFlushInterval when it changed and at shutdown, so a clean restart
// delivers each message exactly once; after a crash the messages delivered
// since the surviving checkpoint are delivered again (at least once, as
// Java). A message whose slot passed while the broker was down is delivered
// as soon as it is loaded again.
//
// Limits: the timer messages live in the commit log, so one older than the
// store's retention (fileReservedTime, 72 h by default, the same as
// timerMaxDelaySec) may be cleaned away before it is due; the checkpoint is
// rewritten at least hourly so retention never removes the newest one.
type timerService struct {
	*env
	wake    chan struct{}
	quit    chan struct{}
	done    chan struct{}
	once    sync.Once
	started atomic.Bool

	// Loop state, owned by the service goroutine.
	heap    timerHeap
	last    timerEntry // the greatest (slot, offset) delivered
	scanned int64
	wend    int64
	far     farIndex
	written timerCheckpoint
	wroteAt time.Time
	// deletes maps the TIMER_DEL_UNIQKEY of every delete marker read and
	// not yet due to its slot (recall.go): the message with that key and
	// slot is dropped when due.
	deletes map[string]int64

	// Statistics (TimerStats), written by the loop.
	delivered     atomic.Int64 // messages re-stored in their real topic
	loaded        atomic.Int64 // entries in the heap
	pending       atomic.Int64 // scanned, not yet delivered: heap plus far
	scannedStat   atomic.Int64 // scanned
	rescanRecords atomic.Int64 // records read by rescans
	recalled      atomic.Int64 // messages dropped by a delete marker
}

const (
	timerScanBatch         = 64
	timerRetryWait         = 100 * time.Millisecond
	timerCheckpointRefresh = time.Hour
	timerReadGroup         = protocol.TimerTopic // the group the service reads as (store statistics)
)

// timerEntry is a loaded message: its slot and its offset in queue 0.
type timerEntry struct{ due, off int64 }

func (a timerEntry) less(b timerEntry) bool {
	return a.due < b.due || (a.due == b.due && a.off < b.off)
}

type timerHeap []timerEntry

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].less(h[j]) }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(timerEntry)) }
func (h *timerHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func newTimerService(e *env) *timerService {
	return &timerService{env: e, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		deletes: make(map[string]int64)}
}

// start runs the service; stop ends it (writing a last checkpoint). A
// service never started is stopped at once.
func (s *timerService) start() {
	s.started.Store(true)
	go func() {
		defer close(s.done)
		s.run()
	}()
}

func (s *timerService) stop() {
	s.once.Do(func() { close(s.quit) })
	if s.started.Load() {
		<-s.done
	}
}

// notify tells the service queue 0 grew. It never blocks.
func (s *timerService) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func nowMS() int64 { return time.Now().UnixMilli() }

func (s *timerService) run() {
	s.recover()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		s.scanTail()
		s.extendWindow()
		retry := !s.deliverDue()
		s.checkpoint(false)

		wait := s.cfg.TimerFlushInterval
		now := nowMS()
		if len(s.heap) > 0 {
			wait = min(wait, time.Duration(s.heap[0].due-now)*time.Millisecond)
		}
		if len(s.far.buckets) > 0 {
			wait = min(wait, time.Duration(s.extendAt()-now)*time.Millisecond)
		}
		if retry {
			wait = min(wait, timerRetryWait)
		}
		if wait <= 0 {
			select {
			case <-s.quit:
				s.checkpoint(true)
				return
			default:
				continue
			}
		}
		timer.Reset(wait)
		select {
		case <-s.quit:
			s.checkpoint(true)
			return
		case <-s.wake:
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

func (s *timerService) window() int64 { return s.cfg.TimerLoadWindow.Milliseconds() }

// recover loads the checkpoint and the undelivered messages it implies.
func (s *timerService) recover() {
	st := s.store
	ck, ok := s.readCheckpoint()
	if !ok {
		ck = emptyTimerCheckpoint(st.MinOffset(protocol.TimerTopic, TimerMessageQueue))
	}
	s.written, s.wroteAt = ck, time.Now()
	s.last = timerEntry{ck.DeliveredDueMS, ck.DeliveredOffset}
	s.scanned = max(ck.LowOffset, st.MinOffset(protocol.TimerTopic, TimerMessageQueue))
	s.scannedStat.Store(s.scanned)
	s.wend = nowMS() + s.window()
	s.far = newFarIndex(s.window() / 2)
	s.scan(s.scanned, -1, math.MinInt64, func(e timerEntry, del string) { // [low, end): all not yet delivered
		if !ck.delivered(e) {
			s.admit(e, del)
		}
	})
	s.log.Info("timer service recovered", "checkpoint", ok, "low", ck.LowOffset, "scanned", s.scanned,
		"loaded", len(s.heap), "far", s.far.count)
}

// scanTail reads the messages that arrived since the last scan.
func (s *timerService) scanTail() {
	s.scan(s.scanned, -1, math.MinInt64, s.admit)
}

// extendWindow moves the window end to now + TimerLoadWindow once now is
// within half a window of it, loading the far messages that fall into the
// new window from the offset ranges of their buckets.
func (s *timerService) extendWindow() {
	now := nowMS()
	if now < s.extendAt() {
		return
	}
	old := s.wend
	s.wend = now + s.window()
	for _, r := range s.far.reaching(s.wend) {
		for from := r.lo; ; {
			from = s.scan(from, r.hi+1, old, s.load)
			if from > r.hi {
				break
			}
			// A read the store could not serve: the buckets stay (the
			// checkpoint's low offset keeps covering them); read again.
			select {
			case <-s.quit:
				return
			case <-time.After(timerRetryWait):
			}
		}
	}
	s.far.drop(s.wend) // a shrink during the rescan may have lowered wend: drop only what it covers
}

// load takes a message a rescan found due after the old window end: loaded
// if the new window reaches it, else it stays far (already indexed).
func (s *timerService) load(e timerEntry, del string) {
	s.noteDelete(del, e.due)
	if e.due > s.wend {
		return
	}
	s.far.count--
	s.push(e)
}

// extendAt is when the window is extended: half a window before its end,
// unless the index is more than a quarter full (after a shrink), then only
// one precision before its end, so a saturated index is rescanned once per
// quarter of it delivered rather than in a loop.
func (s *timerService) extendAt() int64 {
	if len(s.heap) > s.cfg.TimerMaxLoaded/4 {
		return s.wend - s.cfg.TimerPrecision.Milliseconds()
	}
	return s.wend - s.window()/2
}

// scan reads queue 0 from offset from: a rescan up to end (exclusive),
// passing fn only the messages due after above (with the message's
// TIMER_DEL_UNIQKEY, "" for all but delete markers); a tail scan (end < 0, from
// s.scanned) to the queue's end, advancing s.scanned. It returns the offset
// it stopped at: end (or more) when a rescan completed, less when the store
// could not serve a read (retry later). Messages the store cleaned away and
// corrupt records are skipped, logged.
func (s *timerService) scan(from, end, above int64, fn func(timerEntry, string)) int64 {
	st := s.store
	tail := end < 0
	advance := func(to int64) {
		if tail {
			s.scanned = to
			s.scannedStat.Store(to)
		}
	}
	off := from
	for tail || off < end {
		n := timerScanBatch
		if !tail {
			n = int(min(int64(n), end-off))
		}
		res := st.Read(timerReadGroup, protocol.TimerTopic, TimerMessageQueue, off, n)
		switch res.Status {
		case ReadFound:
		case ReadOffsetTooSmall, ReadOffsetOverflowBadly, ReadNoMatchedMessage, ReadMessageWasRemoving, ReadOffsetFoundNull:
			if res.NextBeginOffset <= off {
				return off // nothing to move on to (a read failure is retried)
			}
			if res.Status == ReadOffsetFoundNull {
				s.log.Error("unreadable record in the timer queue, skipped", "offset", off)
			} else {
				s.log.Warn("timer queue offset moved (messages cleaned before delivery?)", "from", off, "to", res.NextBeginOffset)
			}
			off = res.NextBeginOffset
			advance(off)
			continue
		default: // the end, or nothing readable yet
			return off
		}
		next := off
		for buf := res.Buffer; len(buf) > 0; {
			rec, err := record.Decode(buf, false)
			if err != nil {
				s.log.Error("undecodable record in the timer queue, skipped", "offset", next, "err", err)
				next++
				break
			}
			buf = buf[rec.TotalSize:]
			next = rec.QueueOffset + 1
			if !tail {
				s.rescanRecords.Add(1)
			}
			e := timerEntry{due: rec.StoreTimestamp, off: rec.QueueOffset}
			if v, ok := rec.Property(PropertyTimerOutMS); ok {
				if d, err := strconv.ParseInt(string(v), 10, 64); err == nil {
					e.due = d
				}
			}
			if e.due > above {
				del, _ := rec.Property(PropertyTimerDelUniq)
				fn(e, string(del))
			}
		}
		off = max(next, off+1)
		advance(off)
	}
	return off
}

// admit loads a newly read message if it is due within the window, else
// indexes it far; a delete marker's key is remembered.
func (s *timerService) admit(e timerEntry, del string) {
	s.noteDelete(del, e.due)
	if e.due > s.wend {
		s.far.add(e)
		s.pending.Store(int64(len(s.heap)) + s.far.count)
		return
	}
	s.push(e)
}

// push loads e, shrinking the window when the index is over its cap.
func (s *timerService) push(e timerEntry) {
	heap.Push(&s.heap, e)
	if len(s.heap) > s.cfg.TimerMaxLoaded {
		s.shrink()
	}
	s.loaded.Store(int64(len(s.heap)))
	s.pending.Store(int64(len(s.heap)) + s.far.count)
}

// shrink halves the loaded entries by moving the window end down; the
// entries after it become far. Entries already due are always kept.
func (s *timerService) shrink() {
	es := slices.Clone(s.heap)
	slices.SortFunc(es, func(a, b timerEntry) int {
		if a.less(b) {
			return -1
		}
		if b.less(a) {
			return 1
		}
		return 0
	})
	wend := max(es[len(es)/2].due-1, nowMS())
	s.heap = s.heap[:0]
	for _, e := range es {
		if e.due <= wend {
			s.heap = append(s.heap, e)
		} else {
			s.far.add(e)
		}
	}
	heap.Init(&s.heap)
	s.wend = wend
	s.log.Warn("timer index full, window shortened", "loaded", len(s.heap), "windowEnd", time.UnixMilli(wend))
}

// deliverDue stores every due message in its topic; false means a store
// refusal that may pass stopped it (retry soon).
func (s *timerService) deliverDue() bool {
	for len(s.heap) > 0 {
		select {
		case <-s.quit:
			return true
		default:
		}
		e := s.heap[0]
		if e.due > nowMS() {
			return true
		}
		done, counted := s.deliver(e)
		if !done {
			return false
		}
		heap.Pop(&s.heap)
		if s.last.less(e) {
			s.last = e
		}
		if counted {
			s.delivered.Add(1)
		}
		s.loaded.Store(int64(len(s.heap)))
		s.pending.Store(int64(len(s.heap)) + s.far.count)
	}
	return true
}

// deliver re-stores the message at e.off in its real topic; done false
// means "retry later"; counted is false for what is not delivered on
// purpose (a delete marker, a recalled message).
func (s *timerService) deliver(e timerEntry) (done, counted bool) {

	res := s.store.Read(timerReadGroup, protocol.TimerTopic, TimerMessageQueue, e.off, 1)
	switch {
	case res.Status == ReadFound:
	case res.Status == ReadOffsetTooSmall:
		s.log.Error("timer message cleaned before it was due, dropped", "offset", e.off)
		return true, true
	case res.Status == ReadOffsetFoundNull && res.NextBeginOffset > e.off:
		s.log.Error("timer message corrupt, dropped", "offset", e.off)
		return true, true
	default:
		s.log.Warn("timer message not readable, will retry", "offset", e.off, "status", res.Status)
		return false, false
	}
	rec, err := record.Decode(res.Buffer, false)
	if err != nil || rec.QueueOffset != e.off {
		s.log.Error("undecodable timer message, dropped", "offset", e.off, "err", err)
		return true, true
	}
	if s.recalledAway(&rec, e.due) {
		return true, false
	}
	ok := s.putToRealTopic("timer", &rec, e.off, func(props map[string]string) {
		props[PropertyTimerEnqueueMS] = strconv.FormatInt(rec.StoreTimestamp, 10)
		props[PropertyTimerDequeueMS] = strconv.FormatInt(nowMS(), 10)
		props[record.PropertyWaitStoreMsgOK] = "false" // as Java; the next checkpoint waits for the flush
	})
	return ok, ok
}

// progress is the checkpoint the current state allows (see timerCheckpoint).
func (s *timerService) progress() timerCheckpoint {
	c := timerCheckpoint{Version: timerCheckpointVersion, DeliveredDueMS: s.last.due, DeliveredOffset: s.last.off,
		ScannedOffset: s.scanned, LowOffset: s.scanned}
	for _, e := range s.heap {
		c.LowOffset = min(c.LowOffset, e.off)
		if !s.last.less(e) { // loaded late, below what was delivered: not claimed
			c.ScannedOffset = min(c.ScannedOffset, e.off)
		}
	}
	c.LowOffset = min(c.LowOffset, s.far.minOffset())
	return c
}

// checkpoint writes the progress when it changed and TimerFlushInterval
// passed, when final, or hourly.
func (s *timerService) checkpoint(final bool) {
	since := time.Since(s.wroteAt)
	if !final && since < s.cfg.TimerFlushInterval {
		return // progress is O(loaded): computed at most once per interval
	}
	c := s.progress()
	if c.sameProgress(s.written) && (final || since < timerCheckpointRefresh) {
		return
	}
	c.WrittenMS = nowMS()
	body, err := json.Marshal(c)
	if err != nil {
		panic(err) // a struct of integers always marshals
	}
	m := &record.Message{
		Topic: protocol.TimerTopic, QueueID: TimerCheckpointQueue, Body: body,
		BornTimestamp: c.WrittenMS, BornHost: s.storeHost, StoreHost: s.storeHost,
	}
	res, err := s.store.Put(m)
	if !res.Stored {
		s.log.Warn("timer checkpoint not stored, will retry", "status", res.Status, "err", err)
		return
	}
	s.written, s.wroteAt = c, time.Now()
}

// noteDelete remembers a delete marker's key (del "" is not a marker).
func (s *timerService) noteDelete(del string, due int64) {
	if del != "" {
		s.deletes[del] = due
	}
}

// recalledAway reports whether the due message rec is not to be delivered:
// a delete marker (its key is forgotten: its slot has come) or a message a
// marker of the same slot deletes.
func (s *timerService) recalledAway(rec *record.Record, due int64) bool {
	if del, ok := rec.Property(PropertyTimerDelUniq); ok {
		if d, ok := s.deletes[string(del)]; ok && d == due {
			delete(s.deletes, string(del))
		}
		return true
	}
	if len(s.deletes) == 0 {
		return false
	}
	real, _ := rec.Property(record.PropertyRealTopic)
	uniq, _ := rec.Property(record.PropertyUniqKey)
	if d, ok := s.deletes[DeleteKey(string(real), string(uniq))]; ok && d == due {
		s.recalled.Add(1)
		s.log.Info("timer message recalled, not delivered", "topic", string(real), "msgId", string(uniq), "offset", rec.QueueOffset)
		return true
	}
	return false
}

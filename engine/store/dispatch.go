package store

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// dispatchChunk is how much of the commit log the dispatcher reads at once.
const dispatchChunk = 1 << 20

// dispatcher is ReputMessageService's state. from and the counters are
// atomics read by any goroutine; everything else belongs to the goroutine
// that dispatches (recovery during Open, then the reput goroutine, then
// Close's final drain inside that goroutine).
type dispatcher struct {
	from atomic.Int64 // reputFromOffset: next commit-log offset to dispatch
	// mu is held by the reput goroutine for each round; DeleteTopicData
	// takes it to drop a topic's queues from topics and the store.
	mu sync.Mutex

	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	buf    []byte
	topics map[string]*topicQueues
	keys   []string
	// keyArena holds the bytes of the index keys handed to the index
	// (keyString): append-only, a full arena is dropped for a new one and
	// never written again, so every key string stays valid and unchanged
	// for as long as anything holds it.
	keyArena []byte
	// runs are consume-queue units built but not yet written: one run of
	// consecutive queue offsets per queue, written with one write each by
	// flushUnits at the end of a dispatch round (the dispatcher's position
	// moves only after), then the arriving listener is told once per queue.
	runs   []unitRun
	runIdx map[*consumequeue.Queue]int

	// indexSkipUpTo: records below it are already indexed; the one at it
	// may be in part (the index adds only its missing keys).
	indexSkipUpTo int64
	// indexRetryAt: after an index write failed, records dispatched before
	// it leave the index out (indexRecord).
	indexRetryAt time.Time
	// samples of (end offset, store time) awaiting the flushed offset, to
	// advance the checkpoint's physicMsgTimestamp.
	samples    []tsSample
	lastSample int64
	lastErrOff int64 // offset of the last logged dispatch error

	// paused holds the reput loop (tests and benchmarks; Close's final
	// drain ignores it). See reputLoop for how to wait for a running round.
	paused atomic.Bool

	lastTS    atomic.Int64 // store time of the last dispatched record
	records   atomic.Uint64
	lastDelay atomic.Int64 // ns between store time and dispatch, last record
	maxDelay  atomic.Int64
	errors    atomic.Uint64
	// indexErrors counts failed index writes, indexSkipped the records
	// whose keys were left out of the index (indexRecord).
	indexErrors, indexSkipped atomic.Uint64
	// skips and skippedBytes count jumps over commit-log bytes deleted
	// before they were dispatched (reputUntil).
	skips, skippedBytes atomic.Uint64
}

type unitRun struct {
	q     *consumequeue.Queue
	topic string
	id    int32
	first int64
	units []consumequeue.Unit
}

type topicQueues struct {
	name   string
	queues map[int32]*consumequeue.Queue
}

type tsSample struct{ end, ts int64 }

const maxSamples = 4096

// reputEnd is the offset dispatch may reach (getReputEndOffset): the flushed
// offset under sync and group flush (consumers see only durable records);
// under async the committed offset, what survives a crash of the process
// (the written end for mmap and pwrite; the pool's committed position and
// the direct path's written position, never bytes still in user space).
func (s *Store) reputEnd() int64 {
	if s.cfg.CommitLog.Flush.Kind == flush.Async {
		return s.log.CommittedOffset()
	}
	return s.log.FlushedOffset()
}

func (s *Store) wakeDispatcher() {
	if s.disp.wake == nil {
		return
	}
	select {
	case s.disp.wake <- struct{}{}:
	default:
	}
}

// reputLoop is the dispatcher goroutine: every ReputInterval or when woken
// it dispatches up to reputEnd. On stop it drains to the end and exits.
func (s *Store) reputLoop() {
	defer close(s.disp.done)
	t := time.NewTicker(s.cfg.ReputInterval)
	defer t.Stop()
	for {
		select {
		case <-s.disp.stop:
			s.disp.mu.Lock()
			_, err := s.reputUntil(s.reputEnd(), true)
			s.disp.mu.Unlock()
			if err != nil {
				s.cfg.Logger.Error("store: final dispatch", "err", err)
			}
			s.advancePhysicTS()
			s.advanceIndexTS()
			return
		case <-s.disp.wake:
		case <-t.C:
		}
		s.disp.mu.Lock()
		if s.disp.paused.Load() {
			// Checked under mu: once a holder has set paused and then
			// taken and released mu, no round runs until it clears it.
			s.disp.mu.Unlock()
			continue
		}
		_, err := s.reputUntil(s.reputEnd(), true)
		s.disp.mu.Unlock()
		if err != nil {
			s.disp.errors.Add(1)
			if off := s.disp.from.Load(); off != s.disp.lastErrOff {
				s.disp.lastErrOff = off
				s.cfg.Logger.Error("store: dispatch stalled", "offset", off, "err", err)
			}
		}
		s.advancePhysicTS()
		s.advanceIndexTS()
	}
}

// reputUntil dispatches records from disp.from up to end (doReput) and
// returns how many it dispatched. It stops at the first error, leaving
// disp.from at the record that failed (retried later). The consume-queue
// units of each chunk are written together (flushUnits) before disp.from
// passes their records, so a reader that sees disp.from finds the units.
func (s *Store) reputUntil(end int64, notify bool) (int64, error) {
	var n int64
	segSize := s.log.SegmentSize()
	maxRec := s.log.MaxRecordSize()
	for {
		from := s.disp.from.Load()
		if from >= end {
			break
		}
		if minOff := s.log.MinOffset(); from < minOff {
			s.skipTo(from, minOff)
			continue
		}
		next, k, err := s.reputChunk(from, end, segSize, maxRec, notify)
		n += k
		if ferr := s.flushUnits(notify); ferr != nil {
			return n, ferr // disp.from stays: the chunk is dispatched again
		}
		s.disp.from.Store(next)
		if err != nil {
			return n, err
		}
		if next == from {
			break // the next record is not wholly readable below end yet
		}
	}
	if n > 0 {
		s.pushSample(s.disp.from.Load(), s.disp.lastTS.Load())
	}
	return n, nil
}

// skipTo moves the dispatcher from from up to the commit log's min offset.
// The cleaner never deletes a segment the dispatcher has not passed
// (CleanOnce), and recovery starts dispatch at or above the min offset, so
// in normal operation the only way here is a slave whose empty log began
// at its master's segment boundary (from is 0: nothing was ever there).
// Anything else means segments vanished under a running store (removed by
// hand, or a bug): their messages are lost to consumers, so the jump is
// counted (Stats.DispatchSkips, DispatchSkippedBytes) and logged as an
// error. Dispatch goes on from the min offset, as RocketMQ's reput does.
func (s *Store) skipTo(from, minOff int64) {
	s.disp.from.Store(minOff)
	if from == 0 && s.slave.Load() {
		s.cfg.Logger.Info("store: the replicated commit log starts at the master's offset; dispatch starts there", "offset", minOff)
		return
	}
	s.disp.skips.Add(1)
	s.disp.skippedBytes.Add(uint64(minOff - from))
	s.cfg.Logger.Error("store: commit-log bytes were deleted before they were dispatched; their messages are in no consume queue",
		"from", from, "minOffset", minOff, "skippedBytes", minOff-from)
}

// reputChunk dispatches the records of one read of the log at from and
// returns where the next read starts: past the last record dispatched, or
// at the record that failed. end need not fall on a record boundary (the
// direct path's committed position moves by whole staging buffers): a
// record that runs past end but not past its segment is left for a later
// round, returning next == from.
func (s *Store) reputChunk(from, end, segSize int64, maxRec int, notify bool) (next, n int64, err error) {
	next = from
	segEnd := from - from%segSize + segSize
	limit := min(end, segEnd)
	want := limit - from
	chunk := min(want, dispatchChunk)
	if chunk < record.BlankMinLen {
		if limit < segEnd {
			return next, n, nil // not even a header is readable yet
		}
		return next, n, s.corrupt(from, fmt.Errorf("%d bytes before the end of the segment", chunk))
	}
	if int64(cap(s.disp.buf)) < chunk {
		s.disp.buf = make([]byte, max(chunk, 64<<10))
	}
	buf := s.disp.buf[:chunk]
	if _, err := s.log.ReadAt(buf, from); err != nil {
		return next, n, fmt.Errorf("store: dispatch read at %d: %w", from, err)
	}
	p := int64(0)
	for p+record.BlankMinLen <= chunk {
		off := from + p
		size, magic, err := record.PeekSize(buf[p:])
		if err != nil {
			return next, n, s.corrupt(off, err)
		}
		if magic == record.MagicBlank {
			return s.log.RollNextFile(off), n, nil
		}
		if int(size) > maxRec {
			return next, n, s.corrupt(off, fmt.Errorf("record size %d over %d", size, maxRec))
		}
		if p+int64(size) > chunk {
			if p > 0 {
				break // read again from this record
			}
			if int64(size) > want {
				if off+int64(size) <= segEnd && limit < segEnd {
					return next, n, nil // the rest of the record is not readable yet
				}
				return next, n, s.corrupt(off, fmt.Errorf("record of %d bytes runs past the end of its segment at %d", size, segEnd))
			}
			big := make([]byte, size)
			if _, err := s.log.ReadAt(big, off); err != nil {
				return next, n, fmt.Errorf("store: dispatch read at %d: %w", off, err)
			}
			s.disp.buf = big
			buf, chunk = big, int64(size)
		}
		rec, err := record.Decode(buf[p:p+int64(size)], false)
		if err != nil {
			return next, n, s.corrupt(off, err)
		}
		if rec.PhysicalOffset != off {
			return next, n, s.corrupt(off, fmt.Errorf("record says physical offset %d", rec.PhysicalOffset))
		}
		if err := s.dispatchRecord(off, &rec, notify); err != nil {
			return next, n, err
		}
		n++
		p += int64(size)
		next = off + int64(size)
	}
	return next, n, nil
}

// addUnit queues a consume-queue unit for flushUnits, extending the queue's
// run when the offset continues it.
func (s *Store) addUnit(q *consumequeue.Queue, topic string, id int32, queueOffset int64, u consumequeue.Unit) error {
	d := &s.disp
	if d.runIdx == nil {
		d.runIdx = map[*consumequeue.Queue]int{}
	}
	if i, ok := d.runIdx[q]; ok {
		r := &d.runs[i]
		if r.first+int64(len(r.units)) == queueOffset {
			r.units = append(r.units, u)
			return nil
		}
		// Not consecutive (a repeat after recovery, or a gap): write what
		// is queued first so the queue sees its puts in order.
		if err := q.PutRun(r.first, r.units); err != nil {
			return fmt.Errorf("store: consume queue %s/%d offset %d: %w", r.topic, r.id, r.first, err)
		}
		r.first, r.units = queueOffset, append(r.units[:0], u)
		return nil
	}
	d.runIdx[q] = len(d.runs)
	if len(d.runs) < cap(d.runs) {
		d.runs = d.runs[:len(d.runs)+1]
		r := &d.runs[len(d.runs)-1]
		r.q, r.topic, r.id, r.first, r.units = q, topic, id, queueOffset, append(r.units[:0], u)
		return nil
	}
	d.runs = append(d.runs, unitRun{q: q, topic: topic, id: id, first: queueOffset, units: []consumequeue.Unit{u}})
	return nil
}

// flushUnits writes every queued run (one write per queue in the common
// case) and, if notify, tells the arriving listener each queue's new max
// offset. On error nothing is dropped that a redo would miss: the caller
// leaves disp.from where it was and the records are dispatched again
// (consume queues ignore repeats).
func (s *Store) flushUnits(notify bool) error {
	d := &s.disp
	if len(d.runs) == 0 {
		return nil
	}
	var ferr error
	for i := range d.runs {
		r := &d.runs[i]
		if ferr == nil {
			if err := r.q.PutRun(r.first, r.units); err != nil {
				ferr = fmt.Errorf("store: consume queue %s/%d offset %d: %w", r.topic, r.id, r.first, err)
			}
		}
	}
	if ferr == nil && notify {
		if f := s.arriving.Load(); f != nil {
			for i := range d.runs {
				r := &d.runs[i]
				(*f)(r.topic, r.id, r.first+int64(len(r.units)))
			}
		}
	}
	for i := range d.runs {
		d.runs[i].q = nil
		d.runs[i].units = d.runs[i].units[:0]
	}
	d.runs = d.runs[:0]
	clear(d.runIdx)
	return ferr
}

func (s *Store) corrupt(off int64, err error) error {
	path := "?"
	for _, seg := range s.log.Segments() {
		if seg.Contains(off) {
			path = seg.Path()
		}
	}
	return &commitlog.CorruptionError{Path: path, Offset: off, Err: err}
}

// dispatchRecord builds the consume-queue unit (queued for flushUnits,
// which writes it and notifies the arriving listener) and the index entries
// of the record at off (CommitLogDispatcherBuildConsumeQueue / BuildIndex).
// Both targets ignore repeats, so recovery may dispatch a record twice.
func (s *Store) dispatchRecord(off int64, rec *record.Record, notify bool) error {
	d := &s.disp
	tq := d.topics[string(rec.Topic)]
	if tq == nil {
		if d.topics == nil {
			d.topics = map[string]*topicQueues{}
		}
		tq = &topicQueues{name: string(rec.Topic), queues: map[int32]*consumequeue.Queue{}}
		d.topics[tq.name] = tq
	}
	tx := record.TransactionType(rec.SysFlag)
	isConsumable := tx == record.TransactionNot || tx == record.TransactionCommit
	if off < s.deletedBelow(tq.name) {
		return nil // a deleted incarnation of the topic (DeleteTopicData)
	}
	if isConsumable {
		q := tq.queues[rec.QueueID]
		if q == nil {
			var err error
			if q, err = s.cq.Queue(tq.name, rec.QueueID, true); err != nil {
				return fmt.Errorf("store: consume queue %s/%d: %w", tq.name, rec.QueueID, err)
			}
			tq.queues[rec.QueueID] = q
		}
		u := consumequeue.Unit{PhyOffset: off, Size: rec.TotalSize, TagsCode: s.tagsCode(tq.name, rec)}
		if err := s.addUnit(q, tq.name, rec.QueueID, rec.QueueOffset, u); err != nil {
			return err
		}
	}
	if s.idx != nil && tx != record.TransactionRollback && off >= d.indexSkipUpTo {
		keys := d.keys[:0]
		if k, ok := rec.Property(record.PropertyUniqKey); ok && len(k) > 0 {
			keys = append(keys, d.keyString(k))
		}
		if ks, ok := rec.Property(record.PropertyKeys); ok {
			for k := range bytes.SplitSeq(ks, []byte(record.KeySeparator)) {
				if len(k) > 0 {
					keys = append(keys, d.keyString(k))
				}
			}
		}
		d.keys = keys
		if len(keys) > 0 {
			s.indexRecord(tq.name, keys, off, rec.StoreTimestamp)
		}
	}
	d.lastTS.Store(rec.StoreTimestamp)
	d.records.Add(1)
	if notify {
		delay := int64(time.Since(time.UnixMilli(rec.StoreTimestamp)))
		d.lastDelay.Store(delay)
		maxStore(&d.maxDelay, delay)
	}
	return nil
}

// keyArenaSize is the size of a key arena: one allocation serves about a
// hundred UNIQ_KEYs (32 bytes each) instead of one per record.
const keyArenaSize = 4 << 10

// keyString returns k as a string backed by the key arena (an index key
// outlives the record buffer k points into, which the next read reuses).
// The arena's bytes are written once, before the string is made, and
// never again: a full arena is left to the strings that point into it.
func (d *dispatcher) keyString(k []byte) string {
	if len(k) > keyArenaSize/4 {
		return string(k)
	}
	if cap(d.keyArena)-len(d.keyArena) < len(k) {
		d.keyArena = make([]byte, 0, keyArenaSize)
	}
	start := len(d.keyArena)
	d.keyArena = append(d.keyArena, k...)
	return unsafe.String(&d.keyArena[start], len(k))
}

// tagsCode is the unit's tags code: the TAGS hash, or for a delayed
// message in SCHEDULE_TOPIC_XXXX its delivery time.
func (s *Store) tagsCode(topic string, rec *record.Record) int64 {
	if topic == protocol.ScheduleTopic {
		if v, ok := rec.Property(record.PropertyDelayTimeLevel); ok {
			if lvl, err := strconv.Atoi(string(v)); err == nil && lvl > 0 {
				lvl = min(lvl, len(s.delayLevels))
				return rec.StoreTimestamp + s.delayLevels[lvl-1].Milliseconds()
			}
		}
	}
	return rec.TagsCode()
}

// pushSample remembers that records up to end were stored by ts.
func (s *Store) pushSample(end, ts int64) {
	d := &s.disp
	if len(d.samples) >= maxSamples || (len(d.samples) > 0 && ts-d.lastSample < 10) {
		return
	}
	d.samples = append(d.samples, tsSample{end, ts})
	d.lastSample = ts
}

// advancePhysicTS moves the checkpoint's physicMsgTimestamp to the newest
// sample the commit log has flushed past.
func (s *Store) advancePhysicTS() {
	d := &s.disp
	flushed := s.log.FlushedOffset()
	i := 0
	for i < len(d.samples) && d.samples[i].end <= flushed {
		maxStore(&s.physicTS, d.samples[i].ts)
		i++
	}
	if i > 0 {
		d.samples = append(d.samples[:0], d.samples[i:]...)
	}
}

// DispatchBehindBytes is how far the dispatcher is behind the commit log's
// written end (dispatchBehindBytes; under sync/group flush this includes
// bytes not flushed yet).
func (s *Store) DispatchBehindBytes() int64 {
	return max(0, s.log.MaxOffset()-s.disp.from.Load())
}

// DispatchedOffset is reputFromOffset: every record below it has its
// consume-queue unit written to its queue (a reader finds it; it is on
// disk once the queue flushes) and its index entries in the index (same
// pass, before the position moves). The cleaner deletes only segments
// wholly below it.
func (s *Store) DispatchedOffset() int64 { return s.disp.from.Load() }

// WaitDispatched blocks until every record appended before the call has
// been dispatched, or timeout passes (false).
func (s *Store) WaitDispatched(timeout time.Duration) bool {
	target := s.log.MaxOffset()
	deadline := time.Now().Add(timeout)
	for s.disp.from.Load() < target {
		if s.closed.Load() || time.Now().After(deadline) {
			return false
		}
		s.wakeDispatcher()
		time.Sleep(200 * time.Microsecond)
	}
	return true
}

// indexRetryBackoff is how long the index is left out after a write failed
// (a variable for tests).
var indexRetryBackoff = time.Second

// indexRecord adds a record's keys to the index. The index is best effort,
// as RocketMQ's CommitLogDispatcherBuildIndex (it logs and goes on): a
// failed write (an index file whose preallocation does not fit a small or
// full disk) must not stall the consume queues behind it while sends are
// acknowledged. It is counted (Stats.IndexErrors) and logged, the keys of
// the records dispatched in the next indexRetryBackoff are left out
// (Stats.IndexSkippedRecords: QUERY_MESSAGE does not find them, now or
// after a restart), and the index is tried again after it. Called by the
// dispatcher only.
func (s *Store) indexRecord(topic string, keys []string, off, storeTS int64) {
	d := &s.disp
	if !d.indexRetryAt.IsZero() && time.Now().Before(d.indexRetryAt) {
		d.indexSkipped.Add(1)
		return
	}
	if err := s.idx.Put(topic, keys, off, storeTS); err != nil {
		d.indexErrors.Add(1)
		d.indexSkipped.Add(1)
		d.indexRetryAt = time.Now().Add(indexRetryBackoff)
		s.cfg.Logger.Error("store: index write failed; records are dispatched without index entries until it succeeds",
			"offset", off, "retryIn", indexRetryBackoff, "skippedRecords", d.indexSkipped.Load(), "err", err)
		return
	}
	d.indexRetryAt = time.Time{}
}

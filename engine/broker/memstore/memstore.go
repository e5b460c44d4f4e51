// Package memstore is an in-memory broker.MessageStore: every record is
// encoded in the engine/record format and kept in a map by commit-log
// offset, with a slice of offsets per queue as its consume queue. It has no
// files, no flushing and no cleaning; it serves the broker's tests and
// network benchmarks that should not measure a disk, and it can inject put
// statuses, blocked puts and a busy page cache.
//
// Concurrency: all methods are safe for concurrent use. Records handed out
// are never modified (the caller must not modify them either). The arriving
// listener is called after the put's lock is released, on the putting
// goroutine.
//
// Close does not discard anything: a closed Store refuses puts until Reopen,
// so one Store can play a store that survives a broker restart. The
// broker's metadata files (meta.ConfigFiles) are kept in memory too.
package memstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/meta"
	"github.com/brokerlab/brokerlab/engine/record"
)

// ErrClosed is returned by puts on a closed Store.
var ErrClosed = errors.New("memstore: store closed")

// PutHook runs before a put stores anything. Returning a status that is
// not stored (broker.PutStatus.Stored) refuses the put with it; a stored
// status other than PutOK stores the message and reports that status. It
// may block (a stalled disk).
type PutHook func(ctx context.Context, m *record.Message) (broker.PutStatus, error)

type queueKey struct {
	topic   string
	queueID int32
}

// queue is one consume queue: commit-log offsets, tags codes and store times
// by queue offset minus min.
type queue struct {
	min   int64
	phys  []int64
	tags  []int64
	times []int64
}

func (q *queue) max() int64 { return q.min + int64(len(q.phys)) }

// Store is the in-memory store.
type Store struct {
	meta.MemFiles // the broker's config files (meta.ConfigFiles)

	listener atomic.Pointer[broker.ArrivingListener]
	hook     atomic.Pointer[PutHook]
	busy     atomic.Bool
	closed   atomic.Bool
	puts     atomic.Int64

	mu struct {
		sync.RWMutex
		next    int64 // next commit-log offset
		records map[int64][]byte
		queues  map[queueKey]*queue
		index   map[string][]int64 // topic#key → commit-log offsets
	}
}

// New returns an empty store.
func New() *Store {
	s := &Store{}
	s.mu.records = make(map[int64][]byte)
	s.mu.queues = make(map[queueKey]*queue)
	s.mu.index = make(map[string][]int64)
	return s
}

var (
	_ broker.MessageStore = (*Store)(nil)
	_ meta.ConfigFiles    = (*Store)(nil)
)

// SetPutHook installs (nil removes) the hook run before every put.
func (s *Store) SetPutHook(h PutHook) {
	if h == nil {
		s.hook.Store(nil)
		return
	}
	s.hook.Store(&h)
}

// SetOSPageCacheBusy makes OSPageCacheBusy report busy.
func (s *Store) SetOSPageCacheBusy(busy bool) { s.busy.Store(busy) }

// Puts is the number of records stored.
func (s *Store) Puts() int64 { return s.puts.Load() }

// Reopen undoes Close.
func (s *Store) Reopen() { s.closed.Store(false) }

// Closed reports whether Close was called (and not undone).
func (s *Store) Closed() bool { return s.closed.Load() }

// Put implements broker.MessageStore.
func (s *Store) Put(ctx context.Context, m *record.Message) (broker.PutResult, error) {
	return s.put(ctx, []*record.Message{m})
}

// PutBatch implements broker.MessageStore.
func (s *Store) PutBatch(ctx context.Context, ms []*record.Message) (broker.PutResult, error) {
	if len(ms) == 0 {
		return broker.PutResult{Status: broker.PutMessageIllegal}, errors.New("memstore: empty batch")
	}
	for _, m := range ms[1:] {
		if m.Topic != ms[0].Topic || m.QueueID != ms[0].QueueID {
			return broker.PutResult{Status: broker.PutMessageIllegal}, errors.New("memstore: batch spans queues")
		}
	}
	return s.put(ctx, ms)
}

func (s *Store) put(ctx context.Context, ms []*record.Message) (broker.PutResult, error) {
	if s.closed.Load() {
		return broker.PutResult{Status: broker.PutServiceNotAvailable}, ErrClosed
	}
	status := broker.PutOK
	if h := s.hook.Load(); h != nil {
		for _, m := range ms {
			st, err := (*h)(ctx, m)
			if !st.Stored() {
				return broker.PutResult{Status: st}, err
			}
			if st != broker.PutOK {
				status = st
			}
		}
	}
	now := time.Now().UnixMilli()
	res := broker.PutResult{Status: status, StoreTimestamp: now, PhysOffsets: make([]int64, len(ms))}
	encoded := make([][]byte, len(ms))
	for i, m := range ms {
		rec, err := record.AppendEncode(nil, m, record.BodyCRC(m.Body), 0, 0, now)
		if err != nil {
			return broker.PutResult{Status: broker.PutMessageIllegal}, fmt.Errorf("memstore: %w", err)
		}
		encoded[i] = rec
	}
	key := queueKey{ms[0].Topic, ms[0].QueueID}
	s.mu.Lock()
	q := s.mu.queues[key]
	if q == nil {
		q = &queue{}
		s.mu.queues[key] = q
	}
	res.QueueOffset = q.max()
	for i, m := range ms {
		phys := s.mu.next
		record.Patch(encoded[i], q.max(), phys, now)
		s.mu.next += int64(len(encoded[i]))
		s.mu.records[phys] = encoded[i]
		res.PhysOffsets[i] = phys
		tags, _ := record.Property(m.Properties, record.PropertyTags)
		q.phys = append(q.phys, phys)
		q.tags = append(q.tags, record.TagsCode(tags))
		q.times = append(q.times, now)
		for _, k := range indexKeys(m.Properties) {
			ik := m.Topic + "#" + k
			s.mu.index[ik] = append(s.mu.index[ik], phys)
		}
	}
	next := q.max()
	s.mu.Unlock()
	s.puts.Add(int64(len(ms)))
	if l := s.listener.Load(); l != nil {
		(*l)(key.topic, key.queueID, next)
	}
	return res, nil
}

func indexKeys(props string) []string {
	var keys []string
	if v, ok := record.Property(props, record.PropertyKeys); ok {
		keys = append(keys, strings.Fields(v)...)
	}
	if v, ok := record.Property(props, record.PropertyUniqKey); ok && v != "" {
		keys = append(keys, v)
	}
	return keys
}

// Get implements broker.MessageStore with DefaultMessageStore.getMessage's
// statuses.
func (s *Store) Get(_, topic string, queueID int32, offset int64, maxMsgNums int, filter broker.MessageFilter) broker.GetResult {
	s.mu.RLock()
	defer s.mu.RUnlock()
	q := s.mu.queues[queueKey{topic, queueID}]
	if q == nil || q.max() == 0 {
		return broker.GetResult{Status: broker.GetNoMessageInQueue}
	}
	res := broker.GetResult{MinOffset: q.min, MaxOffset: q.max()}
	switch {
	case offset < q.min:
		res.Status, res.NextBeginOffset = broker.GetOffsetTooSmall, q.min
	case offset == q.max():
		res.Status, res.NextBeginOffset = broker.GetOffsetOverflowOne, offset
	case offset > q.max():
		res.Status, res.NextBeginOffset = broker.GetOffsetOverflowBadly, q.max()
		if q.min == 0 {
			res.NextBeginOffset = 0
		}
	default:
		i, n := offset, 0
		for ; i < q.max() && n < maxMsgNums; i++ {
			if filter != nil && !filter.MatchTagsCode(q.tags[i-q.min]) {
				continue
			}
			if rf, ok := filter.(broker.RecordFilter); ok && !rf.MatchRecord(s.mu.records[q.phys[i-q.min]]) {
				continue
			}
			res.Buffer = append(res.Buffer, s.mu.records[q.phys[i-q.min]]...)
			n++
		}
		res.NextBeginOffset = i
		res.Status = broker.GetFound
		if n == 0 {
			res.Status = broker.GetNoMatchedMessage
		}
	}
	return res
}

// MaxOffset implements broker.MessageStore.
func (s *Store) MaxOffset(topic string, queueID int32) int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if q := s.mu.queues[queueKey{topic, queueID}]; q != nil {
		return q.max()
	}
	return 0
}

// MinOffset implements broker.MessageStore.
func (s *Store) MinOffset(topic string, queueID int32) int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if q := s.mu.queues[queueKey{topic, queueID}]; q != nil {
		return q.min
	}
	return 0
}

// InMemory implements broker.MessageStore: every stored message is in
// memory here.
func (s *Store) InMemory(topic string, queueID int32, offset int64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	q := s.mu.queues[queueKey{topic, queueID}]
	return q != nil && offset >= q.min && offset < q.max()
}

// Truncate forgets the queue's messages below minOffset (as cleaning
// would), for OFFSET_TOO_SMALL paths.
func (s *Store) Truncate(topic string, queueID int32, minOffset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.mu.queues[queueKey{topic, queueID}]
	if q == nil || minOffset <= q.min {
		return
	}
	n := min(minOffset, q.max()) - q.min
	q.phys, q.tags, q.times = q.phys[n:], q.tags[n:], q.times[n:]
	q.min += n
}

// OffsetByTime implements broker.MessageStore.
func (s *Store) OffsetByTime(topic string, queueID int32, ts int64) int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	q := s.mu.queues[queueKey{topic, queueID}]
	if q == nil {
		return 0
	}
	i := sort.Search(len(q.times), func(i int) bool { return q.times[i] >= ts })
	return q.min + int64(i)
}

// EarliestMessageTime implements broker.MessageStore.
func (s *Store) EarliestMessageTime(topic string, queueID int32) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	q := s.mu.queues[queueKey{topic, queueID}]
	if q == nil || len(q.times) == 0 {
		return -1, fmt.Errorf("memstore: %w: queue %s:%d is empty", broker.ErrNotFound, topic, queueID)
	}
	return q.times[0], nil
}

// ReadRecord implements broker.MessageStore.
func (s *Store) ReadRecord(physOffset int64) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec, ok := s.mu.records[physOffset]
	if !ok {
		return nil, fmt.Errorf("memstore: %w: no record at offset %d", broker.ErrNotFound, physOffset)
	}
	return rec, nil
}

// QueryByKey implements broker.MessageStore.
func (s *Store) QueryByKey(topic, key string, maxNum int, beginMs, endMs int64) (broker.QueryResult, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var res broker.QueryResult
	n := 0
	for _, phys := range s.mu.index[topic+"#"+key] {
		rec := s.mu.records[phys]
		ts, err := record.PeekStoreTimestamp(rec)
		if err != nil || ts < beginMs || ts > endMs {
			continue
		}
		res.Buffer = append(res.Buffer, rec...)
		res.IndexLastUpdateTimestamp = max(res.IndexLastUpdateTimestamp, ts)
		res.IndexLastUpdatePhyOffset = max(res.IndexLastUpdatePhyOffset, phys)
		if n++; n >= maxNum {
			break
		}
	}
	return res, nil
}

// SetArrivingListener implements broker.MessageStore.
func (s *Store) SetArrivingListener(fn broker.ArrivingListener) {
	if fn == nil {
		s.listener.Store(nil)
		return
	}
	s.listener.Store(&fn)
}

// OSPageCacheBusy implements broker.MessageStore.
func (s *Store) OSPageCacheBusy() bool { return s.busy.Load() }

// Close implements broker.MessageStore: later puts fail until Reopen; the
// data stays.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}

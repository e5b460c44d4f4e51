package consumequeue

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

type queueKey struct {
	topic string
	id    int32
}

// Store holds every consume queue under <root>/consumequeue
// (RocketMQ ConsumeQueueStore). Its methods may be called concurrently; the
// per-queue contract of Queue applies to the queues it returns.
type Store struct {
	fsys vfs.FS
	root string
	cfg  Config

	mu     sync.RWMutex
	queues map[queueKey]*Queue // guarded by mu
	closed bool                // guarded by mu
}

// OpenStore loads every <topic>/<queueId> directory under root/consumequeue.
// Directories whose name is not a queue id are ignored. The queues must be
// recovered (Recover) before they are written.
func OpenStore(fsys vfs.FS, root string, cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Store{fsys: fsys, root: root, cfg: cfg, queues: make(map[queueKey]*Queue)}
	base := filepath.Join(root, "consumequeue")
	topics, err := fsys.ReadDir(base)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("consumequeue: read dir %s: %w", base, err)
	}
	for _, t := range topics {
		if !t.IsDir() || !validTopic(t.Name()) {
			continue
		}
		ids, err := fsys.ReadDir(filepath.Join(base, t.Name()))
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("consumequeue: read dir %s: %w", filepath.Join(base, t.Name()), err)
		}
		for _, d := range ids {
			id, err := strconv.ParseInt(d.Name(), 10, 32)
			if !d.IsDir() || err != nil || strconv.FormatInt(id, 10) != d.Name() {
				continue
			}
			q, err := OpenQueue(fsys, root, t.Name(), int32(id), cfg)
			if err != nil {
				_ = s.Close()
				return nil, err
			}
			s.queues[queueKey{t.Name(), int32(id)}] = q
		}
	}
	return s, nil
}

// Queue returns the queue (topic, queueID), creating an empty one (no files
// until its first Put) if create is true; otherwise a missing queue is
// ErrNoQueue.
func (s *Store) Queue(topic string, queueID int32, create bool) (*Queue, error) {
	k := queueKey{topic, queueID}
	s.mu.RLock()
	q, ok := s.queues[k]
	closed := s.closed
	s.mu.RUnlock()
	if ok {
		return q, nil
	}
	if closed {
		return nil, ErrClosed
	}
	if !create {
		return nil, fmt.Errorf("%w: %s/%d", ErrNoQueue, topic, queueID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if q, ok := s.queues[k]; ok {
		return q, nil
	}
	q, err := OpenQueue(s.fsys, s.root, topic, queueID, s.cfg)
	if err != nil {
		return nil, err
	}
	s.queues[k] = q
	return q, nil
}

// Queues returns every queue, sorted by topic then queue id.
func (s *Store) Queues() []*Queue {
	s.mu.RLock()
	qs := make([]*Queue, 0, len(s.queues))
	for _, q := range s.queues {
		qs = append(qs, q)
	}
	s.mu.RUnlock()
	sort.Slice(qs, func(i, j int) bool {
		if qs[i].topic != qs[j].topic {
			return qs[i].topic < qs[j].topic
		}
		return qs[i].queueID < qs[j].queueID
	})
	return qs
}

// each applies fn to every queue and joins the errors.
func (s *Store) each(fn func(*Queue) error) error {
	var errs []error
	for _, q := range s.Queues() {
		if err := fn(q); err != nil {
			errs = append(errs, fmt.Errorf("%s/%d: %w", q.topic, q.queueID, err))
		}
	}
	return errors.Join(errs...)
}

// Recover recovers every queue (recovery step 2).
func (s *Store) Recover() error { return s.each((*Queue).Recover) }

// MaxPhyOffset is the largest MaxPhyOffset over all queues — RocketMQ's
// dispatchFromPhyOffset — or -1 when no queue references a record.
func (s *Store) MaxPhyOffset() int64 {
	m := int64(-1)
	for _, q := range s.Queues() {
		m = max(m, q.MaxPhyOffset())
	}
	return m
}

// FlushAll calls Flush(leastPages) on every queue (one file per queue, as
// FlushConsumeQueueService).
func (s *Store) FlushAll(leastPages int) error {
	return s.each(func(q *Queue) error { return q.Flush(leastPages) })
}

// TruncateFromPhy cuts units referencing bytes at or beyond phyEnd in every
// queue (recovery step 6; only queues whose MaxPhyOffset reaches phyEnd do
// any work).
func (s *Store) TruncateFromPhy(phyEnd int64) error {
	return s.each(func(q *Queue) error { return q.TruncateFromPhy(phyEnd) })
}

// DeleteBelowPhy removes expired files of every queue and corrects their
// min offsets (CleanConsumeQueueService); it returns the files removed.
func (s *Store) DeleteBelowPhy(minPhy int64) (int, error) {
	total := 0
	err := s.each(func(q *Queue) error {
		n, err := q.DeleteBelowPhy(minPhy)
		total += n
		return err
	})
	return total, err
}

// SetMinPhy corrects every queue's min offset (recovery step 9).
func (s *Store) SetMinPhy(minPhy int64) error {
	return s.each(func(q *Queue) error { return q.SetMinPhy(minPhy) })
}

// Close flushes and closes every queue.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	return s.each((*Queue).Close)
}

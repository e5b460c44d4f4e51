package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"
)

// DeletedTopicsFile is config/deletedTopics.json: the topics whose data was
// deleted, each with the commit-log offset its deletion happened at,
// {"<topic>":<offset>,...}. Records of such a topic below that offset are
// never dispatched again (recovery re-dispatches from the commit log) nor
// returned by key queries, so a topic created again under the same name
// starts empty. An entry is dropped once the commit log's min offset has
// passed it. Rewritten atomically on change.
const DeletedTopicsFile = "deletedTopics.json"

// ErrDispatchBehind: DeleteTopicData found the dispatcher too far behind
// the commit log to delete a topic's queues safely.
var ErrDispatchBehind = errors.New("store: dispatch is behind the commit log")

// dispatchWait bounds how long DeleteTopicData waits for the dispatcher to
// reach the commit log's end.
const dispatchWait = 10 * time.Second

func (s *Store) loadTombstones() error {
	var m map[string]int64
	_, err := readFileWithBackup(s.cfg.FS, ConfigPath(s.cfg.Root, DeletedTopicsFile), func(b []byte) error {
		var t map[string]int64
		if err := json.Unmarshal(b, &t); err != nil {
			return err
		}
		m = t
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: load %s: %w", DeletedTopicsFile, err)
	}
	if len(m) > 0 {
		s.tombs.Store(&m)
	}
	return nil
}

// deletedBelow is the commit-log offset below which topic's records belong
// to a deleted incarnation of it (0: none).
func (s *Store) deletedBelow(topic string) int64 {
	if t := s.tombs.Load(); t != nil {
		return (*t)[topic]
	}
	return 0
}

// DeleteTopicData removes a topic's data (Java's deleteTopics): its
// consume queues, in memory and on disk, and its queue offsets (a new put
// to the topic gets queue offset 0). The commit-log records stay until
// cleaned but are never dispatched again (DeletedTopicsFile). The topic's
// config and the consumer groups' offsets on it are the broker's.
//
// Puts to every queue wait while it runs: it takes all topic-queue locks,
// waits until the dispatcher has passed the commit log's end (at most
// 10 s; ErrDispatchBehind otherwise, and nothing is changed), then
// removes the queues under the dispatcher's lock.
func (s *Store) DeleteTopicData(topic string) error {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		return ErrClosed
	}
	s.deleteMu.Lock()
	defer s.deleteMu.Unlock()

	for i := range s.stripes {
		s.stripes[i].mu.Lock()
	}
	unlocked := false
	unlock := func() {
		if !unlocked {
			unlocked = true
			for i := range s.stripes {
				s.stripes[i].mu.Unlock()
			}
		}
	}
	defer unlock()
	end := s.log.MaxOffset()
	if !s.waitDispatchedTo(end, dispatchWait) {
		return fmt.Errorf("%w: at %d, commit log ends at %d", ErrDispatchBehind, s.disp.from.Load(), end)
	}
	next := map[string]int64{}
	if t := s.tombs.Load(); t != nil {
		next = maps.Clone(*t)
	}
	if end > 0 {
		next[topic] = end
	}
	min := s.log.MinOffset()
	for t, off := range next {
		if off <= min && t != topic {
			delete(next, t)
		}
	}
	if len(next) > 0 {
		s.tombs.Store(&next)
	}

	s.disp.mu.Lock()
	delete(s.disp.topics, topic)
	_, qerr := s.cq.RemoveTopic(topic)
	s.disp.mu.Unlock()
	for i := range s.stripes {
		st := &s.stripes[i]
		for k := range st.next {
			if k.topic == topic {
				delete(st.next, k)
			}
		}
	}
	unlock()

	b, err := json.Marshal(next)
	if err == nil {
		err = s.WriteConfigFile(DeletedTopicsFile, b)
	}
	if qerr != nil {
		return fmt.Errorf("store: delete consume queues of %s: %w", topic, qerr)
	}
	if err != nil {
		return fmt.Errorf("store: persist %s: %w", DeletedTopicsFile, err)
	}
	return nil
}

// waitDispatchedTo waits until the dispatcher's position reaches end.
func (s *Store) waitDispatchedTo(end int64, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for s.disp.from.Load() < end {
		if s.closed.Load() || time.Now().After(deadline) {
			return false
		}
		s.wakeDispatcher()
		time.Sleep(200 * time.Microsecond)
	}
	return true
}

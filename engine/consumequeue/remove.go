package consumequeue

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// RemoveTopic closes every queue of topic, forgets them and deletes their
// files and directories (<root>/consumequeue/<topic>, including queue
// directories no queue was opened for). It returns the queues removed.
// The caller keeps writers away from the topic while it runs: a Put on a
// removed queue fails with ErrClosed. Readers holding a file finish on it.
func (s *Store) RemoveTopic(topic string) (int, error) {
	if !validTopic(topic) {
		return 0, fmt.Errorf("consumequeue: invalid topic %q", topic)
	}
	s.mu.Lock()
	var qs []*Queue
	for k, q := range s.queues {
		if k.topic == topic {
			qs = append(qs, q)
			delete(s.queues, k)
		}
	}
	s.mu.Unlock()
	var errs []error
	for _, q := range qs {
		if err := q.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s/%d: %w", q.topic, q.queueID, err))
		}
	}
	dir := filepath.Join(s.root, "consumequeue", topic)
	errs = append(errs, removeTree(s, dir))
	return len(qs), errors.Join(errs...)
}

// removeTree deletes dir, its queue directories and their files (two
// levels, the consume-queue layout), then syncs the parent directory.
func removeTree(s *Store, dir string) error {
	ents, err := s.fsys.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("consumequeue: read dir %s: %w", dir, err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			files, err := s.fsys.ReadDir(p)
			if err != nil {
				return fmt.Errorf("consumequeue: read dir %s: %w", p, err)
			}
			for _, f := range files {
				if err := s.fsys.Remove(filepath.Join(p, f.Name())); err != nil {
					return fmt.Errorf("consumequeue: remove %s: %w", f.Name(), err)
				}
			}
		}
		if err := s.fsys.Remove(p); err != nil {
			return fmt.Errorf("consumequeue: remove %s: %w", p, err)
		}
	}
	if err := s.fsys.Remove(dir); err != nil {
		return fmt.Errorf("consumequeue: remove %s: %w", dir, err)
	}
	if err := s.fsys.SyncDir(filepath.Dir(dir)); err != nil {
		return fmt.Errorf("consumequeue: sync %s: %w", filepath.Dir(dir), err)
	}
	return nil
}

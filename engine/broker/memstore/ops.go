package memstore

import "strings"

// DeleteTopicData implements broker.MessageStore: the topic's queues and
// its key index entries go; the records stay readable by commit-log
// offset, as in a commit log.
func (s *Store) DeleteTopicData(topic string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.mu.queues {
		if k.topic == topic {
			delete(s.mu.queues, k)
		}
	}
	for k := range s.mu.index {
		if strings.HasPrefix(k, topic+"#") {
			delete(s.mu.index, k)
		}
	}
	return nil
}

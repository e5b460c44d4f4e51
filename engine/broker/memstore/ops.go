package memstore

import (
	"slices"
	"strings"
)

// splitOffsetKey splits a "group@topic@queueId" key (group names may hold
// '@'; topics and queue ids do not).
func splitOffsetKey(k string) (group, topic string, ok bool) {
	i := strings.LastIndexByte(k, '@')
	if i < 0 {
		return "", "", false
	}
	j := strings.LastIndexByte(k[:i], '@')
	if j < 0 {
		return "", "", false
	}
	return k[:j], k[j+1 : i], true
}

// OffsetGroups implements broker.MessageStore.
func (s *Store) OffsetGroups(topic string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for k := range s.mu.offsets {
		if g, t, ok := splitOffsetKey(k); ok && t == topic && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

// DeleteGroupOffsets implements broker.MessageStore.
func (s *Store) DeleteGroupOffsets(group string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.mu.offsets {
		if g, _, ok := splitOffsetKey(k); ok && g == group {
			delete(s.mu.offsets, k)
		}
	}
	return nil
}

// DeleteTopicData implements broker.MessageStore: the topic's queues, its
// key index entries and every group's offsets on it go; the records stay
// readable by commit-log offset, as in a commit log.
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
	for k := range s.mu.offsets {
		if _, t, ok := splitOffsetKey(k); ok && t == topic {
			delete(s.mu.offsets, k)
		}
	}
	return nil
}

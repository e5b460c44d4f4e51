package admin

import (
	"slices"
	"strings"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// ConsumerLag is one consumer group's backlog on one topic, computed as
// RocketMQ's ConsumerLagCalculator does for a pull consumer: over the
// topic's write queues, the queue's max offset minus the group's committed
// offset (a queue without a committed offset counts as caught up).
type ConsumerLag struct {
	Group, Topic string
	// Lag is the number of messages stored but not yet consumed.
	Lag int64
	// EarliestUnconsumed is the store timestamp (ms) of the oldest message
	// not yet consumed over the queues that lag, 0 when none does (or it
	// could not be read).
	EarliestUnconsumed int64
	// Online reports a live consumer of the group subscribed to the topic.
	Online bool
}

// ConsumerLags returns the lag of every (group, topic) pair the broker
// knows of: groups with offsets committed for the topic and online groups
// subscribed to it, sorted by group then topic. Retry and dead-letter
// topics are left out (they are the group's own, as in RocketMQ's lag
// metrics). Call it only after the broker's Start.
func (s *Service) ConsumerLags() []ConsumerLag {
	online := s.deps.Clients.ConsumerGroupNames()
	var out []ConsumerLag
	for topic, tc := range s.deps.Meta.Topics.Wrapper().TopicConfigTable {
		if strings.HasPrefix(topic, protocol.RetryTopicPrefix) || strings.HasPrefix(topic, protocol.DLQTopicPrefix) {
			continue
		}
		groups := map[string]bool{}
		for _, g := range s.deps.Meta.Offsets.Groups(topic) {
			groups[g] = false
		}
		for _, g := range online {
			if s.deps.Clients.Subscription(g, topic) != nil {
				groups[g] = true
			}
		}
		for g, on := range groups {
			l := ConsumerLag{Group: g, Topic: topic, Online: on}
			for q := range tc.WriteQueueNums {
				off, ok := s.deps.Meta.Offsets.Query(g, topic, q)
				if !ok || off < 0 {
					continue
				}
				maxOff := s.deps.Store.MaxOffset(topic, q)
				if maxOff <= off {
					continue
				}
				l.Lag += maxOff - off
				if ts := s.deps.Store.StoreTime(topic, q, off); ts > 0 && (l.EarliestUnconsumed == 0 || ts < l.EarliestUnconsumed) {
					l.EarliestUnconsumed = ts
				}
			}
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b ConsumerLag) int {
		if c := strings.Compare(a.Group, b.Group); c != 0 {
			return c
		}
		return strings.Compare(a.Topic, b.Topic)
	})
	return out
}

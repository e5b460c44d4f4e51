package broker

import "slices"

// The MessageStore calls of the operator features (ops.go) on an
// engine/store store.

func (a storeAdapter) OffsetGroups(topic string) []string {
	g := a.s.ConsumerGroups(topic)
	slices.Sort(g)
	return g
}

func (a storeAdapter) DeleteGroupOffsets(group string) error { return a.s.DeleteGroupOffsets(group) }

func (a storeAdapter) DeleteTopicData(topic string) error { return a.s.DeleteTopicData(topic) }

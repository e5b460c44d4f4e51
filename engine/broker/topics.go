package broker

import (
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// topicTable is the broker's topic configs (TopicConfigManager) with the
// DataVersion the name servers compare. Safe for concurrent use; every change
// is written through to the store and announced by onChange (which must not
// block). Each topic remembers the DataVersion counter of its last change
// (deletions included), so a caller can wait until the name servers took a
// registration at least that new (Broker.awaitRegistered).
type topicTable struct {
	store    MessageStore
	onChange func()

	mu struct {
		sync.RWMutex
		configs map[string]protocol.TopicConfig
		changed map[string]int64 // topic → DataVersion counter of its last change
		version protocol.DataVersion
	}
}

func newTopicTable(store MessageStore, onChange func()) *topicTable {
	t := &topicTable{store: store, onChange: onChange}
	t.mu.configs = store.TopicConfigs()
	if t.mu.configs == nil {
		t.mu.configs = make(map[string]protocol.TopicConfig)
	}
	t.mu.changed = make(map[string]int64)
	t.mu.version = protocol.DataVersion{Timestamp: time.Now().UnixMilli()}
	return t
}

func (t *topicTable) get(topic string) (protocol.TopicConfig, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	tc, ok := t.mu.configs[topic]
	return tc, ok
}

// getVersioned is get plus the DataVersion counter of the topic's last
// change (0 for topics unchanged since the table was loaded).
func (t *topicTable) getVersioned(topic string) (protocol.TopicConfig, int64, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	tc, ok := t.mu.configs[topic]
	return tc, t.mu.changed[topic], ok
}

// put stores tc, replacing any config of the same name, and returns the
// DataVersion counter of the topic's last change (this one, or the earlier
// one when tc changes nothing).
func (t *topicTable) put(tc protocol.TopicConfig) (int64, error) {
	if tc.Attributes == nil {
		tc.Attributes = map[string]string{}
	}
	if tc.TopicFilterType == "" {
		tc.TopicFilterType = "SINGLE_TAG"
	}
	t.mu.Lock()
	old, existed := t.mu.configs[tc.TopicName]
	if existed && sameTopicConfig(old, tc) {
		ver := t.mu.changed[tc.TopicName]
		t.mu.Unlock()
		return ver, nil
	}
	if err := t.store.UpdateTopicConfig(tc); err != nil {
		t.mu.Unlock()
		return 0, err
	}
	t.mu.configs[tc.TopicName] = tc
	ver := t.bumpLocked(tc.TopicName)
	t.mu.Unlock()
	t.onChange()
	return ver, nil
}

// createIfAbsent stores tc unless a config of that name exists, and returns
// the config in force, whether it was created now, and the DataVersion
// counter of the topic's last change.
func (t *topicTable) createIfAbsent(tc protocol.TopicConfig) (protocol.TopicConfig, bool, int64, error) {
	if cur, ver, ok := t.getVersioned(tc.TopicName); ok {
		return cur, false, ver, nil
	}
	t.mu.Lock()
	if cur, ok := t.mu.configs[tc.TopicName]; ok {
		ver := t.mu.changed[tc.TopicName]
		t.mu.Unlock()
		return cur, false, ver, nil
	}
	if tc.Attributes == nil {
		tc.Attributes = map[string]string{}
	}
	if tc.TopicFilterType == "" {
		tc.TopicFilterType = "SINGLE_TAG"
	}
	if err := t.store.UpdateTopicConfig(tc); err != nil {
		t.mu.Unlock()
		return protocol.TopicConfig{}, false, 0, err
	}
	t.mu.configs[tc.TopicName] = tc
	ver := t.bumpLocked(tc.TopicName)
	t.mu.Unlock()
	t.onChange()
	return tc, true, ver, nil
}

// delete forgets topic; it returns whether it existed and the DataVersion
// counter of the topic's last change (the deletion, or the earlier one).
func (t *topicTable) delete(topic string) (bool, int64, error) {
	t.mu.Lock()
	if _, ok := t.mu.configs[topic]; !ok {
		ver := t.mu.changed[topic]
		t.mu.Unlock()
		return false, ver, nil
	}
	if err := t.store.DeleteTopicConfig(topic); err != nil {
		t.mu.Unlock()
		return false, 0, err
	}
	delete(t.mu.configs, topic)
	ver := t.bumpLocked(topic)
	t.mu.Unlock()
	t.onChange()
	return true, ver, nil
}

// bumpLocked moves the DataVersion on for a change of topic and returns
// the new counter. REQUIRES: t.mu held for writing.
func (t *topicTable) bumpLocked(topic string) int64 {
	t.mu.version.Counter++
	t.mu.version.Timestamp = time.Now().UnixMilli()
	t.mu.changed[topic] = t.mu.version.Counter
	return t.mu.version.Counter
}

// wrapper returns a copy of the table with its version (GET_ALL_TOPIC_CONFIG
// and REGISTER_BROKER).
func (t *topicTable) wrapper() protocol.TopicConfigSerializeWrapper {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return protocol.TopicConfigSerializeWrapper{
		DataVersion:      t.mu.version,
		TopicConfigTable: maps.Clone(t.mu.configs),
	}
}

func (t *topicTable) dataVersion() protocol.DataVersion {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.mu.version
}

func sameTopicConfig(a, b protocol.TopicConfig) bool {
	return a.TopicName == b.TopicName && a.Perm == b.Perm && a.ReadQueueNums == b.ReadQueueNums &&
		a.WriteQueueNums == b.WriteQueueNums && a.TopicSysFlag == b.TopicSysFlag && a.Order == b.Order &&
		a.TopicFilterType == b.TopicFilterType && maps.Equal(a.Attributes, b.Attributes)
}

func isRetryTopic(topic string) bool { return strings.HasPrefix(topic, protocol.RetryTopicPrefix) }

func isDLQTopic(topic string) bool { return strings.HasPrefix(topic, protocol.DLQTopicPrefix) }

func readable(tc protocol.TopicConfig) bool { return tc.Perm&protocol.PermRead != 0 }

func writable(tc protocol.TopicConfig) bool { return tc.Perm&protocol.PermWrite != 0 }

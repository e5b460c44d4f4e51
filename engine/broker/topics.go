package broker

import (
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/record"
)

// System topics the broker knows.
const (
	// DefaultTopic is the template of auto-created topics (TBW102).
	DefaultTopic = "TBW102"
	// ScheduleTopic holds delayed messages, one queue per delay level, as
	// in RocketMQ. Clients may not send to it (NO_PERMISSION); the broker's
	// own writes pass because the store checks record.ValidateStored.
	ScheduleTopic = "SCHEDULE_TOPIC_XXXX"
)

// RetryTopic is the retry topic of a consumer group.
func RetryTopic(group string) string { return record.RetryTopicPrefix + group }

// DLQTopic is the dead-letter topic of a consumer group.
func DLQTopic(group string) string { return record.DLQTopicPrefix + group }

// topicTable is the broker's topic configs (TopicConfigManager) with the
// DataVersion the name servers compare. Safe for concurrent use; every change
// is written through to the store and announced by onChange (which must not
// block).
type topicTable struct {
	store    MessageStore
	onChange func()

	mu struct {
		sync.RWMutex
		configs map[string]namesrv.TopicConfig
		version namesrv.DataVersion
	}
}

func newTopicTable(store MessageStore, onChange func()) *topicTable {
	t := &topicTable{store: store, onChange: onChange}
	t.mu.configs = store.TopicConfigs()
	if t.mu.configs == nil {
		t.mu.configs = make(map[string]namesrv.TopicConfig)
	}
	t.mu.version = namesrv.DataVersion{Timestamp: time.Now().UnixMilli()}
	return t
}

func (t *topicTable) get(topic string) (namesrv.TopicConfig, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	tc, ok := t.mu.configs[topic]
	return tc, ok
}

// put stores tc, replacing any config of the same name.
func (t *topicTable) put(tc namesrv.TopicConfig) error {
	if tc.Attributes == nil {
		tc.Attributes = map[string]string{}
	}
	if tc.TopicFilterType == "" {
		tc.TopicFilterType = "SINGLE_TAG"
	}
	t.mu.Lock()
	old, existed := t.mu.configs[tc.TopicName]
	if existed && sameTopicConfig(old, tc) {
		t.mu.Unlock()
		return nil
	}
	if err := t.store.UpdateTopicConfig(tc); err != nil {
		t.mu.Unlock()
		return err
	}
	t.mu.configs[tc.TopicName] = tc
	t.bumpLocked()
	t.mu.Unlock()
	t.onChange()
	return nil
}

// createIfAbsent stores tc unless a config of that name exists, and returns
// the config in force.
func (t *topicTable) createIfAbsent(tc namesrv.TopicConfig) (namesrv.TopicConfig, bool, error) {
	if cur, ok := t.get(tc.TopicName); ok {
		return cur, false, nil
	}
	t.mu.Lock()
	if cur, ok := t.mu.configs[tc.TopicName]; ok {
		t.mu.Unlock()
		return cur, false, nil
	}
	if tc.Attributes == nil {
		tc.Attributes = map[string]string{}
	}
	if tc.TopicFilterType == "" {
		tc.TopicFilterType = "SINGLE_TAG"
	}
	if err := t.store.UpdateTopicConfig(tc); err != nil {
		t.mu.Unlock()
		return namesrv.TopicConfig{}, false, err
	}
	t.mu.configs[tc.TopicName] = tc
	t.bumpLocked()
	t.mu.Unlock()
	t.onChange()
	return tc, true, nil
}

func (t *topicTable) delete(topic string) (bool, error) {
	t.mu.Lock()
	if _, ok := t.mu.configs[topic]; !ok {
		t.mu.Unlock()
		return false, nil
	}
	if err := t.store.DeleteTopicConfig(topic); err != nil {
		t.mu.Unlock()
		return false, err
	}
	delete(t.mu.configs, topic)
	t.bumpLocked()
	t.mu.Unlock()
	t.onChange()
	return true, nil
}

// bumpLocked moves the DataVersion on. REQUIRES: t.mu held for writing.
func (t *topicTable) bumpLocked() {
	t.mu.version.Counter++
	t.mu.version.Timestamp = time.Now().UnixMilli()
}

// wrapper returns a copy of the table with its version (GET_ALL_TOPIC_CONFIG
// and REGISTER_BROKER).
func (t *topicTable) wrapper() namesrv.TopicConfigSerializeWrapper {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return namesrv.TopicConfigSerializeWrapper{
		DataVersion:      t.mu.version,
		TopicConfigTable: maps.Clone(t.mu.configs),
	}
}

func (t *topicTable) dataVersion() namesrv.DataVersion {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.mu.version
}

func sameTopicConfig(a, b namesrv.TopicConfig) bool {
	return a.TopicName == b.TopicName && a.Perm == b.Perm && a.ReadQueueNums == b.ReadQueueNums &&
		a.WriteQueueNums == b.WriteQueueNums && a.TopicSysFlag == b.TopicSysFlag && a.Order == b.Order &&
		a.TopicFilterType == b.TopicFilterType && maps.Equal(a.Attributes, b.Attributes)
}

func isRetryTopic(topic string) bool { return strings.HasPrefix(topic, record.RetryTopicPrefix) }

func isDLQTopic(topic string) bool { return strings.HasPrefix(topic, record.DLQTopicPrefix) }

func readable(tc namesrv.TopicConfig) bool { return tc.Perm&namesrv.PermRead != 0 }

func writable(tc namesrv.TopicConfig) bool { return tc.Perm&namesrv.PermWrite != 0 }

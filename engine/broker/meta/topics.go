package meta

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// ErrBadTopicConfig is returned for a topic config the table refuses (an
// invalid name, a negative queue count).
var ErrBadTopicConfig = errors.New("meta: invalid topic config")

// Topics is the broker's topic table (TopicConfigManager) with the
// DataVersion the name servers compare. Safe for concurrent use; every
// change is written through to TopicsFile at once and announced by
// onChange (which must not block). Each topic remembers the DataVersion
// counter of its last change (deletions included), so a caller can wait
// until the name servers took a registration at least that new.
//
// The version the name servers see starts afresh at every load (counter
// 0, the load time); the file keeps its own, bumped on every write, as
// the store that used to own the file did.
type Topics struct {
	files    ConfigFiles // nil: in memory only
	onChange func()

	mu struct {
		sync.RWMutex
		configs     map[string]protocol.TopicConfig
		changed     map[string]int64 // topic → DataVersion counter of its last change
		version     protocol.DataVersion
		fileVersion protocol.DataVersion
	}
}

func loadTopics(files ConfigFiles, onChange func()) (*Topics, error) {
	if onChange == nil {
		onChange = func() {}
	}
	t := &Topics{files: files, onChange: onChange}
	t.mu.configs = make(map[string]protocol.TopicConfig)
	t.mu.changed = make(map[string]int64)
	t.mu.version = protocol.DataVersion{Timestamp: time.Now().UnixMilli()}
	if files == nil {
		return t, nil
	}
	_, err := files.ReadConfigFile(TopicsFile, func(b []byte) error {
		var f protocol.TopicConfigSerializeWrapper
		if err := json.Unmarshal(quoteNumericKeys(b), &f); err != nil {
			return err
		}
		t.mu.fileVersion = f.DataVersion
		t.mu.configs = make(map[string]protocol.TopicConfig, len(f.TopicConfigTable))
		for name, tc := range f.TopicConfigTable {
			if tc.TopicName == "" {
				tc.TopicName = name
			}
			t.mu.configs[name] = tc
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("meta: load %s: %w", TopicsFile, err)
	}
	return t, nil
}

// Get returns a topic's config.
func (t *Topics) Get(topic string) (protocol.TopicConfig, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	tc, ok := t.mu.configs[topic]
	return tc, ok
}

// GetVersioned is Get plus the DataVersion counter of the topic's last
// change (0 for topics unchanged since the table was loaded).
func (t *Topics) GetVersioned(topic string) (protocol.TopicConfig, int64, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	tc, ok := t.mu.configs[topic]
	return tc, t.mu.changed[topic], ok
}

// Configs returns a copy of the table.
func (t *Topics) Configs() map[string]protocol.TopicConfig {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return maps.Clone(t.mu.configs)
}

// Put stores tc, replacing any config of the same name, and returns the
// DataVersion counter of the topic's last change (this one, or the earlier
// one when tc changes nothing).
func (t *Topics) Put(tc protocol.TopicConfig) (int64, error) {
	tc, err := normalize(tc)
	if err != nil {
		return 0, err
	}
	t.mu.Lock()
	old, existed := t.mu.configs[tc.TopicName]
	if existed && SameTopicConfig(old, tc) {
		ver := t.mu.changed[tc.TopicName]
		t.mu.Unlock()
		return ver, nil
	}
	ver, err := t.changeLocked(tc.TopicName, &tc)
	t.mu.Unlock()
	if err != nil {
		return 0, err
	}
	t.onChange()
	return ver, nil
}

// CreateIfAbsent stores tc unless a config of that name exists, and returns
// the config in force, whether it was created now, and the DataVersion
// counter of the topic's last change.
func (t *Topics) CreateIfAbsent(tc protocol.TopicConfig) (protocol.TopicConfig, bool, int64, error) {
	if cur, ver, ok := t.GetVersioned(tc.TopicName); ok {
		return cur, false, ver, nil
	}
	tc, err := normalize(tc)
	if err != nil {
		return protocol.TopicConfig{}, false, 0, err
	}
	t.mu.Lock()
	if cur, ok := t.mu.configs[tc.TopicName]; ok {
		ver := t.mu.changed[tc.TopicName]
		t.mu.Unlock()
		return cur, false, ver, nil
	}
	ver, err := t.changeLocked(tc.TopicName, &tc)
	t.mu.Unlock()
	if err != nil {
		return protocol.TopicConfig{}, false, 0, err
	}
	t.onChange()
	return tc, true, ver, nil
}

// Delete forgets topic; it returns whether it existed and the DataVersion
// counter of the topic's last change (the deletion, or the earlier one).
func (t *Topics) Delete(topic string) (bool, int64, error) {
	t.mu.Lock()
	if _, ok := t.mu.configs[topic]; !ok {
		ver := t.mu.changed[topic]
		t.mu.Unlock()
		return false, ver, nil
	}
	ver, err := t.changeLocked(topic, nil)
	t.mu.Unlock()
	if err != nil {
		return false, 0, err
	}
	t.onChange()
	return true, ver, nil
}

// changeLocked sets topic's config to *tc (nil: deletes it), persists the
// table and moves the DataVersion on; the table is unchanged when the
// write fails. REQUIRES: t.mu held for writing.
func (t *Topics) changeLocked(topic string, tc *protocol.TopicConfig) (int64, error) {
	old, existed := t.mu.configs[topic]
	if tc != nil {
		t.mu.configs[topic] = *tc
	} else {
		delete(t.mu.configs, topic)
	}
	if err := t.persistLocked(); err != nil {
		if existed {
			t.mu.configs[topic] = old
		} else {
			delete(t.mu.configs, topic)
		}
		return 0, err
	}
	t.mu.version.Counter++
	t.mu.version.Timestamp = time.Now().UnixMilli()
	t.mu.changed[topic] = t.mu.version.Counter
	return t.mu.version.Counter, nil
}

// persistLocked writes the table to TopicsFile. REQUIRES: t.mu held for
// writing.
func (t *Topics) persistLocked() error {
	if t.files == nil {
		return nil
	}
	ver := t.mu.fileVersion
	ver.Counter++
	ver.Timestamp = time.Now().UnixMilli()
	b, err := json.MarshalIndent(protocol.TopicConfigSerializeWrapper{DataVersion: ver, TopicConfigTable: t.mu.configs}, "", "\t")
	if err != nil {
		return fmt.Errorf("meta: encode topics: %w", err)
	}
	if err := t.files.WriteConfigFile(TopicsFile, b); err != nil {
		return fmt.Errorf("meta: persist topics: %w", err)
	}
	t.mu.fileVersion = ver
	return nil
}

// Wrapper returns a copy of the table with its version (GET_ALL_TOPIC_CONFIG
// and REGISTER_BROKER).
func (t *Topics) Wrapper() protocol.TopicConfigSerializeWrapper {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return protocol.TopicConfigSerializeWrapper{
		DataVersion:      t.mu.version,
		TopicConfigTable: maps.Clone(t.mu.configs),
	}
}

// DataVersion is the table's version as the name servers see it.
func (t *Topics) DataVersion() protocol.DataVersion {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.mu.version
}

// normalize fills a config's defaults and checks it.
func normalize(tc protocol.TopicConfig) (protocol.TopicConfig, error) {
	if err := record.ValidateTopic(tc.TopicName); err != nil {
		return tc, fmt.Errorf("%w: %w", ErrBadTopicConfig, err)
	}
	if tc.ReadQueueNums < 0 || tc.WriteQueueNums < 0 {
		return tc, fmt.Errorf("%w: topic %s: negative queue count", ErrBadTopicConfig, tc.TopicName)
	}
	if tc.Attributes == nil {
		tc.Attributes = map[string]string{}
	}
	if tc.TopicFilterType == "" {
		tc.TopicFilterType = protocol.DefaultTopicFilterType
	}
	return tc, nil
}

// SameTopicConfig reports whether two configs say the same.
func SameTopicConfig(a, b protocol.TopicConfig) bool {
	return a.TopicName == b.TopicName && a.Perm == b.Perm && a.ReadQueueNums == b.ReadQueueNums &&
		a.WriteQueueNums == b.WriteQueueNums && a.TopicSysFlag == b.TopicSysFlag && a.Order == b.Order &&
		a.TopicFilterType == b.TopicFilterType && maps.Equal(a.Attributes, b.Attributes)
}

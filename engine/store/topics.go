package store

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/vfs"
)

// DefaultTopicConfig returns RocketMQ's defaults for a new topic: 16 read
// and write queues, read-write permission, SINGLE_TAG filtering.
func DefaultTopicConfig(name string) protocol.TopicConfig {
	tc := protocol.NewTopicConfig(name, 16)
	tc.Perm = protocol.PermRead | protocol.PermWrite
	return tc
}

// TopicsPath is config/topics.json under a store root.
func TopicsPath(root string) string { return filepath.Join(root, "config", "topics.json") }

// topicManager holds topic configs; every change is persisted at once.
// All methods are safe for concurrent use.
type topicManager struct {
	fsys vfs.FS
	path string

	mu      sync.RWMutex
	version protocol.DataVersion            // guarded by mu
	table   map[string]protocol.TopicConfig // guarded by mu
	persist sync.Mutex                      // serializes file writes
}

func loadTopics(fsys vfs.FS, root string) (*topicManager, error) {
	m := &topicManager{fsys: fsys, path: TopicsPath(root), table: map[string]protocol.TopicConfig{}}
	_, err := readFileWithBackup(fsys, m.path, func(b []byte) error {
		var f protocol.TopicConfigSerializeWrapper
		if err := json.Unmarshal(quoteNumericKeys(b), &f); err != nil {
			return err
		}
		m.version = f.DataVersion
		m.table = map[string]protocol.TopicConfig{}
		for name, tc := range f.TopicConfigTable {
			if tc.TopicName == "" {
				tc.TopicName = name
			}
			m.table[name] = tc
		}
		return nil
	})
	return m, err
}

func (m *topicManager) get(name string) (protocol.TopicConfig, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	tc, ok := m.table[name]
	return tc, ok
}

func (m *topicManager) list() []protocol.TopicConfig {
	m.mu.RLock()
	out := make([]protocol.TopicConfig, 0, len(m.table))
	for _, tc := range m.table {
		out = append(out, tc)
	}
	m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].TopicName < out[j].TopicName })
	return out
}

func (m *topicManager) dataVersion() protocol.DataVersion {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.version
}

func (m *topicManager) put(tc protocol.TopicConfig) error {
	if err := record.ValidateTopic(tc.TopicName); err != nil {
		return fmt.Errorf("store: topic config: %w", err)
	}
	if tc.ReadQueueNums < 0 || tc.WriteQueueNums < 0 {
		return fmt.Errorf("%w: topic %s: negative queue count", ErrInvalidConfig, tc.TopicName)
	}
	if tc.Attributes == nil {
		tc.Attributes = map[string]string{}
	}
	if tc.TopicFilterType == "" {
		tc.TopicFilterType = protocol.DefaultTopicFilterType
	}
	m.mu.Lock()
	m.table[tc.TopicName] = tc
	m.bumpLocked()
	m.mu.Unlock()
	return m.save()
}

func (m *topicManager) remove(name string) (bool, error) {
	m.mu.Lock()
	_, ok := m.table[name]
	if ok {
		delete(m.table, name)
		m.bumpLocked()
	}
	m.mu.Unlock()
	if !ok {
		return false, nil
	}
	return true, m.save()
}

// REQUIRES: m.mu held.
func (m *topicManager) bumpLocked() {
	m.version.Counter++
	m.version.Timestamp = time.Now().UnixMilli()
}

func (m *topicManager) save() error {
	m.persist.Lock()
	defer m.persist.Unlock()
	m.mu.RLock()
	f := protocol.TopicConfigSerializeWrapper{DataVersion: m.version, TopicConfigTable: make(map[string]protocol.TopicConfig, len(m.table))}
	for k, v := range m.table {
		f.TopicConfigTable[k] = v
	}
	m.mu.RUnlock()
	b, err := json.MarshalIndent(f, "", "\t")
	if err != nil {
		return fmt.Errorf("store: encode topics: %w", err)
	}
	if err := m.fsys.MkdirAll(filepath.Dir(m.path), 0o755); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return writeFileAtomic(m.fsys, m.path, b)
}

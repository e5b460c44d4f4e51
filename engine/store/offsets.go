package store

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/vfs"
)

// ConsumerOffsetsPath is config/consumerOffset.json under a store root.
func ConsumerOffsetsPath(root string) string {
	return filepath.Join(root, "config", "consumerOffset.json")
}

// consumerOffsetFile is ConsumerOffsetManager's JSON:
// {"offsetTable":{"topic@group":{"0":12}},"dataVersion":{...}}.
type consumerOffsetFile struct {
	DataVersion protocol.DataVersion        `json:"dataVersion"`
	OffsetTable map[string]map[string]int64 `json:"offsetTable"`
}

// offsetManager holds committed consumer offsets, keyed "topic@group";
// persisted by the store on a timer and at Close. Safe for concurrent use.
type offsetManager struct {
	fsys vfs.FS
	path string

	mu      sync.RWMutex
	table   map[string]map[int32]int64 // guarded by mu
	version protocol.DataVersion       // guarded by mu
	dirty   bool                       // guarded by mu
	persist sync.Mutex
}

func offsetKey(topic, group string) string { return topic + "@" + group }

func loadOffsets(fsys vfs.FS, root string) (*offsetManager, error) {
	m := &offsetManager{fsys: fsys, path: ConsumerOffsetsPath(root), table: map[string]map[int32]int64{}}
	_, err := readFileWithBackup(fsys, m.path, func(b []byte) error {
		var f consumerOffsetFile
		if err := json.Unmarshal(quoteNumericKeys(b), &f); err != nil {
			return err
		}
		t := map[string]map[int32]int64{}
		for key, qs := range f.OffsetTable {
			mq := map[int32]int64{}
			for q, off := range qs {
				id, err := strconv.ParseInt(q, 10, 32)
				if err != nil {
					return fmt.Errorf("queue id %q of %s: %w", q, key, err)
				}
				mq[int32(id)] = off
			}
			t[key] = mq
		}
		m.table, m.version = t, f.DataVersion
		return nil
	})
	return m, err
}

func (m *offsetManager) commit(group, topic string, queueID int32, offset int64) {
	k := offsetKey(topic, group)
	m.mu.Lock()
	defer m.mu.Unlock()
	mq := m.table[k]
	if mq == nil {
		mq = map[int32]int64{}
		m.table[k] = mq
	}
	mq[queueID] = offset
	m.dirty = true
}

func (m *offsetManager) query(group, topic string, queueID int32) (int64, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	off, ok := m.table[offsetKey(topic, group)][queueID]
	return off, ok
}

func (m *offsetManager) queryAll(group, topic string) map[int32]int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := map[int32]int64{}
	for q, off := range m.table[offsetKey(topic, group)] {
		out[q] = off
	}
	return out
}

func (m *offsetManager) groups(topic string) []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []string
	for k := range m.table {
		if t, g, ok := strings.Cut(k, "@"); ok && t == topic {
			out = append(out, g)
		}
	}
	return out
}

// save writes the table if it changed since the last save (force: always).
func (m *offsetManager) save(force bool) error {
	m.persist.Lock()
	defer m.persist.Unlock()
	m.mu.Lock()
	if !m.dirty && !force {
		m.mu.Unlock()
		return nil
	}
	m.version.Counter++
	m.version.Timestamp = time.Now().UnixMilli()
	f := consumerOffsetFile{DataVersion: m.version, OffsetTable: make(map[string]map[string]int64, len(m.table))}
	for k, mq := range m.table {
		qs := make(map[string]int64, len(mq))
		for q, off := range mq {
			qs[strconv.Itoa(int(q))] = off
		}
		f.OffsetTable[k] = qs
	}
	m.dirty = false
	m.mu.Unlock()
	b, err := json.MarshalIndent(f, "", "\t")
	if err == nil {
		if err = m.fsys.MkdirAll(filepath.Dir(m.path), 0o755); err == nil {
			err = writeFileAtomic(m.fsys, m.path, b)
		}
	}
	if err != nil {
		m.mu.Lock()
		m.dirty = true
		m.mu.Unlock()
		return fmt.Errorf("store: persist consumer offsets: %w", err)
	}
	return nil
}

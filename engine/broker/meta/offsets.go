package meta

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// consumerOffsetFile is ConsumerOffsetsFile's JSON.
type consumerOffsetFile struct {
	DataVersion protocol.DataVersion        `json:"dataVersion"`
	OffsetTable map[string]map[string]int64 `json:"offsetTable"`
}

// Offsets is the broker's committed consumer offsets
// (ConsumerOffsetManager), keyed "topic@group". Commits change memory
// only; Persist writes ConsumerOffsetsFile (the broker does so every
// FlushConsumerOffsetInterval and at shutdown), and so do the removals.
// Safe for concurrent use.
type Offsets struct {
	files ConfigFiles // nil: in memory only

	mu      sync.RWMutex
	table   map[string]map[int32]int64 // guarded by mu
	version protocol.DataVersion       // guarded by mu
	dirty   bool                       // guarded by mu
	persist sync.Mutex                 // serializes file writes
}

func offsetKey(topic, group string) string { return topic + "@" + group }

func loadOffsets(files ConfigFiles) (*Offsets, error) {
	m := &Offsets{files: files, table: map[string]map[int32]int64{}}
	if files == nil {
		return m, nil
	}
	_, err := files.ReadConfigFile(ConsumerOffsetsFile, func(b []byte) error {
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
	if err != nil {
		return nil, fmt.Errorf("meta: load %s: %w", ConsumerOffsetsFile, err)
	}
	return m, nil
}

// Commit records group's offset for (topic, queueID).
func (m *Offsets) Commit(group, topic string, queueID int32, offset int64) {
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

// Query is group's committed offset for (topic, queueID).
func (m *Offsets) Query(group, topic string, queueID int32) (int64, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	off, ok := m.table[offsetKey(topic, group)][queueID]
	return off, ok
}

// Groups returns the groups with offsets on topic, sorted.
func (m *Offsets) Groups(topic string) []string {
	m.mu.RLock()
	var out []string
	for k := range m.table {
		if t, g, ok := strings.Cut(k, "@"); ok && t == topic {
			out = append(out, g)
		}
	}
	m.mu.RUnlock()
	slices.Sort(out)
	return out
}

// RemoveTopic drops every group's offsets on topic and persists the table.
func (m *Offsets) RemoveTopic(topic string) error {
	m.remove(func(t, _ string) bool { return t == topic })
	return m.Persist(true)
}

// RemoveGroup drops every offset of group and persists the table
// (DELETE_SUBSCRIPTIONGROUP with cleanOffset).
func (m *Offsets) RemoveGroup(group string) error {
	m.remove(func(_, g string) bool { return g == group })
	return m.Persist(true)
}

func (m *Offsets) remove(match func(topic, group string) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.table {
		if t, g, ok := strings.Cut(k, "@"); ok && match(t, g) {
			delete(m.table, k)
			m.dirty = true
		}
	}
}

// Persist writes the table if it changed since the last write (force:
// always).
func (m *Offsets) Persist(force bool) error {
	if m.files == nil {
		return nil
	}
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
		err = m.files.WriteConfigFile(ConsumerOffsetsFile, b)
	}
	if err != nil {
		m.mu.Lock()
		m.dirty = true
		m.mu.Unlock()
		return fmt.Errorf("meta: persist consumer offsets: %w", err)
	}
	return nil
}

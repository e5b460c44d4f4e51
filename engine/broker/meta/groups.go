package meta

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// DecodeSubscriptionGroupConfig parses an UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
// body: fields it leaves out keep their defaults, as fastjson fills a new
// Java object.
func DecodeSubscriptionGroupConfig(body []byte) (protocol.SubscriptionGroupConfig, error) {
	c := protocol.DefaultSubscriptionGroupConfig("")
	if err := json.Unmarshal(body, &c); err != nil {
		return c, fmt.Errorf("meta: subscription group config: %w", err)
	}
	if c.Attributes == nil {
		c.Attributes = map[string]string{}
	}
	return c, nil
}

// groupNamePattern is the 5.x rule for group names (TopicValidator /
// SubscriptionGroupManager): letters, digits, '%', '|', '_' and '-'.
var groupNamePattern = regexp.MustCompile(`^[%|a-zA-Z0-9_-]+$`)

// maxGroupNameLength is the 5.x limit on a group name.
const maxGroupNameLength = 120

// ErrBadGroupName is returned for a name the 5.x broker refuses.
var ErrBadGroupName = errors.New("meta: invalid subscription group name")

// ValidateGroupName checks a group name against the 5.x rules.
func ValidateGroupName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: the group name is blank", ErrBadGroupName)
	case len(name) > maxGroupNameLength:
		return fmt.Errorf("%w: the group name %q is longer than %d characters", ErrBadGroupName, name, maxGroupNameLength)
	case !groupNamePattern.MatchString(name):
		return fmt.Errorf("%w: the group name %q contains characters outside %s", ErrBadGroupName, name, groupNamePattern)
	}
	return nil
}

// Groups is the broker's SubscriptionGroupManager: the configured
// consumer groups, persisted to SubscriptionGroupFile through save (nil:
// kept in memory only). Safe for concurrent use; writes are serialized by
// saveMu so the file always holds the newest table.
type Groups struct {
	save func([]byte) error

	saveMu sync.Mutex // held across a change and its write
	mu     struct {
		sync.RWMutex
		table     map[string]protocol.SubscriptionGroupConfig
		forbidden map[string]map[string]int32
		version   protocol.DataVersion
	}
}

// loadGroups builds the table from a file's content (nil: empty).
func loadGroups(content []byte, save func([]byte) error) (*Groups, error) {
	t := &Groups{save: save}
	t.mu.table = map[string]protocol.SubscriptionGroupConfig{}
	t.mu.forbidden = map[string]map[string]int32{}
	t.mu.version = protocol.DataVersion{Timestamp: time.Now().UnixMilli()}
	if len(content) == 0 {
		return t, nil
	}
	var w protocol.SubscriptionGroupWrapper
	if err := json.Unmarshal(content, &w); err != nil {
		return nil, fmt.Errorf("meta: %s: %w", SubscriptionGroupFile, err)
	}
	t.putAllLocked(w.SubscriptionGroupTable)
	if w.ForbiddenTable != nil {
		t.mu.forbidden = w.ForbiddenTable
	}
	t.mu.version = w.DataVersion
	return t, nil
}

// putAllLocked puts each of a wire table's configs into the table, keyed
// by its name there: an empty GroupName becomes that name and nil
// Attributes an empty map. The caller holds t.mu (or owns t alone).
func (t *Groups) putAllLocked(table map[string]protocol.SubscriptionGroupConfig) {
	for name, c := range table {
		if c.GroupName == "" {
			c.GroupName = name
		}
		if c.Attributes == nil {
			c.Attributes = map[string]string{}
		}
		t.mu.table[name] = c
	}
}

// Get returns a group's config.
func (t *Groups) Get(name string) (protocol.SubscriptionGroupConfig, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	c, ok := t.mu.table[name]
	return c, ok
}

// Put stores c (creating or replacing its group) and persists the table.
func (t *Groups) Put(c protocol.SubscriptionGroupConfig) error {
	t.saveMu.Lock()
	defer t.saveMu.Unlock()
	t.mu.Lock()
	old, existed := t.mu.table[c.GroupName]
	t.mu.table[c.GroupName] = c
	t.bumpLocked()
	t.mu.Unlock()
	if err := t.persistLocked(); err != nil {
		t.mu.Lock()
		if existed {
			t.mu.table[c.GroupName] = old
		} else {
			delete(t.mu.table, c.GroupName)
		}
		t.mu.Unlock()
		return err
	}
	return nil
}

// CreateIfAbsent stores DefaultSubscriptionGroupConfig(name) unless the
// group exists, and returns the config in force.
func (t *Groups) CreateIfAbsent(name string) (protocol.SubscriptionGroupConfig, error) {
	if c, ok := t.Get(name); ok {
		return c, nil
	}
	t.saveMu.Lock()
	defer t.saveMu.Unlock()
	if c, ok := t.Get(name); ok {
		return c, nil
	}
	c := protocol.DefaultSubscriptionGroupConfig(name)
	t.mu.Lock()
	t.mu.table[name] = c
	t.bumpLocked()
	t.mu.Unlock()
	if err := t.persistLocked(); err != nil {
		t.mu.Lock()
		delete(t.mu.table, name)
		t.mu.Unlock()
		return c, err
	}
	return c, nil
}

// Delete removes a group (false if there was none) and persists the table.
func (t *Groups) Delete(name string) (bool, error) {
	t.saveMu.Lock()
	defer t.saveMu.Unlock()
	t.mu.Lock()
	old, ok := t.mu.table[name]
	if ok {
		delete(t.mu.table, name)
		delete(t.mu.forbidden, name)
		t.bumpLocked()
	}
	t.mu.Unlock()
	if !ok {
		return false, nil
	}
	if err := t.persistLocked(); err != nil {
		t.mu.Lock()
		t.mu.table[name] = old
		t.mu.Unlock()
		return false, err
	}
	return true, nil
}

// Replace makes the table a copy of w (a slave taking its master's table),
// unless it already has w's DataVersion, and persists it.
func (t *Groups) Replace(w protocol.SubscriptionGroupWrapper) error {
	t.saveMu.Lock()
	defer t.saveMu.Unlock()
	t.mu.Lock()
	if t.mu.version == w.DataVersion {
		t.mu.Unlock()
		return nil
	}
	t.mu.table = map[string]protocol.SubscriptionGroupConfig{}
	t.putAllLocked(w.SubscriptionGroupTable)
	t.mu.forbidden = map[string]map[string]int32{}
	for g, m := range w.ForbiddenTable {
		t.mu.forbidden[g] = maps.Clone(m)
	}
	t.mu.version = w.DataVersion
	t.mu.Unlock()
	return t.persistLocked()
}

// Names returns the configured groups, sorted.
func (t *Groups) Names() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Sorted(maps.Keys(t.mu.table))
}

// Wrapper returns a copy of the table with its version.
func (t *Groups) Wrapper() protocol.SubscriptionGroupWrapper {
	t.mu.RLock()
	defer t.mu.RUnlock()
	w := protocol.SubscriptionGroupWrapper{
		DataVersion:            t.mu.version,
		ForbiddenTable:         make(map[string]map[string]int32, len(t.mu.forbidden)),
		SubscriptionGroupTable: maps.Clone(t.mu.table),
	}
	for g, m := range t.mu.forbidden {
		w.ForbiddenTable[g] = maps.Clone(m)
	}
	return w
}

// REQUIRES: t.mu held for writing.
func (t *Groups) bumpLocked() {
	t.mu.version.Counter++
	t.mu.version.Timestamp = time.Now().UnixMilli()
}

// REQUIRES: t.saveMu held.
func (t *Groups) persistLocked() error {
	if t.save == nil {
		return nil
	}
	b, err := json.MarshalIndent(t.Wrapper(), "", "\t")
	if err != nil {
		return fmt.Errorf("meta: encode subscription groups: %w", err)
	}
	if err := t.save(b); err != nil {
		return fmt.Errorf("meta: persist subscription groups: %w", err)
	}
	return nil
}

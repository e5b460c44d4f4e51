package meta

import "sync"

// ConfigFiles is where the managers keep their tables: named files under
// the store's config directory (engine/store's ReadConfigFile and
// WriteConfigFile, RocketMQ's ConfigManager). A message store offers it
// as an optional capability; without one the tables live in memory only.
//
// ReadConfigFile hands decode the file's content (falling back to a
// previous version when the file is missing, empty or fails decode) and
// returns false when there is none. WriteConfigFile replaces a file
// atomically: a crash leaves the old or the new content. Both may be
// called concurrently; writers of one name serialize themselves.
type ConfigFiles interface {
	ReadConfigFile(name string, decode func([]byte) error) (bool, error)
	WriteConfigFile(name string, data []byte) error
}

// File names under the config directory, as RocketMQ names them.
const (
	// TopicsFile is the topic table, TopicConfigSerializeWrapper's JSON:
	// {"dataVersion":{...},"topicConfigTable":{"<topic>":<TopicConfig>}}.
	TopicsFile = "topics.json"
	// ConsumerOffsetsFile is ConsumerOffsetManager's JSON:
	// {"offsetTable":{"topic@group":{"0":12}},"dataVersion":{...}}
	// (queue ids as bare integers, as fastjson writes them, are read too).
	ConsumerOffsetsFile = "consumerOffset.json"
	// SubscriptionGroupFile is the subscription group table, RocketMQ's
	// subscriptionGroup.json:
	//
	//	{"dataVersion":{"counter":N,"stateVersion":0,"timestamp":ms},
	//	 "forbiddenTable":{},
	//	 "subscriptionGroupTable":{"<group>":<SubscriptionGroupConfig>, ...}}
	SubscriptionGroupFile = "subscriptionGroup.json"
)

// MemFiles is ConfigFiles in memory, for stores without a directory
// (memstore): a file lives as long as the value. Safe for concurrent use.
type MemFiles struct {
	mu    sync.Mutex
	files map[string][]byte
}

// ReadConfigFile implements ConfigFiles.
func (m *MemFiles) ReadConfigFile(name string, decode func([]byte) error) (bool, error) {
	m.mu.Lock()
	b, ok := m.files[name]
	m.mu.Unlock()
	if !ok || len(b) == 0 {
		return false, nil
	}
	return true, decode(b)
}

// WriteConfigFile implements ConfigFiles; data is copied.
func (m *MemFiles) WriteConfigFile(name string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[string][]byte{}
	}
	m.files[name] = append([]byte(nil), data...)
	return nil
}

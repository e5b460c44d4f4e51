package meta_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/brokerlab/brokerlab/engine/broker/meta"
	"github.com/brokerlab/brokerlab/engine/protocol"
)

// dirFiles is meta.ConfigFiles over a directory, plain writes (the atomic
// replacement and .bak fallback are engine/store's, tested there).
type dirFiles string

func (d dirFiles) ReadConfigFile(name string, decode func([]byte) error) (bool, error) {
	b, err := os.ReadFile(filepath.Join(string(d), name))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, decode(b)
}

func (d dirFiles) WriteConfigFile(name string, data []byte) error {
	return os.WriteFile(filepath.Join(string(d), name), data, 0o644)
}

func load(t *testing.T, files meta.ConfigFiles) *meta.Service {
	t.Helper()
	s := meta.New(meta.Deps{})
	if err := s.Load(files); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOffsetsPersistAcrossLoad(t *testing.T) {
	dir := dirFiles(t.TempDir())
	s := load(t, dir)
	o := s.Offsets
	o.Commit("G", "T", 0, 12)
	o.Commit("G", "T", 3, 7)
	o.Commit("H", "T", 0, 1)
	o.Commit("G", "T", 0, 13)
	if err := o.Persist(false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(string(dir), meta.ConsumerOffsetsFile))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		OffsetTable map[string]map[string]int64 `json:"offsetTable"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if want := map[string]map[string]int64{"T@G": {"0": 13, "3": 7}, "T@H": {"0": 1}}; !reflect.DeepEqual(f.OffsetTable, want) {
		t.Fatalf("offset table %v", f.OffsetTable)
	}

	o = load(t, dir).Offsets
	if off, ok := o.Query("G", "T", 0); !ok || off != 13 {
		t.Fatalf("G/T/0 after load: %d %v", off, ok)
	}
	if off, ok := o.Query("G", "T", 3); !ok || off != 7 {
		t.Fatalf("G/T/3 after load: %d %v", off, ok)
	}
	if _, ok := o.Query("G", "T", 1); ok {
		t.Fatal("an offset never committed")
	}
	if g := o.Groups("T"); !slices.Equal(g, []string{"G", "H"}) {
		t.Fatalf("groups %v", g)
	}
	if err := o.RemoveGroup("H"); err != nil {
		t.Fatal(err)
	}
	if err := o.RemoveTopic("T"); err != nil {
		t.Fatal(err)
	}
	if g := load(t, dir).Offsets.Groups("T"); len(g) != 0 {
		t.Fatalf("groups after the removals were persisted: %v", g)
	}
}

// fastjson's bare integer keys (a consumerOffset.json Java wrote) are read.
func TestOffsetsReadUnquotedKeys(t *testing.T) {
	dir := dirFiles(t.TempDir())
	raw := `{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1},"offsetTable":{"T@G":{0:12,1:5,15:-1},"%RETRY%G@G":{0:2}}}`
	if err := dir.WriteConfigFile(meta.ConsumerOffsetsFile, []byte(raw)); err != nil {
		t.Fatal(err)
	}
	o := load(t, dir).Offsets
	for _, c := range []struct {
		topic string
		q     int32
		want  int64
	}{{"T", 0, 12}, {"T", 1, 5}, {"T", 15, -1}, {"%RETRY%G", 0, 2}} {
		if off, ok := o.Query("G", c.topic, c.q); !ok || off != c.want {
			t.Errorf("%s/%d = %d %v, want %d", c.topic, c.q, off, ok, c.want)
		}
	}
}

func TestTopicsPersistence(t *testing.T) {
	dir := dirFiles(t.TempDir())
	changes := 0
	s := meta.New(meta.Deps{OnTopicsChange: func() { changes++ }})
	if err := s.Load(dir); err != nil {
		t.Fatal(err)
	}
	tp := s.Topics
	a := protocol.NewTopicConfig("A", 16)
	a.Perm = protocol.PermRead | protocol.PermWrite
	if _, err := tp.Put(a); err != nil {
		t.Fatal(err)
	}
	b := protocol.TopicConfig{TopicName: "B", ReadQueueNums: 4, WriteQueueNums: 4, Perm: protocol.PermRead | protocol.PermWrite, Order: true}
	if _, err := tp.Put(b); err != nil {
		t.Fatal(err)
	}
	if _, created, _, err := tp.CreateIfAbsent(protocol.TopicConfig{TopicName: "C", ReadQueueNums: 1, WriteQueueNums: 1, Perm: protocol.PermRead}); !created || err != nil {
		t.Fatalf("create C: %v %v", created, err)
	}
	if ok, _, err := tp.Delete("C"); !ok || err != nil {
		t.Fatalf("delete C: %v %v", ok, err)
	}
	if ok, _, _ := tp.Delete("C"); ok {
		t.Fatal("deleted C twice")
	}
	if _, err := tp.Put(protocol.TopicConfig{TopicName: "bad topic"}); !errors.Is(err, meta.ErrBadTopicConfig) {
		t.Fatalf("invalid topic name: %v", err)
	}
	if dv := tp.DataVersion(); dv.Counter != 4 || changes != 4 {
		t.Fatalf("data version %+v after %d changes", dv, changes)
	}

	raw, err := os.ReadFile(filepath.Join(string(dir), meta.TopicsFile))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]map[string]any
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if c, _ := f["dataVersion"]["counter"].(float64); c != 4 {
		t.Fatalf("topics.json dataVersion %v", f["dataVersion"])
	}
	tb, _ := f["topicConfigTable"]["B"].(map[string]any)
	for _, k := range []string{"attributes", "order", "perm", "readQueueNums", "topicFilterType", "topicName", "topicSysFlag", "writeQueueNums"} {
		if _, ok := tb[k]; !ok {
			t.Fatalf("topic config lacks %q: %s", k, raw)
		}
	}

	tp = load(t, dir).Topics
	got, ok := tp.Get("B")
	b.Attributes, b.TopicFilterType = map[string]string{}, "SINGLE_TAG"
	if !ok || !reflect.DeepEqual(got, b) {
		t.Fatalf("B after load: %+v", got)
	}
	if _, ok := tp.Get("C"); ok {
		t.Fatal("deleted topic came back")
	}
	if cs := tp.Configs(); len(cs) != 2 || cs["A"].ReadQueueNums != 16 {
		t.Fatalf("topics %+v", cs)
	}
}

// Without files the tables live in memory; MemFiles keeps them across loads.
func TestMemFiles(t *testing.T) {
	var files meta.MemFiles
	s := load(t, &files)
	if _, err := s.Topics.Put(protocol.NewTopicConfig("T", 2)); err != nil {
		t.Fatal(err)
	}
	s.Offsets.Commit("G", "T", 1, 9)
	if err := s.Offsets.Persist(false); err != nil {
		t.Fatal(err)
	}
	s = load(t, &files)
	if _, ok := s.Topics.Get("T"); !ok {
		t.Fatal("topic lost")
	}
	if off, ok := s.Offsets.Query("G", "T", 1); !ok || off != 9 {
		t.Fatalf("offset %d %v", off, ok)
	}
	if s := load(t, nil); len(s.Topics.Configs()) != 0 {
		t.Fatal("a table without files is not empty")
	}
}

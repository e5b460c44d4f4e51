package store

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/protocol"
)

func TestConsumerOffsetsPersistAcrossRestart(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Async)
	s := openStore(t, cfg)
	s.CommitOffset("G", "T", 0, 12)
	s.CommitOffset("G", "T", 3, 7)
	s.CommitOffset("H", "T", 0, 1)
	s.CommitOffset("G", "T", 0, 13)
	mustClose(t, s)

	b, err := os.ReadFile(ConsumerOffsetsPath(cfg.Root))
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

	s = openStore(t, cfg)
	defer mustClose(t, s)
	if s.QueryOffset("G", "T", 0) != 13 || s.QueryOffset("G", "T", 3) != 7 || s.QueryOffset("G", "T", 1) != -1 {
		t.Fatalf("offsets after restart: %v", s.QueryOffsets("G", "T"))
	}
	if g := s.ConsumerGroups("T"); len(g) != 2 {
		t.Fatalf("groups %v", g)
	}
}

// The timer persists offsets without a Close.
func TestConsumerOffsetsPersistedOnTimer(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Async)
	cfg.FlushConsumerOffsetInterval = 5 * time.Millisecond
	s := openStore(t, cfg)
	defer mustClose(t, s)
	s.CommitOffset("G", "T", 0, 42)
	for i := 0; ; i++ {
		b, err := os.ReadFile(ConsumerOffsetsPath(cfg.Root))
		if err == nil && strings.Contains(string(b), "42") {
			return
		}
		if i > 2000 {
			t.Fatalf("consumerOffset.json not written by the timer: %s %v", b, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// fastjson's bare integer keys are read, and a broken file falls back to
// its .bak.
func TestConsumerOffsetsUnquotedKeysAndBackup(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Async)
	if err := os.MkdirAll(cfg.Root+"/config", 0o755); err != nil {
		t.Fatal(err)
	}
	raw := `{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1},"offsetTable":{"T@G":{0:12,1:5,15:-1},"%RETRY%G@G":{0:2}}}`
	if err := os.WriteFile(ConsumerOffsetsPath(cfg.Root), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, cfg)
	if s.QueryOffset("G", "T", 0) != 12 || s.QueryOffset("G", "T", 1) != 5 || s.QueryOffset("G", "T", 15) != -1 || s.QueryOffset("G", "%RETRY%G", 0) != 2 {
		t.Fatalf("offsets %v", s.QueryOffsets("G", "T"))
	}
	mustClose(t, s)
	if _, err := os.Stat(ConsumerOffsetsPath(cfg.Root) + ".bak"); err != nil {
		t.Fatalf("no .bak after a save: %v", err)
	}
	if err := os.WriteFile(ConsumerOffsetsPath(cfg.Root), []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, cfg)
	defer mustClose(t, s)
	if s.QueryOffset("G", "T", 1) != 5 {
		t.Fatalf("offsets from the .bak: %v", s.QueryOffsets("G", "T"))
	}
}

func TestQuoteNumericKeys(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":{0:12,1:5}}`:              `{"a":{"0":12,"1":5}}`,
		`{ -1 : 3 , 22:4}`:              `{ "-1" : 3 , "22":4}`,
		`{"a":[1,2,{3:4}],"b":"{5:6}"}`: `{"a":[1,2,{"3":4}],"b":"{5:6}"}`,
		`{"s":"x\"{7:8}"}`:              `{"s":"x\"{7:8}"}`,
	} {
		if got := string(quoteNumericKeys([]byte(in))); got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
}

func TestTopicConfigPersistence(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Async)
	s := openStore(t, cfg)
	if err := s.CreateOrUpdateTopic(DefaultTopicConfig("A")); err != nil {
		t.Fatal(err)
	}
	b := protocol.TopicConfig{TopicName: "B", ReadQueueNums: 4, WriteQueueNums: 4, Perm: protocol.PermRead | protocol.PermWrite, Order: true}
	if err := s.CreateOrUpdateTopic(b); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateOrUpdateTopic(protocol.TopicConfig{TopicName: "C", ReadQueueNums: 1, WriteQueueNums: 1, Perm: protocol.PermRead}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.DeleteTopic("C"); !ok || err != nil {
		t.Fatalf("delete C: %v %v", ok, err)
	}
	if ok, _ := s.DeleteTopic("C"); ok {
		t.Fatalf("deleted C twice")
	}
	if err := s.CreateOrUpdateTopic(protocol.TopicConfig{TopicName: "bad topic"}); err == nil {
		t.Fatalf("invalid topic name accepted")
	}
	dv := s.TopicsDataVersion()
	if dv.Counter != 4 || dv.Timestamp == 0 {
		t.Fatalf("data version %+v", dv)
	}
	mustClose(t, s)

	raw, err := os.ReadFile(TopicsPath(cfg.Root))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]map[string]any
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"dataVersion", "topicConfigTable"} {
		if _, ok := f[k]; !ok {
			t.Fatalf("topics.json lacks %q: %s", k, raw)
		}
	}
	tb := f["topicConfigTable"]["B"].(map[string]any)
	for _, k := range []string{"attributes", "order", "perm", "readQueueNums", "topicFilterType", "topicName", "topicSysFlag", "writeQueueNums"} {
		if _, ok := tb[k]; !ok {
			t.Fatalf("topic config lacks %q: %v", k, tb)
		}
	}
	if _, err := os.Stat(TopicsPath(cfg.Root) + ".bak"); err != nil {
		t.Fatalf("no topics.json.bak: %v", err)
	}

	s = openStore(t, cfg)
	defer mustClose(t, s)
	got, ok := s.Topic("B")
	b.Attributes, b.TopicFilterType = map[string]string{}, "SINGLE_TAG"
	if !ok || !reflect.DeepEqual(got, b) {
		t.Fatalf("B after restart: %+v", got)
	}
	if _, ok := s.Topic("C"); ok {
		t.Fatalf("deleted topic came back")
	}
	if names := s.Topics(); len(names) != 2 || names[0].TopicName != "A" || names[0].ReadQueueNums != 16 {
		t.Fatalf("topics %+v", names)
	}
	if s.TopicsDataVersion() != dv {
		t.Fatalf("data version after restart %+v, want %+v", s.TopicsDataVersion(), dv)
	}
}

package index

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

const t0 = int64(1700000000000) // a store timestamp, ms

func smallConfig() Config { return Config{MaxHashSlots: 8, MaxIndexNum: 16, MaxQueryNum: 64} }

func openService(t *testing.T, root string, cfg Config) *Service {
	t.Helper()
	s, err := Open(vfs.Default, root, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func mustPut(t *testing.T, s *Service, topic string, keys []string, phy, ts int64) {
	t.Helper()
	if err := s.Put(topic, keys, phy, ts); err != nil {
		t.Fatalf("Put(%v, %d): %v", keys, phy, err)
	}
}

func mustQuery(t *testing.T, s *Service, topic, key string, maxNum int, begin, end int64) []int64 {
	t.Helper()
	offs, _, _, err := s.Query(topic, key, maxNum, begin, end)
	if err != nil {
		t.Fatalf("Query(%s): %v", key, err)
	}
	return offs
}

func TestHeaderAndEntryBytes(t *testing.T) {
	root := t.TempDir()
	s := openService(t, root, smallConfig())
	mustPut(t, s, "T", []string{"UNIQ1", "k1"}, 100, t0)
	mustPut(t, s, "T", []string{"UNIQ2", "", "k1"}, 300, t0+2500) // empty keys are skipped
	files := s.Files()
	if len(files) != 1 {
		t.Fatalf("files = %+v", files)
	}
	f := files[0]
	h1, hk := keyHash("T", "UNIQ1"), keyHash("T", "k1")
	h2 := keyHash("T", "UNIQ2")
	slots := map[int32]bool{h1 % 8: true, hk % 8: true, h2 % 8: true}
	want := FileInfo{Name: f.Name, BeginTimestamp: t0, EndTimestamp: t0 + 2500, BeginPhyOffset: 100,
		EndPhyOffset: 300, HashSlotCount: int32(len(slots)), IndexCount: 5}
	if f != want {
		t.Fatalf("header = %+v, want %+v", f, want)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "index", f.Name))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != smallConfig().FileSize() || len(b) != 40+8*4+16*20 {
		t.Fatalf("file size %d", len(b))
	}
	be := binary.BigEndian
	if be.Uint64(b[0:]) != uint64(t0) || be.Uint64(b[8:]) != uint64(t0+2500) || be.Uint64(b[16:]) != 100 ||
		be.Uint64(b[24:]) != 300 || be.Uint32(b[32:]) != uint32(len(slots)) || be.Uint32(b[36:]) != 5 {
		t.Fatalf("header bytes %x", b[:40])
	}
	entry := func(n int) (int32, int64, int32, int32) {
		e := b[40+8*4+n*20:]
		return int32(be.Uint32(e)), int64(be.Uint64(e[4:])), int32(be.Uint32(e[12:])), int32(be.Uint32(e[16:]))
	}
	if h, phy, diff, prev := entry(0); h != 0 || phy != 0 || diff != 0 || prev != 0 {
		t.Fatal("entry 0 used")
	}
	wantPrev := int32(0)
	if hk%8 == h1%8 {
		wantPrev = 1
	}
	if h, phy, diff, prev := entry(2); h != hk || phy != 100 || diff != 0 || prev != wantPrev {
		t.Fatalf("entry 2 = %d %d %d %d", h, phy, diff, prev)
	}
	// Entry 4 is k1 again: 2 s later, chained to entry 2.
	if h, phy, diff, prev := entry(4); h != hk || phy != 300 || diff != 2 || prev != 2 {
		t.Fatalf("entry 4 = %d %d %d %d", h, phy, diff, prev)
	}
	// The slot points at the newest entry of the bucket.
	if got := be.Uint32(b[40+int(hk%8)*4:]); got != 4 {
		t.Fatalf("slot of k1 = %d", got)
	}
	if got := mustQuery(t, s, "T", "k1", 10, 0, t0+10000); !reflect.DeepEqual(got, []int64{300, 100}) {
		t.Fatalf("query k1 = %v", got)
	}
	if got := mustQuery(t, s, "T", "UNIQ2", 10, 0, t0+10000); !reflect.DeepEqual(got, []int64{300}) {
		t.Fatalf("query UNIQ2 = %v", got)
	}
	if got := mustQuery(t, s, "Other", "k1", 10, 0, t0+10000); len(got) != 0 {
		t.Fatalf("other topic = %v", got)
	}
}

func TestCollisionChains(t *testing.T) {
	cfg := Config{MaxHashSlots: 1, MaxIndexNum: 64, MaxQueryNum: 64}
	s := openService(t, t.TempDir(), cfg)
	for i := int64(0); i < 20; i++ {
		key := []string{"a", "b", "c", "d"}[i%4]
		mustPut(t, s, "T", []string{key}, i*10, t0+i*1000)
	}
	mustPut(t, s, "T", []string{"Aa"}, 1000, t0+20000)
	mustPut(t, s, "T", []string{"BB"}, 1010, t0+21000)
	if f := s.Files()[0]; f.HashSlotCount != 1 || f.IndexCount != 23 {
		t.Fatalf("header = %+v", f)
	}
	if got := mustQuery(t, s, "T", "c", 64, 0, t0+100000); !reflect.DeepEqual(got, []int64{180, 140, 100, 60, 20}) {
		t.Fatalf("query c = %v", got)
	}
	// Same hash, different keys: both returned, caller re-checks.
	if got := mustQuery(t, s, "T", "Aa", 64, 0, t0+100000); !reflect.DeepEqual(got, []int64{1010, 1000}) {
		t.Fatalf("query Aa = %v", got)
	}
}

func TestQueryTimeRangeAndCap(t *testing.T) {
	cfg := Config{MaxHashSlots: 16, MaxIndexNum: 256, MaxQueryNum: 10}
	s := openService(t, t.TempDir(), cfg)
	for i := int64(0); i < 30; i++ {
		mustPut(t, s, "T", []string{"k"}, i*100, t0+i*1000) // one per second
	}
	// [t0+5s, t0+9s] → messages 5..9, newest first; the walk stops once older.
	got := mustQuery(t, s, "T", "k", 64, t0+5000, t0+9000)
	if !reflect.DeepEqual(got, []int64{900, 800, 700, 600, 500}) {
		t.Fatalf("time range query = %v", got)
	}
	// maxNum and the MaxQueryNum cap.
	if got := mustQuery(t, s, "T", "k", 3, 0, t0+100000); !reflect.DeepEqual(got, []int64{2900, 2800, 2700}) {
		t.Fatalf("maxNum 3 = %v", got)
	}
	if got := mustQuery(t, s, "T", "k", 1000, 0, t0+100000); len(got) != 10 || got[0] != 2900 {
		t.Fatalf("capped query = %v", got)
	}
	// A range outside the file's times matches nothing.
	if got := mustQuery(t, s, "T", "k", 10, t0+100000, t0+200000); len(got) != 0 {
		t.Fatalf("future range = %v", got)
	}
	_, lastTS, lastPhy, err := s.Query("T", "k", 1, 0, 1)
	if err != nil || lastTS != t0+29000 || lastPhy != 2900 {
		t.Fatalf("last update = %d/%d, %v", lastTS, lastPhy, err)
	}
}

func TestRollWhenFullWithCallback(t *testing.T) {
	var mu sync.Mutex
	var full []int64
	cfg := Config{MaxHashSlots: 4, MaxIndexNum: 5, MaxQueryNum: 64, OnFileFull: func(ts int64) {
		mu.Lock()
		full = append(full, ts)
		mu.Unlock()
	}}
	root := t.TempDir()
	s := openService(t, root, cfg)
	for i := int64(0); i < 10; i++ { // 4 entries per file
		mustPut(t, s, "T", []string{"k"}, i*100, t0+i*1000)
	}
	files := s.Files()
	if len(files) != 3 {
		t.Fatalf("files = %+v", files)
	}
	names := []string{files[0].Name, files[1].Name, files[2].Name}
	if !sort.StringsAreSorted(names) || names[0] == names[1] || names[1] == names[2] {
		t.Fatalf("names not strictly increasing: %v", names)
	}
	if files[0].EndPhyOffset != 300 || files[1].BeginPhyOffset != 400 || files[1].EndPhyOffset != 700 ||
		files[2].BeginTimestamp != t0+8000 || files[2].IndexCount != 3 {
		t.Fatalf("files = %+v", files)
	}
	if got := mustQuery(t, s, "T", "k", 64, 0, t0+100000); !reflect.DeepEqual(got,
		[]int64{900, 800, 700, 600, 500, 400, 300, 200, 100, 0}) {
		t.Fatalf("query across files = %v", got)
	}
	// A range inside the middle file only: the walk stops after it.
	if got := mustQuery(t, s, "T", "k", 64, t0+5000, t0+6000); !reflect.DeepEqual(got, []int64{600, 500}) {
		t.Fatalf("middle query = %v", got)
	}
	// File 3 fills exactly; the next Put rolls first, seeds the new file with
	// the previous end values, and skips the re-dispatched old record.
	mustPut(t, s, "T", []string{"k"}, 1000, t0+10000)
	mustPut(t, s, "T", []string{"k"}, 1100, t0+11000)
	mustPut(t, s, "T", []string{"k"}, 500, t0+5000)
	files = s.Files()
	if len(files) != 4 {
		t.Fatalf("files = %+v", files)
	}
	if f := files[3]; f.IndexCount != 1 || f.BeginPhyOffset != 1100 || f.EndPhyOffset != 1100 ||
		f.BeginTimestamp != t0+11000 || f.EndTimestamp != t0+11000 {
		t.Fatalf("seeded file = %+v", f)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Slice(full, func(i, j int) bool { return full[i] < full[j] })
	if !reflect.DeepEqual(full, []int64{t0 + 3000, t0 + 7000, t0 + 11000}) {
		t.Fatalf("OnFileFull calls = %v", full)
	}
}

func TestNamesUniqueWithinMillisecond(t *testing.T) {
	s := openService(t, t.TempDir(), Config{MaxHashSlots: 2, MaxIndexNum: 2, MaxQueryNum: 8})
	fixed := time.Date(2024, 2, 29, 23, 59, 59, 999_000_000, time.Local)
	s.now = func() time.Time { return fixed }
	for i := int64(0); i < 3; i++ { // one entry per file
		mustPut(t, s, "T", []string{"k"}, i, t0)
	}
	var names []string
	for _, f := range s.Files() {
		names = append(names, f.Name)
	}
	want := []string{"20240229235959999", "20240301000000000", "20240301000000001"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}
}

func TestReopen(t *testing.T) {
	root := t.TempDir()
	cfg := smallConfig()
	s := openService(t, root, cfg)
	for i := int64(0); i < 10; i++ {
		mustPut(t, s, "T", []string{"k", "u" + string(rune('0'+i))}, i*100, t0+i*1000)
	}
	before := s.Files()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("T", []string{"k"}, 5000, t0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close = %v", err)
	}
	if _, _, _, err := s.Query("T", "k", 1, 0, t0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Query after Close = %v", err)
	}
	s2 := openService(t, root, cfg)
	if got := s2.Files(); !reflect.DeepEqual(got, before) {
		t.Fatalf("files after reopen = %+v, want %+v", got, before)
	}
	if got := mustQuery(t, s2, "T", "u7", 64, 0, t0+100000); !reflect.DeepEqual(got, []int64{700}) {
		t.Fatalf("query u7 = %v", got)
	}
	mustPut(t, s2, "T", []string{"k"}, 1000, t0+10000)
	if got := mustQuery(t, s2, "T", "k", 3, 0, t0+100000); !reflect.DeepEqual(got, []int64{1000, 900, 800}) {
		t.Fatalf("query k = %v", got)
	}
	// A file of the wrong size is refused, naming it.
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(root, "index", "29991231235959999")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s3 := openService(t, root, cfg)
	if len(s3.Files()) != len(before) {
		t.Fatalf("empty file loaded: %+v", s3.Files())
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Fatalf("empty file not removed: %v", err)
	}
	if err := s3.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "index", before[0].Name)
	if err := os.Truncate(path, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(vfs.Default, root, cfg); !errors.Is(err, ErrFileSize) {
		t.Fatalf("open short file = %v", err)
	}
}

func TestInvalidConfig(t *testing.T) {
	for _, cfg := range []Config{{}, {MaxHashSlots: 1, MaxIndexNum: 1, MaxQueryNum: 1}, {MaxHashSlots: 1, MaxIndexNum: 2}} {
		if _, err := Open(vfs.Default, t.TempDir(), cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("config %+v err = %v", cfg, err)
		}
	}
	if DefaultConfig().FileSize() != 420000040 {
		t.Fatal("default file size")
	}
}

package index

import (
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// go test -run '^$' -bench 'Index' -benchmem ./engine/index/

// benchConfig keeps files at ~42 MB (RocketMQ's are 420 MB) so a benchmark
// run rolls a few times without filling the disk.
func benchConfig() Config {
	return Config{MaxHashSlots: 500000, MaxIndexNum: 2000000, MaxQueryNum: 64}
}

func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "7F000001000018B4AAC2" + strconv.Itoa(1000000+i)
	}
	return keys
}

// BenchmarkIndexPut measures indexing one message with a UNIQ_KEY and one
// KEYS entry (two entries per op).
func BenchmarkIndexPut(b *testing.B) {
	s, err := Open(vfs.Default, b.TempDir(), benchConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	uniq := benchKeys(1 << 16)
	orders := make([]string, 1000)
	for i := range orders {
		orders[i] = "order-" + strconv.Itoa(i)
	}
	keys := make([]string, 2)
	b.SetBytes(2 * entrySize)
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		keys[0], keys[1] = uniq[i&(1<<16-1)], orders[i%1000]
		if err := s.Put("BenchTopic", keys, i*200, 1700000000000+i); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkIndexQuery measures a QUERY_MESSAGE lookup returning 64 offsets
// from a chain of ~200 entries per key.
func BenchmarkIndexQuery(b *testing.B) {
	const msgs, distinct = 200000, 1000
	s, err := Open(vfs.Default, b.TempDir(), benchConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	keys := benchKeys(distinct)
	for i := int64(0); i < msgs; i++ {
		if err := s.Put("BenchTopic", []string{keys[i%distinct]}, i*200, 1700000000000+i*10); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	q := 0
	for b.Loop() {
		offs, _, _, err := s.Query("BenchTopic", keys[q%distinct], 64, 0, 1800000000000)
		if err != nil || len(offs) != 64 {
			b.Fatalf("query = %d offsets, %v", len(offs), err)
		}
		q++
	}
}

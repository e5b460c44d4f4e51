package consumequeue

import (
	"testing"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// go test -run '^$' -bench 'Queue' -benchmem ./engine/consumequeue/

func benchQueue(b *testing.B) *Queue {
	b.Helper()
	q, err := OpenQueue(vfs.Default, b.TempDir(), "Bench", 0, DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = q.Close() })
	return q
}

// BenchmarkQueuePut measures one dispatcher appending units (pwrite per unit).
func BenchmarkQueuePut(b *testing.B) {
	q := benchQueue(b)
	b.SetBytes(UnitSize)
	b.ReportAllocs()
	off := int64(0)
	for b.Loop() {
		if err := q.Put(off, Unit{PhyOffset: off * 128, Size: 128, TagsCode: 7}); err != nil {
			b.Fatal(err)
		}
		off++
	}
}

// BenchmarkQueueRead measures a pull-sized batched read of 32 units.
func BenchmarkQueueRead(b *testing.B) {
	const units, batch = 100000, 32
	q := benchQueue(b)
	for off := int64(0); off < units; off++ {
		if err := q.Put(off, Unit{PhyOffset: off * 128, Size: 128}); err != nil {
			b.Fatal(err)
		}
	}
	buf := make([]Unit, 0, batch)
	b.SetBytes(batch * UnitSize)
	b.ReportAllocs()
	off := int64(0)
	for b.Loop() {
		us, err := q.Read(off, batch, buf)
		if err != nil || len(us) == 0 {
			b.Fatalf("Read(%d) = %d units, %v", off, len(us), err)
		}
		off = (off + batch) % (units - batch)
	}
}

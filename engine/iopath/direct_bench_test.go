package iopath

import (
	"testing"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// BenchmarkDirectAppend appends 64 KiB records to a 256 MiB direct segment
// (no flush): the writer's throughput against the device. It reports the
// average pwrite size and how often Append waited for a buffer.
func BenchmarkDirectAppend(b *testing.B) {
	const size = 256 << 20
	p := make([]byte, 64<<10)
	a, err := Open(Direct, vfs.Default, segPathB(b), size, 0, DefaultConfig())
	if err != nil {
		b.Skipf("direct: %v", err)
	}
	defer a.Close()
	b.SetBytes(int64(len(p)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := a.Append(p); err == ErrFull {
			b.StopTimer()
			a.Close()
			if a, err = Open(Direct, vfs.Default, segPathB(b), size, 0, DefaultConfig()); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		} else if err != nil {
			b.Fatal(err)
		}
	}
	if _, err := a.Flush(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	s := a.(Stats).IOStats()
	if s.WriteCalls > 0 {
		b.ReportMetric(float64(s.WriteBytes)/float64(s.WriteCalls), "B/write")
	}
	b.ReportMetric(float64(s.StageWaits)/float64(b.N), "waits/op")
}

func segPathB(b *testing.B) string { return b.TempDir() + "/seg" }

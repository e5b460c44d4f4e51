package commitlog

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/segment"
)

// A hole in the log (a page that never reached the disk, here a record's
// bytes zeroed) ends recovery at the hole, and the valid records written
// beyond it are zeroed too: once new appends fill the hole, the old records
// behind it must not come back at a later open.
func TestRecoveryZeroesBehindAHole(t *testing.T) {
	cfg := DefaultConfig(t.TempDir())
	cfg.Path = iopath.Pwrite
	cfg.Flush = flush.DefaultConfig(flush.Sync)
	cfg.SegmentSize = 1 << 20
	l := openLog(t, cfg)
	rng := rand.New(rand.NewPCG(3, 4))
	var rs []Result
	for i := 0; i < 20; i++ {
		r, err := l.Append(context.Background(), msg(rng, i, 300), int64(i))
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	hole := rs[10]
	path := filepath.Join(SegmentDir(cfg.Dir), segment.Name(0))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, hole.Size), hole.PhysOffset); err != nil {
		t.Fatal(err)
	}
	f.Close()

	l = openLog(t, cfg)
	rep := l.Report()
	if rep.End != hole.PhysOffset {
		t.Fatalf("recovered end %d, want the hole at %d", rep.End, hole.PhysOffset)
	}
	last := rs[len(rs)-1]
	if want := last.PhysOffset + int64(last.Size) - (hole.PhysOffset + int64(hole.Size)); rep.ZeroedBytes < want {
		t.Fatalf("zeroed %d bytes behind the hole, want at least the %d bytes of records beyond it", rep.ZeroedBytes, want)
	}
	// Fill the hole with one small record, then reopen: the log ends right
	// after it; nothing from before the hole reappears.
	small := &record.Message{Topic: "new", Body: []byte("x"), BornHost: born}
	r, err := l.Append(context.Background(), small, 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, cfg)
	defer l.Close()
	if got, want := l.MaxOffset(), r.PhysOffset+int64(r.Size); got != want {
		t.Fatalf("after the reopen the log ends at %d, want %d (stale records beyond the hole came back)", got, want)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range b[r.PhysOffset+int64(r.Size) : last.PhysOffset+int64(last.Size)] {
		if c != 0 {
			t.Fatalf("byte %d past the end is %#x, want zero", r.PhysOffset+int64(r.Size)+int64(i), c)
		}
	}
}

package iopath

import (
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

func TestBufferPool(t *testing.T) {
	p := NewBufferPool(2, 10000)
	if p.Buffers() != 2 || p.BufSize() != 10000 || p.Available() != 2 {
		t.Fatalf("new pool: %d buffers of %d, %d available", p.Buffers(), p.BufSize(), p.Available())
	}
	b1, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	if len(b1) != 10000 || uintptr(unsafe.Pointer(&b1[0]))%4096 != 0 {
		t.Fatalf("buffer of %d bytes at %p: want 10000, page-aligned", len(b1), &b1[0])
	}
	b2, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(); !errors.Is(err, ErrPoolExhausted) {
		t.Fatalf("third Get: %v, want ErrPoolExhausted", err)
	}
	b1[0] = 7
	p.Put(b1)
	p.Put(make([]byte, 10)) // not from the pool: ignored
	if p.Available() != 1 {
		t.Fatalf("Available = %d after one Put", p.Available())
	}
	b3, err := p.Get()
	if err != nil || &b3[0] != &b1[0] || b3[0] != 7 {
		t.Fatalf("Get after Put did not reuse the buffer (%v)", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(); !errors.Is(err, ErrPoolClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	p.Put(b2) // unmapped now
	p.Put(b3)

	if _, err := NewBufferPool(1, 0).Get(); !errors.Is(err, ErrBadSize) {
		t.Fatalf("zero-size pool: %v", err)
	}
	if NewBufferPool(0, 4096).Buffers() != DefaultPoolBuffers {
		t.Fatal("buffers <= 0 should mean DefaultPoolBuffers")
	}
	if DefaultBufferPool(1<<20) != DefaultBufferPool(1<<20) || DefaultBufferPool(1<<20) == DefaultBufferPool(2<<20) {
		t.Fatal("default pools are not one per segment size")
	}
	if DefaultBufferPool(1<<20).Buffers() != DefaultPoolBuffers {
		t.Fatal("default pool size")
	}
}

func TestPoolExhaustionAndEarlyReturn(t *testing.T) {
	const size = 64 << 10
	cfg := DefaultConfig()
	cfg.Pool = NewBufferPool(1, size)
	defer cfg.Pool.Close()
	a, err := Open(Pool, vfs.Default, segPath(t), size, 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := Open(Pool, vfs.Default, segPath(t), size, 0, cfg); !errors.Is(err, ErrPoolExhausted) {
		t.Fatalf("second segment on a one-buffer pool: %v", err)
	}
	// A full, completely committed segment gives its buffer back
	// (RocketMQ), and its bytes are then read from the file.
	src := randomBytes(2, size)
	appendAll(t, a, src, 1, 5000)
	if _, err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if cfg.Pool.Available() != 1 {
		t.Fatal("full and committed segment kept its buffer")
	}
	b, err := Open(Pool, vfs.Default, segPath(t), size, 0, cfg)
	if err != nil {
		t.Fatalf("open after the buffer came back: %v", err)
	}
	b.Append(randomBytes(3, 1000)) // overwrite the reused buffer
	checkRead(t, a, src, 0, size)
	b.Close()

	small := DefaultConfig()
	small.Pool = NewBufferPool(1, 4096)
	if _, err := Open(Pool, vfs.Default, segPath(t), size, 0, small); !errors.Is(err, ErrBadSize) {
		t.Fatalf("pool buffers smaller than the segment: %v", err)
	}
}

func TestPoolBackgroundCommit(t *testing.T) {
	const size = 256 << 10
	cfg := DefaultConfig()
	cfg.CommitInterval = time.Millisecond
	cfg.CommitLeastPages = 4
	cfg.Pool = NewBufferPool(1, size)
	defer cfg.Pool.Close()
	a, err := Open(Pool, vfs.Default, segPath(t), size, 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	c := a.(Committer)
	src := randomBytes(5, size)
	waitCommitted := func(want int64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); c.CommittedPos() != want; {
			if time.Now().After(deadline) {
				t.Fatalf("CommittedPos = %d, want %d: background commit did not happen", c.CommittedPos(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	appendAll(t, a, src[:5*4096], 1, 3000) // >= 4 pages pending
	waitCommitted(5 * 4096)
	appendAll(t, a, src[5*4096:5*4096+100], 1, 30) // < 4 pages: the thorough rule commits it
	waitCommitted(5*4096 + 100)
	if a.FlushedPos() != 0 {
		t.Fatal("a commit advanced FlushedPos")
	}
	checkFile(t, a.(*poolAppender).path, src[:5*4096+100])
	if fp, err := a.Flush(); err != nil || fp != 5*4096+100 {
		t.Fatalf("Flush = %d, %v", fp, err)
	}
}

func TestPoolCommitOnlyInFlushWhenIntervalZero(t *testing.T) {
	cfg := DefaultConfig()
	cfg.CommitInterval = 0
	cfg.Pool = NewBufferPool(1, 64<<10)
	defer cfg.Pool.Close()
	a, err := Open(Pool, vfs.Default, segPath(t), 64<<10, 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	src := randomBytes(1, 30000)
	appendAll(t, a, src, 1, 3000)
	if got := a.(Committer).CommittedPos(); got != 0 {
		t.Fatalf("CommittedPos = %d before any Flush", got)
	}
	checkRead(t, a, src, 0, 30000) // served from the buffer
	if _, err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := a.(Committer).CommittedPos(); got != 30000 {
		t.Fatalf("CommittedPos = %d after Flush", got)
	}
	if st := a.(Stats).IOStats(); st.WriteCalls != 1 || st.WriteBytes != 30000 {
		t.Fatalf("one Flush should commit with one pwrite: %+v", st)
	}
}

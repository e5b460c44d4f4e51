package iopath

import (
	"bytes"
	"errors"
	"testing"
)

func TestBlockCacheRing(t *testing.T) {
	if _, err := NewBlockCacheRing(1<<20, 4096, -1); !errors.Is(err, ErrBadSize) {
		t.Fatalf("negative ring: %v", err)
	}
	none, err := NewBlockCacheRing(1<<20, 4096, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer none.Close()
	if none.RingBytes() != 0 || none.PutRecent(FileID{Ino: 1}, 0, make([]byte, 4096)) {
		t.Fatal("a ring smaller than a block is not disabled")
	}
	c, err := NewBlockCacheRing(1<<20, 4096, 3*4096+100)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.RingBytes() != 3*4096 {
		t.Fatalf("RingBytes = %d", c.RingBytes())
	}
	f, g := FileID{Ino: 1}, FileID{Ino: 2}
	blk := func(b byte) []byte { return bytes.Repeat([]byte{b}, 4096) }
	if c.PutRecent(f, 0, blk(1)[:100]) {
		t.Fatal("PutRecent accepted a short block")
	}
	for i := byte(0); i < 4; i++ { // 4 blocks into 3 slots: block 0 is evicted
		if !c.PutRecent(f, int64(i), blk(10+i)) {
			t.Fatal("PutRecent refused a block")
		}
	}
	dst := make([]byte, 5000)
	if _, ok := c.ReadRecent(f, 0, dst, 0); ok {
		t.Fatal("the oldest block survived eviction")
	}
	for i := byte(1); i < 4; i++ {
		n, ok := c.ReadRecent(f, int64(i), dst, 96)
		if !ok || n != 4000 || !bytes.Equal(dst[:n], blk(10 + i)[:4000]) {
			t.Fatalf("block %d: %d, %v", i, n, ok)
		}
	}
	if _, ok := c.ReadRecent(g, 1, dst, 0); ok {
		t.Fatal("another file's block hit")
	}
	if _, ok := c.ReadRecent(f, 1, dst, 4096); ok {
		t.Fatal("a read past the block hit")
	}
	c.PutRecent(f, 2, blk(99)) // a newer copy of block 2 replaces the older
	if n, ok := c.ReadRecent(f, 2, dst, 0); !ok || n != 4096 || dst[0] != 99 {
		t.Fatal("the newest copy of a block is not served")
	}
	c.Invalidate(f)
	if _, ok := c.ReadRecent(f, 3, dst, 0); ok {
		t.Fatal("hit after Invalidate")
	}
	s := c.Stats()
	if s.RingHits != 4 || s.RingMisses != 3 || s.RingBlocks != 2 || s.Hits != 0 {
		t.Fatalf("Stats = %+v", s)
	}
}

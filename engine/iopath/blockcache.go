package iopath

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/ristretto/v2"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// FileID identifies a file to a BlockCache: device and inode when the file
// system reports them, else the path.
type FileID struct {
	Dev, Ino uint64
	Path     string
}

// FileIDOf returns f's identity.
func FileIDOf(f vfs.File) FileID {
	if fi, err := f.Stat(); err == nil {
		if dev, ino, ok := devIno(fi); ok {
			return FileID{Dev: dev, Ino: ino}
		}
	}
	return FileID{Path: f.Name()}
}

// CacheStats are a BlockCache's lookup counters.
type CacheStats struct {
	Hits, Misses uint64  // Get: ristretto lookups
	HitRatio     float64 // Hits / (Hits + Misses); 0 before any lookup
	// RingHits and RingMisses count lookups in the ring of recently written
	// blocks (which come before Get); RingBlocks is how many it holds.
	RingHits, RingMisses uint64
	RingBlocks           int
}

// DefaultRingBytes is the size of NewBlockCache's ring of recently written
// blocks.
const DefaultRingBytes = 16 << 20

// BlockCache caches aligned blocks of segment files read with O_DIRECT
// (the direct write path bypasses the page cache, so without it every read
// goes to the device). It has two parts:
//
//   - a FIFO ring of the most recently written blocks (RingBytes, allocated
//     at first use, not counted in maxBytes): the direct path puts each
//     complete block of a staging buffer into it once the buffer is on
//     disk, so the store's dispatcher and tailing consumers read fresh
//     data from memory;
//   - a ristretto cache with cost = bytes for colder blocks, filled by
//     reads that missed both (ristretto admits by frequency, so a block read
//     once may not be kept).
//
// Keys are (file, block index). Each FileID is mapped to a slot number
// (never reused); Invalidate drops the mapping, so the file's old blocks
// can no longer be found (ristretto evicts them in time). Cached blocks are immutable: Get
// returns a slice the caller must not modify.
//
// A BlockCache is safe for concurrent use. Set is asynchronous (ristretto
// buffers it): call Wait to make earlier Sets visible, e.g. in tests.
type BlockCache struct {
	c         *ristretto.Cache[uint64, []byte]
	blockSize int
	ring      *recentRing // nil when the ring is disabled
	ringBytes int64

	mu       sync.RWMutex
	slots    map[FileID]uint32
	nextSlot uint32 // guarded by mu

	hits, misses, ringHits, ringMisses atomic.Uint64
}

// NewBlockCache returns a cache holding up to maxBytes of blockSize-byte
// blocks, with a ring of DefaultRingBytes for recently written blocks.
// blockSize must be a positive multiple of 512 (an O_DIRECT sector) and the
// direct path requires it to be a multiple of the file's O_DIRECT
// alignment.
func NewBlockCache(maxBytes int64, blockSize int) (*BlockCache, error) {
	return NewBlockCacheRing(maxBytes, blockSize, DefaultRingBytes)
}

// NewBlockCacheRing is NewBlockCache with a ring of ringBytes (rounded down
// to whole blocks; 0 disables the ring).
func NewBlockCacheRing(maxBytes int64, blockSize int, ringBytes int64) (*BlockCache, error) {
	if maxBytes <= 0 || blockSize <= 0 || blockSize%512 != 0 || ringBytes < 0 {
		return nil, fmt.Errorf("%w: block cache of %d bytes, %d-byte blocks, %d-byte ring", ErrBadSize, maxBytes, blockSize, ringBytes)
	}
	counters := max(10*maxBytes/int64(blockSize), 1000)
	c, err := ristretto.NewCache(&ristretto.Config[uint64, []byte]{
		NumCounters:        counters,
		MaxCost:            maxBytes,
		BufferItems:        64,
		IgnoreInternalCost: true,
	})
	if err != nil {
		return nil, fmt.Errorf("iopath: block cache: %w", err)
	}
	ring := newRecentRing(ringBytes, blockSize)
	if ring == nil {
		ringBytes = 0
	} else {
		ringBytes = int64(ring.slots) * int64(blockSize)
	}
	return &BlockCache{c: c, blockSize: blockSize, ring: ring, ringBytes: ringBytes, slots: map[FileID]uint32{}}, nil
}

// BlockSize is the size of every cached block.
func (bc *BlockCache) BlockSize() int { return bc.blockSize }

// RingBytes is the size of the ring of recently written blocks (0: none).
func (bc *BlockCache) RingBytes() int64 { return bc.ringBytes }

// PutRecent puts a copy of data, which must be exactly BlockSize bytes, the
// final content of block number block of file id, into the ring of recently
// written blocks (evicting the oldest). It reports whether the block was
// stored (false without a ring).
func (bc *BlockCache) PutRecent(id FileID, block int64, data []byte) bool {
	if bc.ring == nil || len(data) != bc.blockSize {
		return false
	}
	k, ok := bc.key(id, block, true)
	if !ok {
		return false
	}
	bc.ring.put(k, data)
	return true
}

// ReadRecent copies block number block of file id, from byte from of the
// block on, into dst if the ring holds it, and returns how many bytes it
// copied.
func (bc *BlockCache) ReadRecent(id FileID, block int64, dst []byte, from int64) (int, bool) {
	if bc.ring == nil || from < 0 || from >= int64(bc.blockSize) {
		return 0, false
	}
	n, ok := 0, false
	if k, found := bc.key(id, block, false); found {
		n, ok = bc.ring.read(k, dst, from)
	}
	if ok {
		bc.ringHits.Add(1)
	} else {
		bc.ringMisses.Add(1)
	}
	return n, ok
}

// key packs the file's slot and the block index; collision-free for block
// indexes below 2^32.
func (bc *BlockCache) key(id FileID, block int64, create bool) (uint64, bool) {
	if block < 0 || block > 1<<32-1 {
		return 0, false
	}
	bc.mu.RLock()
	slot, ok := bc.slots[id]
	bc.mu.RUnlock()
	if !ok {
		if !create {
			return 0, false
		}
		bc.mu.Lock()
		if slot, ok = bc.slots[id]; !ok {
			bc.nextSlot++
			slot = bc.nextSlot
			bc.slots[id] = slot
		}
		bc.mu.Unlock()
	}
	return uint64(slot)<<32 | uint64(block), true
}

// Get returns block number block of file id (bytes [block*BlockSize,
// (block+1)*BlockSize)) if cached. The result must not be modified.
func (bc *BlockCache) Get(id FileID, block int64) ([]byte, bool) {
	k, ok := bc.key(id, block, false)
	var b []byte
	if ok {
		b, ok = bc.c.Get(k)
	}
	if ok {
		bc.hits.Add(1)
	} else {
		bc.misses.Add(1)
	}
	return b, ok
}

// Set caches a copy of data, which must be exactly BlockSize bytes, as
// block number block of file id. It reports whether the cache accepted the
// item for admission (ristretto may still drop it).
func (bc *BlockCache) Set(id FileID, block int64, data []byte) bool {
	if len(data) != bc.blockSize {
		return false
	}
	k, ok := bc.key(id, block, true)
	if !ok {
		return false
	}
	return bc.c.Set(k, append([]byte(nil), data...), int64(len(data)))
}

// Invalidate forgets every cached block of file id (in the ring too).
func (bc *BlockCache) Invalidate(id FileID) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	delete(bc.slots, id) // the next Set gets a fresh slot number
}

// Wait blocks until earlier Sets have been applied.
func (bc *BlockCache) Wait() { bc.c.Wait() }

// Stats returns the hit and miss counts of Get and of the ring.
func (bc *BlockCache) Stats() CacheStats {
	s := CacheStats{Hits: bc.hits.Load(), Misses: bc.misses.Load(), RingHits: bc.ringHits.Load(), RingMisses: bc.ringMisses.Load()}
	if bc.ring != nil {
		s.RingBlocks = bc.ring.len()
	}
	if t := s.Hits + s.Misses; t > 0 {
		s.HitRatio = float64(s.Hits) / float64(t)
	}
	return s
}

// Close stops the cache's goroutines and drops its contents (the ring's
// memory goes with the BlockCache).
func (bc *BlockCache) Close() { bc.c.Close() }

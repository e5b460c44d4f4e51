package iopath

import "sync"

// recentRing is a FIFO ring of the most recently written cache blocks, the
// front of a BlockCache: the direct path puts every complete block of a
// staging buffer into it once the buffer's write succeeded, so readers of
// fresh data (the store's dispatcher, tailing consumers) find it in memory
// however ristretto's admission policy treats new keys. The oldest block
// is overwritten by the next one; there is no promotion on hit.
//
// Memory: slots*blockSize bytes, allocated at the first put.
//
// Concurrency: safe for concurrent use; put takes mu exclusively, read
// shares it and copies out under it (a slot may be overwritten right after).
type recentRing struct {
	bs    int
	slots int

	mu    sync.RWMutex
	mem   []byte         // slot s is mem[s*bs : (s+1)*bs]; nil until the first put
	keys  []uint64       // key held by each slot; 0 = empty (BlockCache keys are never 0)
	index map[uint64]int // key -> slot holding its newest copy
	next  int            // slot the next put overwrites
}

func newRecentRing(ringBytes int64, blockSize int) *recentRing {
	n := int(ringBytes / int64(blockSize))
	if n <= 0 {
		return nil
	}
	return &recentRing{bs: blockSize, slots: n}
}

// put stores a copy of data (exactly bs bytes) under key, evicting the
// oldest slot.
func (r *recentRing) put(key uint64, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem == nil {
		r.mem = make([]byte, r.slots*r.bs)
		r.keys = make([]uint64, r.slots)
		r.index = make(map[uint64]int, r.slots)
	}
	s := r.next
	r.next = (s + 1) % r.slots
	if old := r.keys[s]; old != 0 && r.index[old] == s {
		delete(r.index, old)
	}
	copy(r.mem[s*r.bs:(s+1)*r.bs], data)
	r.keys[s] = key
	r.index[key] = s
}

// read copies the block under key, from byte from on, into dst and reports
// how many bytes it copied and whether the block was there.
func (r *recentRing) read(key uint64, dst []byte, from int64) (int, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.index[key]
	if !ok {
		return 0, false
	}
	return copy(dst, r.mem[s*r.bs+int(from):(s+1)*r.bs]), true
}

// len is the number of blocks the ring holds.
func (r *recentRing) len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.index)
}

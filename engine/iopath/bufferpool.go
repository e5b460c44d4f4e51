package iopath

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// DefaultPoolBuffers is the number of buffers in a default pool (RocketMQ
// transientStorePoolSize).
const DefaultPoolBuffers = 5

// BufferPool is RocketMQ's TransientStorePool: a bounded set of reusable,
// page-aligned buffers of one size (anonymous mmap), created lazily on first
// use and reused after Put. The pool write path borrows one buffer per open
// segment.
//
// Exhaustion rule: Get never blocks. When every buffer is lent out it
// returns ErrPoolExhausted at once (RocketMQ's fastFailIfNoBufferInStorePool),
// so a caller that holds segments open can never deadlock on the pool.
// Buffers come back when the segment is closed, or earlier when the segment
// becomes full and completely committed (as in RocketMQ).
//
// A buffer that was mlocked (Config.Mlock) stays locked while it is in the
// pool and is unlocked when the pool unmaps it (Close).
//
// A BufferPool is safe for concurrent use.
type BufferPool struct {
	bufSize int64
	mapSize int
	max     int

	mu      sync.Mutex
	avail   *sync.Cond       // signalled by Put and Close
	free    [][]byte         // full-length mappings ready to lend
	all     map[*byte][]byte // every mapping the pool made, by first byte
	locked  map[*byte]bool   // mappings that are mlocked
	lent    int
	created int
	closed  bool
}

// NewBufferPool returns a pool of at most buffers buffers of bufSize bytes
// each. buffers <= 0 means DefaultPoolBuffers; with bufSize <= 0 every Get
// fails with ErrBadSize.
func NewBufferPool(buffers int, bufSize int64) *BufferPool {
	if buffers <= 0 {
		buffers = DefaultPoolBuffers
	}
	p := &BufferPool{bufSize: bufSize, max: buffers, all: map[*byte][]byte{}, locked: map[*byte]bool{}}
	p.avail = sync.NewCond(&p.mu)
	if bufSize > 0 {
		p.mapSize = int(alignUp(bufSize, int64(os.Getpagesize())))
	}
	return p
}

// BufSize is the length of the buffers Get returns.
func (p *BufferPool) BufSize() int64 { return p.bufSize }

// Buffers is the pool's bound.
func (p *BufferPool) Buffers() int { return p.max }

// Available is how many more buffers Get can lend now.
func (p *BufferPool) Available() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0
	}
	return p.max - p.lent
}

// Get lends a page-aligned buffer of BufSize bytes; its contents are
// whatever the previous borrower left. It returns ErrPoolExhausted when all
// buffers are lent and ErrPoolClosed after Close.
func (p *BufferPool) Get() ([]byte, error) {
	if p.bufSize <= 0 {
		return nil, fmt.Errorf("%w: buffer pool of %d-byte buffers", ErrBadSize, p.bufSize)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrPoolClosed
	}
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		p.lent++
		return b[:p.bufSize], nil
	}
	if p.created >= p.max {
		return nil, fmt.Errorf("%w: all %d buffers of %d bytes are lent", ErrPoolExhausted, p.max, p.bufSize)
	}
	b, err := anonMap(p.mapSize)
	if err != nil {
		return nil, err
	}
	p.all[&b[0]] = b
	p.created++
	p.lent++
	return b[:p.bufSize], nil
}

// Put returns a buffer obtained from Get. Buffers the pool did not lend are
// ignored. After Close the buffer is unmapped instead.
func (p *BufferPool) Put(b []byte) {
	if cap(b) == 0 {
		return
	}
	key := &b[:1][0]
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.all[key]
	if !ok {
		return
	}
	p.lent--
	if p.closed {
		p.unmapLocked(key, m)
		return
	}
	p.free = append(p.free, m)
	p.avail.Broadcast()
}

// GetWait is Get, but when every buffer is lent it waits up to timeout for
// one to come back (RocketMQ's allocation waits up to 5 s; full segments
// return their buffer as soon as they are committed).
func (p *BufferPool) GetWait(timeout time.Duration) ([]byte, error) {
	deadline := time.Now().Add(timeout)
	wake := time.AfterFunc(timeout, func() {
		p.mu.Lock()
		p.avail.Broadcast()
		p.mu.Unlock()
	})
	defer wake.Stop()
	for {
		b, err := p.Get()
		if !errors.Is(err, ErrPoolExhausted) || !time.Now().Before(deadline) {
			return b, err
		}
		p.mu.Lock()
		if len(p.free) == 0 && !p.closed && time.Now().Before(deadline) {
			p.avail.Wait()
		}
		p.mu.Unlock()
	}
}

// mlock locks a lent buffer in memory (once; it stays locked in the pool).
func (p *BufferPool) mlock(b []byte) error {
	if cap(b) == 0 {
		return nil
	}
	key := &b[:1][0]
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.all[key]
	if !ok || p.locked[key] {
		return nil
	}
	if err := lockMemory(m, "pool buffer"); err != nil {
		return err
	}
	p.locked[key] = true
	return nil
}

// Close unmaps the buffers in the pool; buffers still lent are unmapped
// when they are Put back. Get fails afterwards.
func (p *BufferPool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var errs []error
	for _, m := range p.free {
		errs = append(errs, p.unmapLocked(&m[:1][0], m))
	}
	p.free = nil
	return errors.Join(errs...)
}

func (p *BufferPool) unmapLocked(key *byte, m []byte) error {
	delete(p.all, key)
	delete(p.locked, key)
	return anonUnmap(m)
}

// defaultPools are the process-wide pools used when Config.Pool is nil,
// one per segment size, created lazily and never closed.
var defaultPools = struct {
	sync.Mutex
	m map[int64]*BufferPool
}{m: map[int64]*BufferPool{}}

// DefaultBufferPool returns the process-wide pool of DefaultPoolBuffers
// buffers of segmentSize bytes that the pool write path uses when
// Config.Pool is nil.
func DefaultBufferPool(segmentSize int64) *BufferPool {
	defaultPools.Lock()
	defer defaultPools.Unlock()
	p := defaultPools.m[segmentSize]
	if p == nil {
		p = NewBufferPool(DefaultPoolBuffers, segmentSize)
		defaultPools.m[segmentSize] = p
	}
	return p
}

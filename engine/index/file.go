package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"unsafe"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// file is one mapped index file. Header values are mirrored in atomics so
// queries never read header bytes that the writer is updating.
type file struct {
	name    string
	path    string
	f       vfs.File
	data    []byte // the mapping
	slotNum int32
	maxNum  int32
	entries int // byte offset of entry 0

	refs atomic.Int64 // owner reference + in-flight users; unmapped at 0

	beginTS, endTS   atomic.Int64
	beginPhy, endPhy atomic.Int64
	slotCount        atomic.Int32
	count            atomic.Int32 // indexCount: next entry number, >= 1
	dirty            atomic.Bool  // written since the last msync
}

func newFile(name, path string, f vfs.File, data []byte, cfg Config) *file {
	x := &file{
		name: name, path: path, f: f, data: data,
		slotNum: int32(cfg.MaxHashSlots), maxNum: int32(cfg.MaxIndexNum),
		entries: headerSize + cfg.MaxHashSlots*slotSize,
	}
	x.refs.Store(1)
	return x
}

// createFile creates, preallocates and maps a new file whose begin/end
// fields are seeded with the previous file's end values.
func createFile(fsys vfs.FS, dir, name string, cfg Config, seedPhy, seedTS int64) (*file, error) {
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("index: mkdir %s: %w", dir, err)
	}
	path := filepath.Join(dir, name)
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("index: create %s: %w", path, err)
	}
	size := cfg.FileSize()
	fail := func(err error) (*file, error) {
		_ = f.Close()
		_ = fsys.Remove(path)
		return nil, err
	}
	if err := f.Allocate(size); err != nil {
		return fail(fmt.Errorf("index: allocate %s: %w", path, err))
	}
	data, err := f.Map(int(size))
	if err != nil {
		return fail(fmt.Errorf("index: map %s: %w", path, err))
	}
	if err := fsys.SyncDir(dir); err != nil {
		_ = f.Unmap(data)
		return fail(fmt.Errorf("index: sync dir %s: %w", dir, err))
	}
	x := newFile(name, path, f, data, cfg)
	if seedPhy > 0 {
		x.beginPhy.Store(seedPhy)
		x.endPhy.Store(seedPhy)
	}
	if seedTS > 0 {
		x.beginTS.Store(seedTS)
		x.endTS.Store(seedTS)
	}
	x.count.Store(1)
	x.writeHeader()
	x.dirty.Store(true)
	return x, nil
}

// openFile maps an existing file and loads its header.
func openFile(fsys vfs.FS, dir, name string, cfg Config) (*file, error) {
	path := filepath.Join(dir, name)
	fi, err := fsys.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("index: stat %s: %w", path, err)
	}
	if fi.Size() != cfg.FileSize() {
		return nil, fmt.Errorf("%w: %s has %d bytes, want %d", ErrFileSize, path, fi.Size(), cfg.FileSize())
	}
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	data, err := f.Map(int(cfg.FileSize()))
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("index: map %s: %w", path, err)
	}
	x := newFile(name, path, f, data, cfg)
	h := data[:headerSize]
	x.beginTS.Store(int64(binary.BigEndian.Uint64(h[0:])))
	x.endTS.Store(int64(binary.BigEndian.Uint64(h[8:])))
	x.beginPhy.Store(int64(binary.BigEndian.Uint64(h[16:])))
	x.endPhy.Store(int64(binary.BigEndian.Uint64(h[24:])))
	x.slotCount.Store(int32(binary.BigEndian.Uint32(h[32:])))
	count := int32(binary.BigEndian.Uint32(h[36:]))
	if count < 1 { // a header never written: RocketMQ's in-memory default
		count = 1
	}
	if count > x.maxNum {
		_ = x.release()
		return nil, fmt.Errorf("%w: %s indexCount %d > %d", ErrCorrupt, path, count, x.maxNum)
	}
	x.count.Store(count)
	return x, nil
}

// acquire takes a reference; false once the file is unmapped.
func (x *file) acquire() bool {
	for {
		r := x.refs.Load()
		if r <= 0 {
			return false
		}
		if x.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// release drops a reference; the last one unmaps and closes the file.
func (x *file) release() error {
	if x.refs.Add(-1) != 0 {
		return nil
	}
	return errors.Join(x.f.Unmap(x.data), x.f.Close())
}

// writeHeader copies the header atomics into the mapping. Writer only.
func (x *file) writeHeader() {
	h := x.data[:headerSize]
	binary.BigEndian.PutUint64(h[0:], uint64(x.beginTS.Load()))
	binary.BigEndian.PutUint64(h[8:], uint64(x.endTS.Load()))
	binary.BigEndian.PutUint64(h[16:], uint64(x.beginPhy.Load()))
	binary.BigEndian.PutUint64(h[24:], uint64(x.endPhy.Load()))
	binary.BigEndian.PutUint32(h[32:], uint32(x.slotCount.Load()))
	binary.BigEndian.PutUint32(h[36:], uint32(x.count.Load()))
}

func (x *file) full() bool { return x.count.Load() >= x.maxNum }

// slotWord is the 4-byte slot for a key hash, accessed atomically.
func (x *file) slotWord(hash int32) *uint32 {
	off := headerSize + int(hash%x.slotNum)*slotSize
	return (*uint32)(unsafe.Pointer(&x.data[off]))
}

func loadSlot(p *uint32) int32 { return int32(nativeToBE(atomic.LoadUint32(p))) }

func storeSlot(p *uint32, v int32) { atomic.StoreUint32(p, nativeToBE(uint32(v))) }

// nativeToBE swaps between host and big-endian byte order (an involution).
func nativeToBE(v uint32) uint32 {
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], v)
	return binary.BigEndian.Uint32(b[:])
}

type entry struct {
	hash     int32
	phy      int64
	timeDiff int32
	prev     int32
}

func (x *file) entryBytes(n int32) []byte {
	off := x.entries + int(n)*entrySize
	return x.data[off : off+entrySize]
}

func (x *file) readEntry(n int32) entry {
	b := x.entryBytes(n)
	return entry{
		hash:     int32(binary.BigEndian.Uint32(b[0:])),
		phy:      int64(binary.BigEndian.Uint64(b[4:])),
		timeDiff: int32(binary.BigEndian.Uint32(b[12:])),
		prev:     int32(binary.BigEndian.Uint32(b[16:])),
	}
}

// put inserts one key (RocketMQ IndexFile.putKey); false if the file is full.
// Writer only.
func (x *file) put(hash int32, phy, storeTS int64) bool {
	n := x.count.Load()
	if n >= x.maxNum {
		return false
	}
	slot := x.slotWord(hash)
	prev := loadSlot(slot)
	if prev <= 0 || prev > n {
		prev = 0
	}
	if n <= 1 {
		x.beginPhy.Store(phy)
		x.beginTS.Store(storeTS)
	}
	begin := x.beginTS.Load()
	diff := int64(0)
	if begin > 0 {
		diff = min(max((storeTS-begin)/1000, 0), math.MaxInt32)
	}
	b := x.entryBytes(n)
	binary.BigEndian.PutUint32(b[0:], uint32(hash))
	binary.BigEndian.PutUint64(b[4:], uint64(phy))
	binary.BigEndian.PutUint32(b[12:], uint32(diff))
	binary.BigEndian.PutUint32(b[16:], uint32(prev))
	// Publish: count first, then the slot, so a reader that reaches entry n
	// through the slot also sees a count covering it.
	x.count.Store(n + 1)
	storeSlot(slot, n)
	if prev == 0 {
		x.slotCount.Add(1)
	}
	x.endPhy.Store(phy)
	x.endTS.Store(storeTS)
	x.writeHeader()
	x.dirty.Store(true)
	return true
}

// timeMatched reports whether the file's [begin, end] time range overlaps
// [begin, end] (RocketMQ isTimeMatched).
func (x *file) timeMatched(begin, end int64) bool {
	fb, fe := x.beginTS.Load(), x.endTS.Load()
	return (begin < fb && end > fe) || (begin >= fb && begin <= fe) || (end >= fb && end <= fe)
}

// selectPhy appends to out the offsets of entries with the key hash stored
// within [begin, end], newest first, until out holds maxNum (RocketMQ
// selectPhyOffset). The chain walk stops at an invalid link or at an entry
// older than begin.
func (x *file) selectPhy(out []int64, hash int32, maxNum int, begin, end int64) []int64 {
	n := loadSlot(x.slotWord(hash))
	count := x.count.Load()
	if n <= 0 || n > count || count <= 1 {
		return out
	}
	beginTS := x.beginTS.Load()
	for len(out) < maxNum {
		e := x.readEntry(n)
		if e.timeDiff < 0 {
			break
		}
		t := beginTS + int64(e.timeDiff)*1000
		if e.hash == hash && t >= begin && t <= end {
			out = append(out, e.phy)
		}
		// Links only point back; anything else is corruption.
		if e.prev <= 0 || e.prev >= n || t < begin {
			break
		}
		n = e.prev
	}
	return out
}

// has reports whether the bucket of hash chains to an entry of hash at phy.
// Entries along a chain go back in commit-log order, so the walk stops at
// the first older one.
func (x *file) has(hash int32, phy int64) bool {
	n := loadSlot(x.slotWord(hash))
	count := x.count.Load()
	for n > 0 && n < count {
		e := x.readEntry(n)
		if e.phy < phy {
			return false
		}
		if e.hash == hash && e.phy == phy {
			return true
		}
		if e.prev <= 0 || e.prev >= n {
			return false
		}
		n = e.prev
	}
	return false
}

// truncateFrom removes the entries whose phyOffset >= phyEnd, newest first,
// restoring each bucket's slot to the removed entry's predecessor; it
// returns the number of entries left. REQUIRES: no concurrent readers or
// writer.
func (x *file) truncateFrom(phyEnd int64) int32 {
	n := x.count.Load() - 1
	for ; n >= 1; n-- {
		e := x.readEntry(n)
		if e.phy < phyEnd {
			break
		}
		slot := x.slotWord(e.hash)
		if loadSlot(slot) == n {
			storeSlot(slot, e.prev)
			if e.prev == 0 {
				x.slotCount.Add(-1)
			}
		}
		clear(x.entryBytes(n))
	}
	x.count.Store(n + 1)
	if n >= 1 {
		e := x.readEntry(n)
		x.endPhy.Store(e.phy)
		x.endTS.Store(x.beginTS.Load() + int64(e.timeDiff)*1000)
	}
	x.writeHeader()
	x.dirty.Store(true)
	return n
}

// flush msyncs the mapping if it changed since the last flush.
func (x *file) flush() error {
	if !x.dirty.Swap(false) {
		return nil
	}
	if err := x.f.Msync(x.data); err != nil {
		x.dirty.Store(true)
		return fmt.Errorf("index: msync %s: %w", x.path, err)
	}
	return nil
}

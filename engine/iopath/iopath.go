// Package iopath implements the ways bytes reach one fixed-size, preallocated
// segment file: the "write path" variable of brokerlab's experiments.
//
// Five implementations are registered under the names used in configs, flags
// and benchmark names (Kinds):
//
//	mmap    MAP_SHARED mapping of the whole file; Append = copy into the
//	        mapping; Flush = msync(MS_SYNC) of the dirty range (page-aligned
//	        start).
//	pwrite  buffered pwrite(2) per Append; Flush = fdatasync.
//	pool    RocketMQ's TransientStorePool: Append copies into an aligned
//	        in-memory buffer borrowed from a bounded, reused Pool; a commit
//	        step pwrites appended-but-uncommitted bytes (in the background every
//	        CommitInterval when >= CommitLeastPages are pending, and always
//	        before a Flush); Flush = commit + fdatasync. Reads of bytes not
//	        yet committed are served from the buffer.
//	direct  O_DIRECT with the alignment from statx(STATX_DIOALIGN) (4096 when
//	        unknown). Appends fill aligned staging buffers; a writer
//	        goroutine writes full ones in the background (Append waits only
//	        when every buffer is in flight); Flush writes the partial tail
//	        block padded to the alignment (rewritten by the next write of
//	        it) through the same queue, then fdatasync. Reads of unwritten
//	        bytes come from the buffers, recent blocks from the optional
//	        BlockCache's ring, colder ones from its ristretto cache.
//	uncached buffered pwritev2(2) with RWF_DONTCACHE per Append (Linux >=
//	        6.14): through the page cache, pages dropped once written
//	        back; Flush = fdatasync. Open fails with ErrUnsupported where
//	        the kernel or file system refuses the flag.
//
// Config.DSync (the dsync flush policy) makes pwrite, uncached and direct
// write durably (RWF_DSYNC) with no fdatasync; mmap and pool refuse it
// (ErrNoDSync, SupportsDSync).
//
// Every segment file is preallocated (fallocate) to its full size before use,
// so a mapping never faults past EOF.
//
// Concurrency contract of an Appender: Append and Flush are called by one
// goroutine at a time (the log's append lock and its flush policy coordinate
// through package flush; Append and Flush may run concurrently with each
// other only if the implementation says so: all five here allow one Append
// and one Flush to overlap). ReadAt is safe concurrently with both for bytes
// below WrotePos. WrotePos and FlushedPos may be called from any goroutine.
//
// Invariant: 0 <= FlushedPos() <= WrotePos() <= Size().
package iopath

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// Kind names a write path in configs, flags and benchmark names.
type Kind string

// The registered write paths.
const (
	Mmap   Kind = "mmap"
	Pwrite Kind = "pwrite"
	Pool   Kind = "pool"
	Direct Kind = "direct"
	// Uncached is buffered pwritev2 with RWF_DONTCACHE.
	Uncached Kind = "uncached"
)

var (
	// ErrFull is returned by Append, which writes nothing, when p does not fit.
	ErrFull = errors.New("iopath: segment full")
	// ErrUnsupported wraps the reason a write path cannot be used here (for
	// example O_DIRECT on tmpfs). Tests and benchmarks skip on it.
	ErrUnsupported = errors.New("iopath: write path unsupported here")
	// ErrClosed is returned by operations on a closed Appender.
	ErrClosed = errors.New("iopath: appender closed")
	// ErrUnknownKind is returned by Lookup/ParseKind for an unregistered name.
	ErrUnknownKind = errors.New("iopath: unknown write path")
)

// Appender appends to one fixed-size, preallocated segment file.
type Appender interface {
	// Append copies p at WrotePos and returns the new WrotePos. It does not
	// make p durable. It returns ErrFull, writing nothing, if p does not fit.
	Append(p []byte) (wrotePos int64, err error)
	// Flush makes [0, WrotePos) durable (as of the call) and returns the new
	// FlushedPos. Flush errors are sticky: once Flush or a background commit
	// has failed, every later Append and Flush returns that error.
	Flush() (flushedPos int64, err error)
	// ReadAt reads bytes below WrotePos, whether or not they are flushed.
	io.ReaderAt
	WrotePos() int64
	FlushedPos() int64
	Size() int64
	// Close flushes nothing; callers Flush first if they need durability.
	Close() error
}

// Advice is a page-cache access hint applied with madvise (mmap) or
// posix_fadvise (the others) when a segment is opened.
type Advice string

// Hints.
const (
	AdviceNone       Advice = ""
	AdviceNormal     Advice = "normal"
	AdviceRandom     Advice = "random"
	AdviceSequential Advice = "sequential"
	AdviceWillNeed   Advice = "willneed"
)

// Config holds the knobs shared by all write paths. The zero value is not
// meant to be used; start from DefaultConfig.
type Config struct {
	// Warm touches every page of a newly created segment (RocketMQ
	// warmMappedFile: one zero byte every 4096 bytes) so that later appends
	// do not fault.
	Warm bool
	// Mlock locks the segment's mapping or buffer in memory.
	Mlock bool
	// Advice is applied to the segment when it is opened.
	Advice Advice
	// Pool is used by the pool write path; nil means a process-wide default
	// pool of DefaultPoolBuffers buffers.
	Pool *BufferPool
	// CommitInterval and CommitLeastPages drive the pool path's background
	// commit (RocketMQ commitIntervalCommitLog=200ms,
	// commitCommitLogLeastPages=4).
	CommitInterval   time.Duration
	CommitLeastPages int
	// Cache, if non-nil, serves the direct path's reads of written blocks.
	Cache *BlockCache
	// DSync (the dsync flush policy) has every write made durable by
	// itself, with no fdatasync: pwrite and uncached write each Append
	// with pwritev2(RWF_DSYNC) from DSyncWriters writer goroutines (so
	// several durable writes are in flight) and Flush only waits for them;
	// direct writes its blocks and flushed tails with RWF_DSYNC on its
	// O_DIRECT descriptor (FUA) and Flush skips the fdatasync. mmap and
	// pool refuse it with ErrNoDSync.
	DSync bool
	// DSyncWriters is the number of durable writes in flight per segment
	// under DSync on pwrite and uncached; 0 means DefaultDSyncWriters.
	DSyncWriters int
}

// DefaultConfig returns RocketMQ's defaults: no warm-up, no mlock, no hint,
// commit every 200 ms when at least 4 pages are pending.
func DefaultConfig() Config {
	return Config{CommitInterval: 200 * time.Millisecond, CommitLeastPages: 4}
}

// Opener opens (creating and preallocating if needed) the segment file at
// path of exactly size bytes, positioned for appending at wrotePos (bytes
// below wrotePos are taken as written and flushed).
type Opener func(fs vfs.FS, path string, size, wrotePos int64, cfg Config) (Appender, error)

var registry = struct {
	sync.RWMutex
	m map[Kind]Opener
}{m: map[Kind]Opener{}}

// Register makes a write path available by name. It panics on a duplicate.
func Register(k Kind, o Opener) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[k]; dup {
		panic(fmt.Sprintf("iopath: Register called twice for %q", k))
	}
	registry.m[k] = o
}

// Lookup returns the Opener registered as k.
func Lookup(k Kind) (Opener, error) {
	registry.RLock()
	defer registry.RUnlock()
	o, ok := registry.m[k]
	if !ok {
		return nil, fmt.Errorf("%w %q (have %v)", ErrUnknownKind, k, kindsLocked())
	}
	return o, nil
}

// ParseKind validates a write-path name.
func ParseKind(s string) (Kind, error) {
	if _, err := Lookup(Kind(s)); err != nil {
		return "", err
	}
	return Kind(s), nil
}

// Open opens a segment with the write path k.
func Open(k Kind, fs vfs.FS, path string, size, wrotePos int64, cfg Config) (Appender, error) {
	o, err := Lookup(k)
	if err != nil {
		return nil, err
	}
	return o(fs, path, size, wrotePos, cfg)
}

// Kinds returns the registered write paths, sorted; tests and benchmarks
// iterate over it.
func Kinds() []Kind {
	registry.RLock()
	defer registry.RUnlock()
	return kindsLocked()
}

func kindsLocked() []Kind {
	ks := make([]Kind, 0, len(registry.m))
	for k := range registry.m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}

// Package strictfs is an in-memory vfs.FS that remembers what was made
// durable and can simulate a power cut: everything written but not made
// durable is lost, optionally with the last unsynced write torn at a
// sector boundary. It is modelled on pebble's strict MemFS
// (NewCrashableMem/CrashClone) and on Jepsen's LazyFS, and exists to test
// the engine's recovery against the loss of the page cache, which a killed
// process never exercises.
//
// # What is durable
//
// Each file has a volatile image (the page cache: what reads return) and a
// durable image (what the disk holds):
//
//   - WriteAt, WriteAtUncached, Truncate and Allocate change the volatile
//     image only;
//   - Datasync copies the volatile image (data and size) into the durable
//     one; WriteAtDSync (RWF_DSYNC) writes the volatile image and copies
//     just the written range (and a grown size) into the durable one; O_DIRECT writes are treated the same way (a write that bypasses
//     the page cache may still sit in the device's volatile cache until a
//     flush, which fdatasync issues);
//   - Map hands out the volatile image itself as a plain buffer (as a
//     MAP_SHARED mapping aliases the page cache); Msync(b) copies the range
//     b into the durable image; Unmap is a no-op;
//   - a directory's entries (files and sub-directories created, removed or
//     renamed in it) become durable only when SyncDir is called on that
//     directory. A directory made by MkdirAll is lost with everything in it
//     unless its parent is synced.
//
// # Power cuts
//
// Cut(opts) turns the power off: from then on every mutating call (writes,
// syncs, creation, rename, remove, ...) fails with an error wrapping
// ErrPowerCut and syscall.EIO, while reads keep answering from the volatile
// state so that the dying process can wind down. AfterCut() then returns a
// new FS holding the state the disk would show after the reboot: the root
// and every durable directory entry, with each file's durable image and,
// depending on opts.Tear, some of its unsynced sectors:
//
//	TearNone    nothing unsynced survives (the strict model);
//	TearLast    a random whole-sector prefix of each file's last unsynced
//	            write survives on top of the durable image (earlier unsynced
//	            writes are lost: the disk reordered them); for a mapped
//	            file, whose stores the FS does not see, the whole mapping
//	            counts as that write;
//	TearPrefix  the kernel's writeback reached a random sector boundary of
//	            each file: unsynced sectors below it survive, and each
//	            directory keeps a random prefix of its unsynced operations
//	            (in order, as a journal commits them).
//
// The sector size is SectorSize (512). A file's volatile image is read by
// AfterCut, not by Cut, because a mapped file's buffer is written without
// the FS knowing: call AfterCut only after the process under test stopped
// touching the old FS's mappings (bytes stored into a mapping after the cut
// are treated as dirty pages writeback may have reached; nothing stored
// there after the cut is ever durable without a tear mode).
//
// # Limits
//
// Fd returns an invalid descriptor (^uintptr(0)): advisory calls on it
// (posix_fadvise, statx) fail with EBADF, so a test over strictfs uses no
// advice or warm-up knob; the direct path falls back to page alignment.
// O_DIRECT offsets and lengths must be multiples of SectorSize (EINVAL
// otherwise). A mapped file cannot grow past the capacity it had when it
// was mapped. There are no hard links, permissions or symlinks.
//
// Concurrency: an FS is safe for concurrent use; one mutex guards the tree
// and every file image. Stores into a mapping are not synchronised with the
// FS (as with real memory); callers order them as they would with mmap.
package strictfs

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// SectorSize is the unit of atomic writes and of O_DIRECT alignment.
const SectorSize = 512

// pageSize aligns mapped buffers so that madvise/mlock on them work.
const pageSize = 4096

// ErrPowerCut is wrapped by every mutating call after Cut.
var ErrPowerCut = errors.New("strictfs: power cut")

// Tear selects what of the unsynced state survives a cut.
type Tear int

// Tear modes (see the package doc).
const (
	TearNone Tear = iota
	TearLast
	TearPrefix
)

func (t Tear) String() string {
	switch t {
	case TearNone:
		return "none"
	case TearLast:
		return "last"
	case TearPrefix:
		return "prefix"
	}
	return fmt.Sprintf("tear(%d)", int(t))
}

// CutOptions configure a power cut.
type CutOptions struct {
	Tear Tear
	// Rand chooses tear points; nil means a fixed seed.
	Rand *rand.Rand
}

// Stats count what happened to an FS (for reports and tests).
type Stats struct {
	Writes, Syncs, Msyncs, DirSyncs uint64
	// DSyncWrites counts the Writes made durable by WriteAtDSync.
	DSyncWrites uint64
	// After a cut: bytes of unsynced data discarded and kept (torn in).
	LostBytes, TornBytes int64
	// Directory operations not yet durable at the cut, and how many of
	// them were discarded.
	UnsyncedDirOps, LostDirOps int
}

// FS is the strict in-memory file system. The zero value is not usable;
// call New.
type FS struct {
	mu    sync.Mutex
	root  *node
	cut   *CutOptions // non-nil after Cut
	stats Stats
}

// node is a file or a directory.
type node struct {
	dir     bool
	modTime time.Time

	// Directories.
	children map[string]*node // current entries
	durable  map[string]*node // entries as of the last SyncDir
	ops      []dirOp          // entry changes since the last SyncDir, in order

	// Files.
	data      []byte // volatile image; len is the file size
	synced    []byte // durable image; len is the durable size
	dirtyLo   int64  // [dirtyLo, dirtyHi): bytes that may differ from synced
	dirtyHi   int64
	lastLo    int64 // last unsynced write [lastLo, lastHi); lastHi == 0: none
	lastHi    int64
	mapped    int  // live mappings
	mapAny    bool // mapped since the last sync: dirty range unknown
	openCount int
}

// dirOp is one change of a directory entry: name now refers to n (nil:
// removed).
type dirOp struct {
	name string
	n    *node
}

// New returns an empty FS whose root directory "/" is durable.
func New() *FS {
	return &FS{root: newDir(nil)}
}

func newDir(durable map[string]*node) *node {
	if durable == nil {
		durable = map[string]*node{}
	}
	children := make(map[string]*node, len(durable))
	for k, v := range durable {
		children[k] = v
	}
	return &node{dir: true, modTime: time.Now(), children: children, durable: durable}
}

var _ vfs.FS = (*FS)(nil)

// Stats returns the FS's counters.
func (f *FS) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// split cleans name into its components ("/" → none).
func split(name string) []string {
	c := filepath.Clean("/" + name)
	if c == "/" {
		return nil
	}
	return strings.Split(c[1:], "/")
}

func pathErr(op, name string, err error) error {
	return &os.PathError{Op: op, Path: name, Err: err}
}

// errCut is the error of a mutating call after the power cut.
func errCut() error { return fmt.Errorf("%w: %w", ErrPowerCut, syscall.EIO) }

// lookup walks to name; f.mu held.
func (f *FS) lookup(name string) (*node, error) {
	n := f.root
	for _, c := range split(name) {
		if !n.dir {
			return nil, syscall.ENOTDIR
		}
		next, ok := n.children[c]
		if !ok {
			return nil, syscall.ENOENT
		}
		n = next
	}
	return n, nil
}

// parent returns name's directory and base name; f.mu held.
func (f *FS) parent(name string) (*node, string, error) {
	parts := split(name)
	if len(parts) == 0 {
		return nil, "", syscall.EISDIR
	}
	dir, err := f.lookup("/" + strings.Join(parts[:len(parts)-1], "/"))
	if err != nil {
		return nil, "", err
	}
	if !dir.dir {
		return nil, "", syscall.ENOTDIR
	}
	return dir, parts[len(parts)-1], nil
}

// setEntry changes a directory entry and logs it for the next SyncDir.
func (d *node) setEntry(name string, n *node) {
	if n == nil {
		delete(d.children, name)
	} else {
		d.children[name] = n
	}
	d.ops = append(d.ops, dirOp{name: name, n: n})
	d.modTime = time.Now()
}

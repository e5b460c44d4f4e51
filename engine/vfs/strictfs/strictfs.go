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
//     one; O_DIRECT writes are treated the same way (a write that bypasses
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
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

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

// OpenFile implements vfs.FS. Flags: O_RDONLY, O_WRONLY, O_RDWR, O_CREATE,
// O_EXCL, O_TRUNC and O_DIRECT (O_APPEND is refused with EINVAL).
func (f *FS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if flag&os.O_APPEND != 0 {
		return nil, pathErr("open", name, syscall.EINVAL)
	}
	writable := flag&(os.O_WRONLY|os.O_RDWR) != 0
	if f.cut != nil && (writable || flag&(os.O_CREATE|os.O_TRUNC) != 0) {
		return nil, pathErr("open", name, errCut())
	}
	dir, base, err := f.parent(name)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	n, ok := dir.children[base]
	switch {
	case ok && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, pathErr("open", name, syscall.EEXIST)
	case ok && n.dir && writable:
		return nil, pathErr("open", name, syscall.EISDIR)
	case !ok && flag&os.O_CREATE == 0:
		return nil, pathErr("open", name, syscall.ENOENT)
	case !ok:
		n = &node{modTime: time.Now()}
		dir.setEntry(base, n)
	}
	if flag&os.O_TRUNC != 0 && writable && !n.dir {
		if err := n.resize(0); err != nil {
			return nil, pathErr("open", name, err)
		}
	}
	n.openCount++
	return &file{fs: f, n: n, name: name, writable: writable, direct: directFlag != 0 && flag&directFlag != 0}, nil
}

// Remove implements vfs.FS (files and empty directories).
func (f *FS) Remove(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut != nil {
		return pathErr("remove", name, errCut())
	}
	dir, base, err := f.parent(name)
	if err != nil {
		return pathErr("remove", name, err)
	}
	n, ok := dir.children[base]
	if !ok {
		return pathErr("remove", name, syscall.ENOENT)
	}
	if n.dir && len(n.children) > 0 {
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	dir.setEntry(base, nil)
	return nil
}

// Rename implements vfs.FS: it replaces newname atomically in the volatile
// tree; each directory's change is durable after that directory's SyncDir.
func (f *FS) Rename(oldname, newname string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: errCut()}
	}
	od, ob, err := f.parent(oldname)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	n, ok := od.children[ob]
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.ENOENT}
	}
	nd, nb, err := f.parent(newname)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	if od == nd && ob == nb {
		return nil
	}
	if old, ok := nd.children[nb]; ok && old.dir != n.dir {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.EISDIR}
	}
	// The new entry first: a journal commits a rename as one transaction,
	// and TearPrefix keeps ops in order per directory.
	nd.setEntry(nb, n)
	od.setEntry(ob, nil)
	return nil
}

// MkdirAll implements vfs.FS. New directories are durable only once their
// parent directory is synced.
func (f *FS) MkdirAll(dir string, perm os.FileMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.root
	for _, c := range split(dir) {
		next, ok := n.children[c]
		if !ok {
			if f.cut != nil {
				return pathErr("mkdir", dir, errCut())
			}
			next = newDir(nil)
			n.setEntry(c, next)
		} else if !next.dir {
			return pathErr("mkdir", dir, syscall.ENOTDIR)
		}
		n = next
	}
	return nil
}

// MkdirAllDurable creates dir and its missing parents and makes each
// durable (as mkdir followed by fsync of every parent). Tests use it for
// the directory that stands for the disk's pre-existing layout.
func (f *FS) MkdirAllDurable(dir string) error {
	if err := f.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	parts := split(dir)
	for i := 0; i <= len(parts); i++ {
		if err := f.SyncDir("/" + strings.Join(parts[:i], "/")); err != nil {
			return err
		}
	}
	return nil
}

// ReadDir implements vfs.FS (entries sorted by name).
func (f *FS) ReadDir(dir string) ([]os.DirEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup(dir)
	if err != nil {
		return nil, pathErr("readdir", dir, err)
	}
	if !n.dir {
		return nil, pathErr("readdir", dir, syscall.ENOTDIR)
	}
	out := make([]os.DirEntry, 0, len(n.children))
	for name, c := range n.children {
		out = append(out, fs.FileInfoToDirEntry(c.info(name)))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// Stat implements vfs.FS.
func (f *FS) Stat(name string) (os.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup(name)
	if err != nil {
		return nil, pathErr("stat", name, err)
	}
	return n.info(filepath.Base(filepath.Clean("/" + name))), nil
}

// SyncDir implements vfs.FS: the directory's current entries become
// durable.
func (f *FS) SyncDir(dir string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut != nil {
		return pathErr("syncdir", dir, errCut())
	}
	n, err := f.lookup(dir)
	if err != nil {
		return pathErr("syncdir", dir, err)
	}
	if !n.dir {
		return pathErr("syncdir", dir, syscall.ENOTDIR)
	}
	n.durable = make(map[string]*node, len(n.children))
	for k, v := range n.children {
		n.durable[k] = v
	}
	n.ops = nil
	f.stats.DirSyncs++
	return nil
}

// Cut turns the power off (see the package doc). It panics if called
// twice: a cut FS is dead.
func (f *FS) Cut(opts CutOptions) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut != nil {
		panic("strictfs: Cut called twice")
	}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(1, 2))
	}
	f.cut = &opts
}

// IsCut reports whether Cut was called.
func (f *FS) IsCut() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cut != nil
}

// AfterCut returns the FS as it is after the reboot that follows Cut. It
// panics if Cut was not called. It reads mapped buffers: call it once the
// process under test stopped writing to the old FS's mappings.
func (f *FS) AfterCut() *FS {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut == nil {
		panic("strictfs: AfterCut before Cut")
	}
	out := &FS{}
	out.root = f.crashDir(f.root)
	out.stats.LostBytes, out.stats.TornBytes = f.stats.LostBytes, f.stats.TornBytes
	out.stats.UnsyncedDirOps, out.stats.LostDirOps = f.stats.UnsyncedDirOps, f.stats.LostDirOps
	return out
}

// crashDir builds the post-crash copy of directory d; f.mu held.
func (f *FS) crashDir(d *node) *node {
	entries := make(map[string]*node, len(d.durable))
	for k, v := range d.durable {
		entries[k] = v
	}
	f.stats.UnsyncedDirOps += len(d.ops)
	keep := 0
	if f.cut.Tear == TearPrefix && len(d.ops) > 0 {
		keep = f.cut.Rand.IntN(len(d.ops) + 1)
	}
	for _, op := range d.ops[:keep] {
		if op.n == nil {
			delete(entries, op.name)
		} else {
			entries[op.name] = op.n
		}
	}
	f.stats.LostDirOps += len(d.ops) - keep
	out := make(map[string]*node, len(entries))
	copies := map[*node]*node{} // keep one copy per file reachable twice
	for name, n := range entries {
		if c, ok := copies[n]; ok {
			out[name] = c
			continue
		}
		var c *node
		if n.dir {
			c = f.crashDir(n)
		} else {
			c = f.crashFile(n)
		}
		copies[n] = c
		out[name] = c
	}
	nd := newDir(out)
	nd.modTime = d.modTime
	return nd
}

// crashFile builds the post-crash image of file n; f.mu held. The size is
// the durable one, or (tear modes, at random) the volatile one: a size
// change is metadata, journaled whole, never torn.
func (f *FS) crashFile(n *node) *node {
	vol := int64(len(n.data))
	size := int64(len(n.synced))
	if f.cut.Tear != TearNone && vol != size && f.cut.Rand.IntN(2) == 0 {
		size = vol
	}
	img := make([]byte, size)
	copy(img, n.synced)
	lo, hi := n.dirtyLo, n.dirtyHi
	if n.mapAny {
		lo, hi = 0, vol
	}
	var keepLo, keepHi int64 // unsynced [keepLo, keepHi) of data may survive
	switch f.cut.Tear {
	case TearLast:
		keepLo, keepHi = n.lastLo, n.lastHi
		if n.mapAny || keepHi == 0 {
			keepLo, keepHi = lo, hi
		}
	case TearPrefix:
		keepLo, keepHi = lo, hi
	}
	keepHi = min(keepHi, size, vol)
	if keepHi > keepLo {
		// Keep a random whole number of sectors from the start of the
		// range (sectors are file-aligned).
		first := keepLo / SectorSize * SectorSize
		sectors := (keepHi - first + SectorSize - 1) / SectorSize
		end := min(first+f.cut.Rand.Int64N(sectors+1)*SectorSize, keepHi)
		for i := keepLo; i < end; i++ {
			if img[i] != n.data[i] {
				f.stats.TornBytes++
			}
		}
		if end > keepLo {
			copy(img[keepLo:end], n.data[keepLo:end])
		}
	}
	for i := lo; i < min(hi, vol); i++ {
		if i >= size || img[i] != n.data[i] {
			f.stats.LostBytes++
		}
	}
	return &node{modTime: n.modTime, data: img, synced: append([]byte(nil), img...)}
}

// info returns n's FileInfo under name.
func (n *node) info(name string) os.FileInfo {
	fi := fileInfo{name: name, mod: n.modTime, dir: n.dir}
	if !n.dir {
		fi.size = int64(len(n.data))
	}
	return fi
}

// resize sets the volatile size (zero-filling growth); f.mu held.
func (n *node) resize(size int64) error {
	cur := int64(len(n.data))
	switch {
	case size == cur:
		return nil
	case size < cur:
		clear(n.data[size:cur])
		n.data = n.data[:size]
		n.markDirty(size, cur)
	case size <= int64(cap(n.data)):
		n.data = n.data[:size] // the tail was cleared when it was cut off
		n.markDirty(cur, size)
	default:
		if n.mapped > 0 {
			return syscall.ENOMEM // a live mapping aliases the buffer
		}
		nd := make([]byte, size, max(size, 2*cur))
		copy(nd, n.data)
		n.data = nd
		n.markDirty(cur, size)
	}
	n.modTime = time.Now()
	return nil
}

func (n *node) markDirty(lo, hi int64) {
	if n.dirtyHi == n.dirtyLo {
		n.dirtyLo, n.dirtyHi = lo, hi
		return
	}
	n.dirtyLo, n.dirtyHi = min(n.dirtyLo, lo), max(n.dirtyHi, hi)
}

// sync makes the volatile image durable; f.mu held.
func (n *node) sync() {
	lo, hi := n.dirtyLo, n.dirtyHi
	if n.mapAny {
		lo, hi = 0, int64(len(n.data))
	}
	size := int64(len(n.data))
	if int64(cap(n.synced)) < size {
		ns := make([]byte, size, max(size, 2*int64(len(n.synced))))
		copy(ns, n.synced)
		n.synced = ns
	} else {
		old := int64(len(n.synced))
		n.synced = n.synced[:size]
		if size > old {
			clear(n.synced[old:size])
		}
	}
	hi = min(hi, size)
	if hi > lo {
		copy(n.synced[lo:hi], n.data[lo:hi])
	}
	n.dirtyLo, n.dirtyHi, n.lastLo, n.lastHi = 0, 0, 0, 0
	n.mapAny = n.mapped > 0
}

type fileInfo struct {
	name string
	size int64
	mod  time.Time
	dir  bool
}

func (fi fileInfo) Name() string { return fi.name }
func (fi fileInfo) Size() int64  { return fi.size }
func (fi fileInfo) Mode() os.FileMode {
	if fi.dir {
		return os.ModeDir | 0o755
	}
	return 0o644
}
func (fi fileInfo) ModTime() time.Time { return fi.mod }
func (fi fileInfo) IsDir() bool        { return fi.dir }
func (fi fileInfo) Sys() any           { return nil }

// file is an open file of the FS.
type file struct {
	fs       *FS
	n        *node
	name     string
	writable bool
	direct   bool
	closed   bool
}

var (
	_ vfs.File           = (*file)(nil)
	_ vfs.UncachedWriter = (*file)(nil)
)

func (h *file) check(op string) error {
	if h.closed {
		return pathErr(op, h.name, os.ErrClosed)
	}
	return nil
}

func (h *file) checkDirect(op string, p []byte, off int64) error {
	if h.direct && (off%SectorSize != 0 || len(p)%SectorSize != 0) {
		return pathErr(op, h.name, syscall.EINVAL)
	}
	return nil
}

// ReadAt reads the volatile image (also after a cut).
func (h *file) ReadAt(p []byte, off int64) (int, error) {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if err := h.check("read"); err != nil {
		return 0, err
	}
	if h.n.dir {
		return 0, pathErr("read", h.name, syscall.EISDIR)
	}
	if off < 0 {
		return 0, pathErr("read", h.name, syscall.EINVAL)
	}
	if err := h.checkDirect("read", p, off); err != nil {
		return 0, err
	}
	if off >= int64(len(h.n.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, h.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt writes into the volatile image.
func (h *file) WriteAt(p []byte, off int64) (int, error) {
	return h.write("write", p, off)
}

// WriteAtUncached is WriteAt: dropping pages from the page cache changes
// nothing about durability.
func (h *file) WriteAtUncached(p []byte, off int64) (int, error) {
	return h.write("pwritev2", p, off)
}

func (h *file) write(op string, p []byte, off int64) (int, error) {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if err := h.check(op); err != nil {
		return 0, err
	}
	if h.fs.cut != nil {
		return 0, pathErr(op, h.name, errCut())
	}
	if !h.writable {
		return 0, pathErr(op, h.name, syscall.EBADF)
	}
	if off < 0 {
		return 0, pathErr(op, h.name, syscall.EINVAL)
	}
	if err := h.checkDirect(op, p, off); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	end := off + int64(len(p))
	if end > int64(len(h.n.data)) {
		if err := h.n.resize(end); err != nil {
			return 0, pathErr(op, h.name, err)
		}
	}
	copy(h.n.data[off:end], p)
	h.n.markDirty(off, end)
	h.n.lastLo, h.n.lastHi = off, end
	h.n.modTime = time.Now()
	h.fs.stats.Writes++
	return len(p), nil
}

// Close closes the handle; unsynced data stays volatile.
func (h *file) Close() error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return pathErr("close", h.name, os.ErrClosed)
	}
	h.closed = true
	h.n.openCount--
	return nil
}

// Datasync makes the file's data and size durable.
func (h *file) Datasync() error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if err := h.check("fdatasync"); err != nil {
		return err
	}
	if h.fs.cut != nil {
		return pathErr("fdatasync", h.name, errCut())
	}
	h.n.sync()
	h.fs.stats.Syncs++
	return nil
}

// Allocate grows the file to size (zero-filled); it never shrinks it.
func (h *file) Allocate(size int64) error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if err := h.check("fallocate"); err != nil {
		return err
	}
	if h.fs.cut != nil {
		return pathErr("fallocate", h.name, errCut())
	}
	if size <= int64(len(h.n.data)) {
		return nil
	}
	if err := h.n.resize(size); err != nil {
		return pathErr("fallocate", h.name, err)
	}
	return nil
}

// Truncate sets the volatile size.
func (h *file) Truncate(size int64) error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if err := h.check("truncate"); err != nil {
		return err
	}
	if h.fs.cut != nil {
		return pathErr("truncate", h.name, errCut())
	}
	if size < 0 {
		return pathErr("truncate", h.name, syscall.EINVAL)
	}
	if err := h.n.resize(size); err != nil {
		return pathErr("truncate", h.name, err)
	}
	return nil
}

// Map returns the file's volatile image [0, size) as a plain, page-aligned
// buffer (stores into it are stores into the page cache). size must not
// exceed the file's size.
func (h *file) Map(size int) ([]byte, error) {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if err := h.check("mmap"); err != nil {
		return nil, err
	}
	if h.fs.cut != nil {
		return nil, pathErr("mmap", h.name, errCut())
	}
	if size <= 0 || int64(size) > int64(len(h.n.data)) {
		return nil, pathErr("mmap", h.name, syscall.EINVAL)
	}
	n := h.n
	if n.mapped == 0 && (len(n.data) == 0 || uintptr(unsafe.Pointer(&n.data[0]))%pageSize != 0) {
		// Move the image to page-aligned memory so madvise/mlock work.
		raw := make([]byte, cap(n.data)+pageSize)
		skip := (pageSize - int(uintptr(unsafe.Pointer(&raw[0]))%pageSize)) % pageSize
		nd := raw[skip : skip+cap(n.data)]
		copy(nd, n.data)
		n.data = nd[:len(n.data)]
	}
	n.mapped++
	n.mapAny = true
	return n.data[:size:size], nil
}

// Msync makes the mapped range b durable. b must lie within a buffer
// returned by Map for this file.
func (h *file) Msync(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if err := h.check("msync"); err != nil {
		return err
	}
	if h.fs.cut != nil {
		return pathErr("msync", h.name, errCut())
	}
	n := h.n
	if len(n.data) == 0 {
		return pathErr("msync", h.name, syscall.ENOMEM)
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(n.data[:1])))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < base || p+uintptr(len(b)) > base+uintptr(len(n.data)) {
		return pathErr("msync", h.name, syscall.ENOMEM)
	}
	off := int64(p - base)
	end := off + int64(len(b))
	if int64(len(n.synced)) < int64(len(n.data)) {
		grown := make([]byte, len(n.data))
		copy(grown, n.synced)
		n.synced = grown
	}
	copy(n.synced[off:end], n.data[off:end])
	h.fs.stats.Msyncs++
	return nil
}

// Unmap releases a mapping; the stores into it stay in the volatile image.
func (h *file) Unmap(b []byte) error {
	if b == nil {
		return nil
	}
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.n.mapped > 0 {
		h.n.mapped--
	}
	return nil
}

// Fd returns an invalid descriptor (see the package doc).
func (h *file) Fd() uintptr { return ^uintptr(0) }

// Name is the path the file was opened with.
func (h *file) Name() string { return h.name }

// Stat returns the file's current (volatile) size.
func (h *file) Stat() (os.FileInfo, error) {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	return h.n.info(filepath.Base(h.name)), nil
}

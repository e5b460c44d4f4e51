package strictfs

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
	"unsafe"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

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
	_ vfs.DSyncWriter    = (*file)(nil)
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

// WriteAtDSync writes into the volatile image and makes the written range
// durable before returning (RWF_DSYNC: O_DSYNC semantics for this call,
// FUA on an O_DIRECT handle): the range, and the file size if the write
// grew it, survive a power cut; nothing else becomes durable.
func (h *file) WriteAtDSync(p []byte, off int64, uncached bool) (int, error) {
	return h.writeDurable("pwritev2", p, off, true)
}

func (h *file) write(op string, p []byte, off int64) (int, error) {
	return h.writeDurable(op, p, off, false)
}

func (h *file) writeDurable(op string, p []byte, off int64, durable bool) (int, error) {
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
	h.n.modTime = time.Now()
	h.fs.stats.Writes++
	if durable {
		h.n.syncRange(off, end)
		h.fs.stats.DSyncWrites++
		return len(p), nil
	}
	h.n.markDirty(off, end)
	h.n.lastLo, h.n.lastHi = off, end
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

// Package vfs is the thin seam between the engine and the operating system's
// files. Every file operation the engine performs on its data (open, write,
// fdatasync, fallocate, mmap/msync, rename, remove) goes through an FS so that
// faults (EIO, ENOSPC, slow syncs) can be injected in tests (see package
// faultfs) without touching the code under test.
//
// Concurrency: an FS is safe for concurrent use. A File's ReadAt and WriteAt
// may be called concurrently (as with *os.File); everything else follows the
// caller's own ordering.
package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Op names a class of file operation. Fault injectors match on it.
type Op string

// The operations a File or FS performs.
const (
	OpOpen     Op = "open"     // OpenFile (also creation of a segment)
	OpWrite    Op = "write"    // WriteAt (pwrite), WriteAtUncached and WriteAtDSync (pwritev2)
	OpRead     Op = "read"     // ReadAt (pread)
	OpSync     Op = "sync"     // Datasync (fdatasync)
	OpMsync    Op = "msync"    // Msync
	OpAllocate Op = "allocate" // Allocate (fallocate)
	OpMap      Op = "map"      // Map
	OpTruncate Op = "truncate" // Truncate
	OpRemove   Op = "remove"   // Remove
	OpRename   Op = "rename"   // Rename
	OpSyncDir  Op = "syncdir"  // SyncDir
)

// ErrUnsupported is returned when the OS or file system cannot perform an
// operation (for example O_DIRECT on tmpfs).
var ErrUnsupported = errors.New("vfs: operation unsupported by this file system")

// File is one open file.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Datasync makes the file's data durable (fdatasync(2)).
	Datasync() error
	// Allocate reserves [0, size) on disk (fallocate(2) mode 0), falling back
	// to ftruncate where fallocate is not supported. It never shrinks the file.
	Allocate(size int64) error
	// Truncate sets the file's length.
	Truncate(size int64) error
	// Map maps [0, size) of the file MAP_SHARED, PROT_READ|PROT_WRITE.
	Map(size int) ([]byte, error)
	// Msync synchronously writes back b, a page-aligned sub-slice of a
	// mapping returned by Map (msync(2) MS_SYNC).
	Msync(b []byte) error
	// Unmap releases a mapping returned by Map.
	Unmap(b []byte) error
	// Fd is the OS file descriptor (for advisory calls such as fadvise,
	// madvise and mincore, which are never fault-injected).
	Fd() uintptr
	// Name is the path the file was opened with.
	Name() string
	Stat() (os.FileInfo, error)
}

// FS opens and manages files.
type FS interface {
	// OpenFile opens name with os.O_* flags; flag may include
	// syscall.O_DIRECT. If the file system refuses O_DIRECT the error wraps
	// ErrUnsupported.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Remove(name string) error
	Rename(oldname, newname string) error
	MkdirAll(dir string, perm os.FileMode) error
	ReadDir(dir string) ([]os.DirEntry, error)
	Stat(name string) (os.FileInfo, error)
	// SyncDir fsyncs a directory so that creations, renames and removals in
	// it are durable.
	SyncDir(dir string) error
}

// UncachedWriter is implemented by Files that can write through the page
// cache and have the kernel drop the written pages once they are written
// back (pwritev2(2) with RWF_DONTCACHE, Linux >= 6.14 on file systems that
// support it). The uncached write path needs it.
type UncachedWriter interface {
	// WriteAtUncached writes all of p at off like WriteAt. If the kernel or
	// the file system refuses RWF_DONTCACHE (EOPNOTSUPP, EINVAL) the error
	// wraps ErrUnsupported and nothing was written.
	WriteAtUncached(p []byte, off int64) (int, error)
}

// WriteAtUncached writes p at off through f's UncachedWriter, or returns an
// error wrapping ErrUnsupported if f has none.
func WriteAtUncached(f File, p []byte, off int64) (int, error) {
	u, ok := f.(UncachedWriter)
	if !ok {
		return 0, fmt.Errorf("%w: %s: uncached (RWF_DONTCACHE) writes", ErrUnsupported, f.Name())
	}
	return u.WriteAtUncached(p, off)
}

// DSyncWriter is implemented by Files that can write durably: the write
// returns once its bytes (and the metadata needed to read them back) are on
// stable storage, as if fdatasync(2) had followed it for that range only
// (pwritev2(2) with RWF_DSYNC: O_DSYNC semantics for one call; on an
// O_DIRECT file the kernel issues the write with FUA, or a cache flush
// after it where the device has no FUA). The dsync flush policy needs it.
type DSyncWriter interface {
	// WriteAtDSync writes all of p at off like WriteAt and makes it durable
	// before returning; with uncached it also carries RWF_DONTCACHE. If the
	// kernel or the file system refuses a flag the error wraps
	// ErrUnsupported and nothing was written.
	WriteAtDSync(p []byte, off int64, uncached bool) (int, error)
}

// WriteAtDSync writes p at off durably through f's DSyncWriter, or returns
// an error wrapping ErrUnsupported if f has none.
func WriteAtDSync(f File, p []byte, off int64, uncached bool) (int, error) {
	d, ok := f.(DSyncWriter)
	if !ok {
		return 0, fmt.Errorf("%w: %s: durable (RWF_DSYNC) writes", ErrUnsupported, f.Name())
	}
	return d.WriteAtDSync(p, off, uncached)
}

// Default is the operating system's file system.
var Default FS = osFS{}

package vfs

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// osFS is the operating system's file system (Default).
type osFS struct{}

// osFile is an *os.File plus the Linux calls the engine needs. ReadAt and
// WriteAt go through *os.File (which retries EINTR and short transfers);
// the rest are direct system calls on the cached descriptor.
type osFile struct {
	f  *os.File
	fd uintptr
}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		if oDirect != 0 && flag&oDirect != 0 && errors.Is(err, syscall.EINVAL) {
			return nil, fmt.Errorf("%w: O_DIRECT: %w", ErrUnsupported, err)
		}
		return nil, err
	}
	return &osFile{f: f, fd: f.Fd()}, nil
}

func (osFS) Remove(name string) error                    { return os.Remove(name) }
func (osFS) Rename(oldname, newname string) error        { return os.Rename(oldname, newname) }
func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }
func (osFS) ReadDir(dir string) ([]os.DirEntry, error)   { return os.ReadDir(dir) }
func (osFS) Stat(name string) (os.FileInfo, error)       { return os.Stat(name) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return serr
	}
	return cerr
}

func (f *osFile) ReadAt(p []byte, off int64) (int, error)  { return f.f.ReadAt(p, off) }
func (f *osFile) WriteAt(p []byte, off int64) (int, error) { return f.f.WriteAt(p, off) }
func (f *osFile) Close() error                             { return f.f.Close() }
func (f *osFile) Truncate(size int64) error                { return f.f.Truncate(size) }
func (f *osFile) Fd() uintptr                              { return f.fd }
func (f *osFile) Name() string                             { return f.f.Name() }
func (f *osFile) Stat() (os.FileInfo, error)               { return f.f.Stat() }

// growTo extends the file to size with ftruncate if it is shorter; it never
// shrinks it. It is the fallback for Allocate.
func (f *osFile) growTo(size int64) error {
	fi, err := f.f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() >= size {
		return nil
	}
	return f.f.Truncate(size)
}

func (f *osFile) pathErr(op string, err error) error {
	return &os.PathError{Op: op, Path: f.f.Name(), Err: err}
}

package faultfs

import (
	"os"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// Wrap returns an FS that consults inj before every operation of fs and of
// every File it opens. MkdirAll, ReadDir, Stat and the File methods Close,
// Unmap, Fd, Name and Stat are passed through without injection.
func Wrap(fs vfs.FS, inj *Injector) vfs.FS {
	return &faultFS{fs: fs, inj: inj}
}

type faultFS struct {
	fs  vfs.FS
	inj *Injector
}

func (f *faultFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	if err := f.inj.Check(vfs.OpOpen, name); err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	file, err := f.fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, inj: f.inj, name: name}, nil
}

func (f *faultFS) Remove(name string) error {
	if err := f.inj.Check(vfs.OpRemove, name); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	return f.fs.Remove(name)
}

func (f *faultFS) Rename(oldname, newname string) error {
	if err := f.inj.Check(vfs.OpRename, oldname+" -> "+newname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return f.fs.Rename(oldname, newname)
}

func (f *faultFS) SyncDir(dir string) error {
	if err := f.inj.Check(vfs.OpSyncDir, dir); err != nil {
		return &os.PathError{Op: "syncdir", Path: dir, Err: err}
	}
	return f.fs.SyncDir(dir)
}

func (f *faultFS) MkdirAll(dir string, perm os.FileMode) error { return f.fs.MkdirAll(dir, perm) }
func (f *faultFS) ReadDir(dir string) ([]os.DirEntry, error)   { return f.fs.ReadDir(dir) }
func (f *faultFS) Stat(name string) (os.FileInfo, error)       { return f.fs.Stat(name) }

// faultFile routes every data-path method through the injector. The
// embedded File supplies Close, Unmap, Fd, Name and Stat unchanged.
type faultFile struct {
	vfs.File
	inj  *Injector
	name string
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.inj.Check(vfs.OpRead, f.name); err != nil {
		return 0, &os.PathError{Op: "read", Path: f.name, Err: err}
	}
	return f.File.ReadAt(p, off)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.inj.Check(vfs.OpWrite, f.name); err != nil {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	return f.File.WriteAt(p, off)
}

func (f *faultFile) Datasync() error {
	if err := f.inj.Check(vfs.OpSync, f.name); err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.name, Err: err}
	}
	return f.File.Datasync()
}

func (f *faultFile) Msync(b []byte) error {
	if err := f.inj.Check(vfs.OpMsync, f.name); err != nil {
		return &os.PathError{Op: "msync", Path: f.name, Err: err}
	}
	return f.File.Msync(b)
}

func (f *faultFile) Allocate(size int64) error {
	if err := f.inj.Check(vfs.OpAllocate, f.name); err != nil {
		return &os.PathError{Op: "fallocate", Path: f.name, Err: err}
	}
	return f.File.Allocate(size)
}

func (f *faultFile) Map(size int) ([]byte, error) {
	if err := f.inj.Check(vfs.OpMap, f.name); err != nil {
		return nil, &os.PathError{Op: "mmap", Path: f.name, Err: err}
	}
	return f.File.Map(size)
}

func (f *faultFile) Truncate(size int64) error {
	if err := f.inj.Check(vfs.OpTruncate, f.name); err != nil {
		return &os.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	return f.File.Truncate(size)
}

// WriteAtUncached injects OpWrite faults like WriteAt, then passes the call
// to the wrapped file (ErrUnsupported if it cannot write uncached).
func (f *faultFile) WriteAtUncached(p []byte, off int64) (int, error) {
	if err := f.inj.Check(vfs.OpWrite, f.name); err != nil {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	return vfs.WriteAtUncached(f.File, p, off)
}

// WriteAtDSync injects OpWrite faults like WriteAt (a durable write that
// fails is a failed write), then passes the call to the wrapped file
// (ErrUnsupported if it cannot write durably).
func (f *faultFile) WriteAtDSync(p []byte, off int64, uncached bool) (int, error) {
	if err := f.inj.Check(vfs.OpWrite, f.name); err != nil {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	return vfs.WriteAtDSync(f.File, p, off, uncached)
}

package strictfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

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

package vfs

import (
	"os"
	"path/filepath"
	"syscall"
)

// MkdirAllDurable is MkdirAll that also makes every directory it creates
// durable: a new directory is an entry in its parent, which (like a new
// file's name) survives a power cut only once the parent is fsynced. It
// fsyncs the parent of each directory it created, outermost first; when dir
// already exists it costs one Stat and syncs nothing.
func MkdirAllDurable(fsys FS, dir string, perm os.FileMode) error {
	dir = filepath.Clean(dir)
	if fi, err := fsys.Stat(dir); err == nil {
		if !fi.IsDir() {
			return &os.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return nil
	}
	var missing []string // innermost first
	for d := dir; ; {
		if _, err := fsys.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if err := fsys.MkdirAll(dir, perm); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if parent := filepath.Dir(missing[i]); parent != missing[i] {
			if err := fsys.SyncDir(parent); err != nil {
				return err
			}
		}
	}
	return nil
}

package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// writeFileAtomic replaces path with data so that a crash leaves either the
// old or the new content under path, and keeps the previous version as
// path.bak (RocketMQ ConfigManager.persist):
//
//	write path.tmp, fdatasync it; rename path → path.bak;
//	rename path.tmp → path; fsync the directory.
//
// A crash between the two renames leaves no path but a complete path.bak,
// which readFileWithBackup falls back to.
func writeFileAtomic(fsys vfs.FS, path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp := path + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("store: create %s: %w", tmp, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return fmt.Errorf("store: write %s: %w", tmp, err)
	}
	if err := f.Datasync(); err != nil {
		f.Close()
		return fmt.Errorf("store: sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", tmp, err)
	}
	if _, err := fsys.Stat(path); err == nil {
		if err := fsys.Rename(path, path+".bak"); err != nil {
			return fmt.Errorf("store: keep %s as .bak: %w", path, err)
		}
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return fmt.Errorf("store: rename %s: %w", tmp, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("store: sync dir %s: %w", dir, err)
	}
	return nil
}

// readFile returns the whole file (nil, os.ErrNotExist-wrapping error if
// it does not exist).
func readFile(fsys vfs.FS, path string) ([]byte, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, fi.Size())
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

// readFileWithBackup loads path with decode, falling back to path.bak when
// path is missing, empty or does not decode (RocketMQ ConfigManager.load /
// loadBak). It returns false when neither exists.
func readFileWithBackup(fsys vfs.FS, path string, decode func([]byte) error) (bool, error) {
	var firstErr error
	for _, p := range []string{path, path + ".bak"} {
		b, err := readFile(fsys, p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil && len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if err == nil {
			err = decode(b)
		}
		if err == nil {
			return true, nil
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("store: load %s: %w", p, err)
		}
	}
	return false, firstErr
}

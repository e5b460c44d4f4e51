package store

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// dirLock is the store directory's exclusive lock, <root>/lock.
//
// Across processes it is a POSIX record lock (fcntl F_SETLK, write lock on
// byte 0, as RocketMQ's FileChannel.tryLock(0, 1, false)) where the OS has
// one. A record lock belongs to the process, not to the open file
// description, so it is never inherited by a child between fork and exec:
// flock(2) was, and a store closed and reopened while another goroutine
// forked could find its own lock still held by the half-started child.
//
// Within a process a record lock does not exclude a second open (the owner
// re-locks freely) and closing ANY descriptor of the file drops it, so the
// process keeps its own registry of locked directories, checked before the
// file is opened at all.
//
// Concurrency: lockDir and Close may be called from any goroutine.
type dirLock struct {
	f   *os.File
	key string
}

var lockedDirs struct {
	sync.Mutex
	m map[string]bool
}

// lockDir takes the lock of the store whose lock file is path, or returns
// ErrLocked when this or another process holds it.
func lockDir(path string) (*dirLock, error) {
	key, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(key)); err == nil {
		key = filepath.Join(dir, filepath.Base(key))
	}
	lockedDirs.Lock()
	defer lockedDirs.Unlock()
	if lockedDirs.m[key] {
		return nil, fmt.Errorf("%w: %s (held by this process)", ErrLocked, path)
	}
	f, err := lockFile(path)
	if err != nil {
		return nil, err
	}
	if lockedDirs.m == nil {
		lockedDirs.m = make(map[string]bool)
	}
	lockedDirs.m[key] = true
	return &dirLock{f: f, key: key}, nil
}

// Close releases the lock.
func (l *dirLock) Close() error {
	lockedDirs.Lock()
	defer lockedDirs.Unlock()
	err := l.f.Close()
	delete(lockedDirs.m, l.key)
	if err != nil {
		return fmt.Errorf("store: close lock file: %w", err)
	}
	return nil
}

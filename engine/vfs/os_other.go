//go:build !linux

package vfs

import "fmt"

// oDirect is 0 where the engine does not use O_DIRECT.
const oDirect = 0

// Datasync falls back to fsync.
func (f *osFile) Datasync() error { return f.f.Sync() }

// Allocate falls back to ftruncate (growing only).
func (f *osFile) Allocate(size int64) error { return f.growTo(size) }

func (f *osFile) Map(size int) ([]byte, error) {
	return nil, fmt.Errorf("%w: mmap of %s on this OS", ErrUnsupported, f.Name())
}

func (f *osFile) Msync(b []byte) error {
	return fmt.Errorf("%w: msync on this OS", ErrUnsupported)
}

func (f *osFile) Unmap(b []byte) error {
	if b == nil {
		return nil
	}
	return fmt.Errorf("%w: munmap on this OS", ErrUnsupported)
}

// WriteAtUncached is Linux-only (pwritev2 RWF_DONTCACHE).
func (f *osFile) WriteAtUncached(p []byte, off int64) (int, error) {
	return 0, fmt.Errorf("%w: RWF_DONTCACHE on this OS", ErrUnsupported)
}

// WriteAtDSync is Linux-only (pwritev2 RWF_DSYNC).
func (f *osFile) WriteAtDSync(p []byte, off int64, uncached bool) (int, error) {
	return 0, fmt.Errorf("%w: RWF_DSYNC on this OS", ErrUnsupported)
}

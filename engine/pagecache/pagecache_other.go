//go:build !linux

package pagecache

import "os"

// Residency is unsupported on this system.
func Residency(f *os.File, size int64) (resident, total int, err error) {
	return 0, 0, ErrUnsupported
}

// ResidencyFd is unsupported on this system.
func ResidencyFd(fd int, size int64) (resident, total int, err error) {
	return 0, 0, ErrUnsupported
}

// ResidencyMap is unsupported on this system.
func ResidencyMap(fd int, size int64) ([]bool, error) { return nil, ErrUnsupported }

// MappedResidency is unsupported on this system.
func MappedResidency(b []byte) (resident, total int, err error) { return 0, 0, ErrUnsupported }

// DropFile is unsupported on this system.
func DropFile(fd int) error { return ErrUnsupported }

// DropRange is unsupported on this system.
func DropRange(fd int, off, n int64) error { return ErrUnsupported }

// SyncAndDrop is unsupported on this system.
func SyncAndDrop(f *os.File) error { return ErrUnsupported }

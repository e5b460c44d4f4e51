//go:build linux

package pagecache

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Residency reports how many of the pages of f's first size bytes are in the
// page cache. size <= 0 means the file's current size. f must be open for
// reading (PROT_READ mapping); a write-only descriptor fails with EACCES.
func Residency(f *os.File, size int64) (resident, total int, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, 0, fmt.Errorf("pagecache: %s: %w", f.Name(), err)
	}
	var inner error
	if cerr := rc.Control(func(fd uintptr) {
		resident, total, inner = ResidencyFd(int(fd), size)
	}); cerr != nil {
		return 0, 0, fmt.Errorf("pagecache: %s: %w", f.Name(), cerr)
	}
	if inner != nil {
		return 0, 0, fmt.Errorf("%w (%s)", inner, f.Name())
	}
	return resident, total, nil
}

// ResidencyFd is Residency on a raw descriptor.
func ResidencyFd(fd int, size int64) (resident, total int, err error) {
	vec, err := residencyVector(fd, size)
	if err != nil {
		return 0, 0, err
	}
	for _, b := range vec {
		if b&1 != 0 {
			resident++
		}
	}
	return resident, len(vec), nil
}

// ResidencyMap returns one bool per page of fd's first size bytes (size <= 0:
// the current file size), true when the page is in the page cache. It is the
// input of a residency heatmap.
func ResidencyMap(fd int, size int64) ([]bool, error) {
	vec, err := residencyVector(fd, size)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(vec))
	for i, b := range vec {
		out[i] = b&1 != 0
	}
	return out, nil
}

// MappedResidency reports residency of an existing mapping (for example a
// segment's MAP_SHARED mapping): b must start on a page boundary, as every
// slice returned by mmap does. It creates no mapping of its own.
func MappedResidency(b []byte) (resident, total int, err error) {
	if len(b) == 0 {
		return 0, 0, nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%uintptr(PageSize()) != 0 {
		return 0, 0, ErrUnaligned
	}
	vec := make([]byte, Pages(int64(len(b))))
	if err := mincore(b, vec); err != nil {
		return 0, 0, err
	}
	for _, v := range vec {
		if v&1 != 0 {
			resident++
		}
	}
	return resident, len(vec), nil
}

func residencyVector(fd int, size int64) ([]byte, error) {
	if size <= 0 {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return nil, fmt.Errorf("pagecache: fstat: %w", err)
		}
		size = st.Size
	}
	vec := make([]byte, Pages(size))
	if size == 0 {
		return vec, nil
	}
	for off := int64(0); off < size; off += WindowBytes {
		n := min(size-off, WindowBytes)
		m, err := unix.Mmap(fd, off, int(n), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return nil, fmt.Errorf("pagecache: mmap [%d,%d): %w", off, off+n, err)
		}
		first := int(off / int64(PageSize()))
		err = mincore(m, vec[first:first+Pages(n)])
		if uerr := unix.Munmap(m); err == nil && uerr != nil {
			err = fmt.Errorf("pagecache: munmap: %w", uerr)
		}
		if err != nil {
			return nil, err
		}
	}
	return vec, nil
}

// mincore calls mincore(2); x/sys/unix has no wrapper on Linux.
func mincore(b, vec []byte) error {
	_, _, e := unix.Syscall(unix.SYS_MINCORE,
		uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if e != 0 {
		return fmt.Errorf("pagecache: mincore: %w", e)
	}
	return nil
}

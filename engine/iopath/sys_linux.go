package iopath

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// oDirect is the open flag of the direct write path.
const oDirect = unix.O_DIRECT

// mlock is a variable so that tests can make it fail as it does under a low
// RLIMIT_MEMLOCK (the test process may hold CAP_IPC_LOCK).
var mlock = unix.Mlock

func madviseFlag(a Advice) int {
	switch a {
	case AdviceRandom:
		return unix.MADV_RANDOM
	case AdviceSequential:
		return unix.MADV_SEQUENTIAL
	case AdviceWillNeed:
		return unix.MADV_WILLNEED
	default:
		return unix.MADV_NORMAL
	}
}

func fadviseFlag(a Advice) int {
	switch a {
	case AdviceRandom:
		return unix.FADV_RANDOM
	case AdviceSequential:
		return unix.FADV_SEQUENTIAL
	case AdviceWillNeed:
		return unix.FADV_WILLNEED
	default:
		return unix.FADV_NORMAL
	}
}

// madvise applies a (already validated) to a mapping.
func madvise(b []byte, a Advice) error {
	if a == AdviceNone || len(b) == 0 {
		return nil
	}
	if err := unix.Madvise(b, madviseFlag(a)); err != nil {
		return fmt.Errorf("iopath: madvise %s: %w", a, err)
	}
	return nil
}

// fadvise applies a to [off, off+n) of the file fd (n = 0: to EOF).
func fadvise(fd uintptr, off, n int64, a Advice) error {
	if a == AdviceNone {
		return nil
	}
	if err := unix.Fadvise(int(fd), off, n, fadviseFlag(a)); err != nil {
		return fmt.Errorf("iopath: posix_fadvise %s: %w", a, err)
	}
	return nil
}

// anonMap returns n bytes of page-aligned, zeroed, private anonymous memory
// (for pool buffers and O_DIRECT staging); release it with anonUnmap.
func anonMap(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("iopath: anonymous mmap of %d bytes: %w", n, err)
	}
	return b, nil
}

func anonUnmap(b []byte) error {
	if b == nil {
		return nil
	}
	return unix.Munmap(b)
}

// dioAlign returns the O_DIRECT file-offset/length alignment and the
// memory alignment of fd, from statx(STATX_DIOALIGN) (Linux 6.1+), or
// pageSize for both when the kernel or file system does not report them.
func dioAlign(fd uintptr) (offsetAlign, memAlign int64) {
	var st unix.Statx_t
	err := unix.Statx(int(fd), "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &st)
	if err != nil || st.Mask&unix.STATX_DIOALIGN == 0 || st.Dio_offset_align == 0 || st.Dio_mem_align == 0 {
		return pageSize, pageSize
	}
	return int64(st.Dio_offset_align), int64(st.Dio_mem_align)
}

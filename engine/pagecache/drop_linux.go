//go:build linux

package pagecache

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// DropFile asks the kernel to drop fd's clean cached pages
// (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)). Dirty pages stay: call
// fdatasync first, or use SyncAndDrop. Only this file is affected.
func DropFile(fd int) error {
	return DropRange(fd, 0, 0)
}

// DropRange is DropFile on [off, off+n); n == 0 means to the end of the file.
func DropRange(fd int, off, n int64) error {
	if err := unix.Fadvise(fd, off, n, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("pagecache: fadvise DONTNEED: %w", err)
	}
	return nil
}

// SyncAndDrop makes f's data durable (fdatasync) and then drops its pages from
// the page cache: the per-file cold-start preparation that needs no root.
func SyncAndDrop(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("pagecache: %s: %w", f.Name(), err)
	}
	var inner error
	if cerr := rc.Control(func(fd uintptr) {
		if err := unix.Fdatasync(int(fd)); err != nil {
			inner = fmt.Errorf("pagecache: fdatasync: %w", err)
			return
		}
		inner = DropFile(int(fd))
	}); cerr != nil {
		return fmt.Errorf("pagecache: %s: %w", f.Name(), cerr)
	}
	if inner != nil {
		return fmt.Errorf("%w (%s)", inner, f.Name())
	}
	return nil
}

//go:build unix

package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// lockFile opens path and takes a non-blocking POSIX write lock on its byte
// 0 (see dirLock for why not flock), then writes "lock" into it. The lock
// goes with the process, so a killed broker never leaves it held.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("store: open lock file: %w", err)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		f.Close()
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	if _, err := f.WriteAt([]byte("lock"), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("store: write lock file: %w", err)
	}
	return f, nil
}

// diskUsage is the default DiskUsage: statfs of path, used/(used+available)
// rounded up to a whole percent (UtilAll.getDiskPartitionSpaceUsedPercent).
func diskUsage(path string) (float64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("store: statfs %s: %w", path, err)
	}
	used := float64(st.Blocks-st.Bfree) * float64(st.Bsize)
	avail := float64(st.Bavail) * float64(st.Bsize)
	if used+avail <= 0 {
		return 0, nil
	}
	pct := used / (used + avail) * 100
	whole := float64(int64(pct))
	if pct > whole {
		whole++
	}
	return whole / 100, nil
}

// totalMemory returns MemTotal from /proc/meminfo, else sysinfo's total RAM
// where available, else 0.
func totalMemory() int64 {
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			f := bytes.Fields(sc.Bytes())
			if len(f) >= 2 && string(f[0]) == "MemTotal:" {
				if kb, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return sysinfoMemory()
}

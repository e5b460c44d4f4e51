//go:build linux

package probe

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noCachestat remembers an ENOSYS, so a kernel without cachestat(2) costs
// one failed system call per process, not one per file and sample.
var noCachestat atomic.Bool

// cachestat returns cached, dirty, writeback, evicted and recently evicted
// pages of all of f (range length 0: to the end of the file).
func cachestat(f *os.File) ([5]int64, error) {
	var out [5]int64
	if noCachestat.Load() {
		return out, fmt.Errorf("%w: ENOSYS", ErrCachestatUnsupported)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return out, fmt.Errorf("probe: cachestat: %w", err)
	}
	var cs unix.Cachestat_t
	var inner error
	if cerr := rc.Control(func(fd uintptr) {
		inner = unix.Cachestat(uint(fd), &unix.CachestatRange{}, &cs, 0)
	}); cerr != nil {
		return out, fmt.Errorf("probe: cachestat: %w", cerr)
	}
	switch {
	case errors.Is(inner, unix.ENOSYS):
		noCachestat.Store(true)
		return out, fmt.Errorf("%w: %w", ErrCachestatUnsupported, inner)
	case errors.Is(inner, unix.EOPNOTSUPP):
		return out, fmt.Errorf("%w: %w", ErrCachestatUnsupported, inner)
	case inner != nil:
		return out, fmt.Errorf("probe: cachestat: %w", inner)
	}
	return [5]int64{int64(cs.Cache), int64(cs.Dirty), int64(cs.Writeback), int64(cs.Evicted), int64(cs.Recently_evicted)}, nil
}

//go:build unix

package vfs

import (
	"os"
	"syscall"
)

// allocatedBytes is st_blocks*512, where the OS reports it.
func allocatedBytes(fi os.FileInfo) (int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int64(st.Blocks) * 512, true
}

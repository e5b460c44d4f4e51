package strictfs

import (
	"os"
	"syscall"
	"time"
)

// info returns n's FileInfo under name.
func (n *node) info(name string) os.FileInfo {
	fi := fileInfo{name: name, mod: n.modTime, dir: n.dir}
	if !n.dir {
		fi.size = int64(len(n.data))
	}
	return fi
}

// resize sets the volatile size (zero-filling growth); f.mu held.
func (n *node) resize(size int64) error {
	cur := int64(len(n.data))
	switch {
	case size == cur:
		return nil
	case size < cur:
		clear(n.data[size:cur])
		n.data = n.data[:size]
		n.markDirty(size, cur)
	case size <= int64(cap(n.data)):
		n.data = n.data[:size] // the tail was cleared when it was cut off
		n.markDirty(cur, size)
	default:
		if n.mapped > 0 {
			return syscall.ENOMEM // a live mapping aliases the buffer
		}
		nd := make([]byte, size, max(size, 2*cur))
		copy(nd, n.data)
		n.data = nd
		n.markDirty(cur, size)
	}
	n.modTime = time.Now()
	return nil
}

func (n *node) markDirty(lo, hi int64) {
	if n.dirtyHi == n.dirtyLo {
		n.dirtyLo, n.dirtyHi = lo, hi
		return
	}
	n.dirtyLo, n.dirtyHi = min(n.dirtyLo, lo), max(n.dirtyHi, hi)
}

// sync makes the volatile image durable; f.mu held.
func (n *node) sync() {
	lo, hi := n.dirtyLo, n.dirtyHi
	if n.mapAny {
		lo, hi = 0, int64(len(n.data))
	}
	size := int64(len(n.data))
	if int64(cap(n.synced)) < size {
		ns := make([]byte, size, max(size, 2*int64(len(n.synced))))
		copy(ns, n.synced)
		n.synced = ns
	} else {
		old := int64(len(n.synced))
		n.synced = n.synced[:size]
		if size > old {
			clear(n.synced[old:size])
		}
	}
	hi = min(hi, size)
	if hi > lo {
		copy(n.synced[lo:hi], n.data[lo:hi])
	}
	n.dirtyLo, n.dirtyHi, n.lastLo, n.lastHi = 0, 0, 0, 0
	n.mapAny = n.mapped > 0
}

// syncRange makes [lo, hi) of the volatile image durable, with the size up
// to hi if the durable image is shorter (an O_DSYNC write that extends the
// file makes the new size durable too); f.mu held. The dirty range and the
// last unsynced write are left as they are: bytes there that the range
// did not cover stay unsynced.
func (n *node) syncRange(lo, hi int64) {
	if int64(len(n.synced)) < hi {
		if int64(cap(n.synced)) < hi {
			ns := make([]byte, hi, max(hi, 2*int64(len(n.synced))))
			copy(ns, n.synced)
			n.synced = ns
		} else {
			old := int64(len(n.synced))
			n.synced = n.synced[:hi]
			clear(n.synced[old:hi])
		}
	}
	copy(n.synced[lo:hi], n.data[lo:hi])
}

type fileInfo struct {
	name string
	size int64
	mod  time.Time
	dir  bool
}

func (fi fileInfo) Name() string { return fi.name }
func (fi fileInfo) Size() int64  { return fi.size }
func (fi fileInfo) Mode() os.FileMode {
	if fi.dir {
		return os.ModeDir | 0o755
	}
	return 0o644
}
func (fi fileInfo) ModTime() time.Time { return fi.mod }
func (fi fileInfo) IsDir() bool        { return fi.dir }
func (fi fileInfo) Sys() any           { return nil }

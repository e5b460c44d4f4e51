package vfs

import (
	"fmt"

	"golang.org/x/sys/unix"
)

const oDirect = unix.O_DIRECT

func (f *osFile) Datasync() error {
	for {
		err := unix.Fdatasync(int(f.fd))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return f.pathErr("fdatasync", err)
		}
		return nil
	}
}

func (f *osFile) Allocate(size int64) error {
	if size <= 0 {
		return nil
	}
	for {
		// Mode 0 extends the file size when size is past EOF and never
		// shrinks it.
		err := unix.Fallocate(int(f.fd), 0, 0, size)
		switch err {
		case nil:
			return nil
		case unix.EINTR:
			continue
		case unix.EOPNOTSUPP, unix.ENOSYS:
			return f.growTo(size)
		default:
			return f.pathErr("fallocate", err)
		}
	}
}

func (f *osFile) Map(size int) ([]byte, error) {
	b, err := unix.Mmap(int(f.fd), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, f.pathErr(fmt.Sprintf("mmap %d bytes", size), err)
	}
	return b, nil
}

func (f *osFile) Msync(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if err := unix.Msync(b, unix.MS_SYNC); err != nil {
		return f.pathErr("msync", err)
	}
	return nil
}

func (f *osFile) Unmap(b []byte) error {
	if b == nil {
		return nil
	}
	if err := unix.Munmap(b); err != nil {
		return f.pathErr("munmap", err)
	}
	return nil
}

// rwfDontCache is RWF_DONTCACHE (include/uapi/linux/fs.h, Linux 6.14).
const rwfDontCache = unix.RWF_DONTCACHE

// WriteAtUncached is pwritev2(2) with RWF_DONTCACHE, retried on EINTR and
// continued after a short write. EOPNOTSUPP (a kernel before 6.14 rejects
// the unknown flag with it, as does a file system without FOP_DONTCACHE, or
// a DAX file) and EINVAL wrap ErrUnsupported.
func (f *osFile) WriteAtUncached(p []byte, off int64) (int, error) {
	return f.pwritev2(p, off, rwfDontCache, "RWF_DONTCACHE")
}

// WriteAtDSync is pwritev2(2) with RWF_DSYNC (plus RWF_DONTCACHE when
// uncached): each call returns once its bytes are durable. Short writes are
// continued (every part is durable when its call returns); EOPNOTSUPP and
// EINVAL wrap ErrUnsupported.
func (f *osFile) WriteAtDSync(p []byte, off int64, uncached bool) (int, error) {
	if uncached {
		return f.pwritev2(p, off, unix.RWF_DSYNC|rwfDontCache, "RWF_DSYNC|RWF_DONTCACHE")
	}
	return f.pwritev2(p, off, unix.RWF_DSYNC, "RWF_DSYNC")
}

// pwritev2 writes all of p at off with flags, retrying EINTR and short
// writes.
func (f *osFile) pwritev2(p []byte, off int64, flags int, flagNames string) (int, error) {
	done := 0
	for done < len(p) {
		n, err := unix.Pwritev2(int(f.fd), [][]byte{p[done:]}, off+int64(done), flags)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EOPNOTSUPP || err == unix.EINVAL {
			return done, fmt.Errorf("%w: pwritev2 %s on %s: %w", ErrUnsupported, flagNames, f.f.Name(), err)
		}
		if err != nil {
			return done, f.pathErr("pwritev2", err)
		}
		if n == 0 {
			return done, f.pathErr("pwritev2", unix.EIO)
		}
		done += n
	}
	return done, nil
}

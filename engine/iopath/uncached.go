package iopath

import (
	"errors"
	"fmt"
	"io"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

func init() { Register(Uncached, openUncached) }

// uncachedAppender writes every Append with one pwritev2(2) carrying
// RWF_DONTCACHE (Linux >= 6.14): the bytes go through the page cache like
// pwrite's, the kernel starts their writeback at once and drops the pages
// when it completes, so a log written this way does not fill the page cache
// with pages no one will read again. Flush is fdatasync. Reads are plain
// pread (they may bring pages back into the cache).
//
// Open probes the flag by rewriting one byte of the segment with its own
// value; a kernel or file system that refuses it (EOPNOTSUPP: before 6.14,
// or no FOP_DONTCACHE, e.g. tmpfs; EINVAL) makes Open fail with an error
// wrapping ErrUnsupported, and the file is removed if Open created it.
//
// Knobs are applied as on the pwrite path: Warm is posix_fadvise(WILLNEED)
// of [wrotePos, size), Mlock is a no-op, Advice is posix_fadvise.
//
// The appender is pwriteAppender with its write swapped: locking, Flush,
// reads and Close are pwrite's.
func openUncached(fs vfs.FS, path string, size, wrotePos int64, cfg Config) (Appender, error) {
	if err := validateConfig(&cfg); err != nil {
		return nil, err
	}
	_, statErr := fs.Stat(path)
	existed := statErr == nil
	f, err := openSegmentFile(fs, Uncached, path, size, wrotePos, 0)
	if err != nil {
		return nil, err
	}
	if err := syncSizeForDSync(f, cfg, size, wrotePos); err != nil {
		f.Close()
		return nil, err
	}
	if err := probeUncached(f, wrotePos, cfg.DSync); err != nil {
		f.Close()
		if !existed {
			_ = fs.Remove(path)
		}
		if errors.Is(err, vfs.ErrUnsupported) {
			return nil, fmt.Errorf("%w: %s %s: %w", ErrUnsupported, Uncached, path, err)
		}
		return nil, fmt.Errorf("iopath: %s: probe RWF_DONTCACHE on %s: %w", Uncached, path, err)
	}
	a := &pwriteAppender{writeAt: vfs.WriteAtUncached}
	a.init(Uncached, path, f, size, wrotePos)
	a.setDSync(cfg, true, wrotePos)
	if err := a.applyKnobs(cfg, wrotePos); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// probeUncached rewrites the byte before wrotePos (byte 0 of a new
// segment) with its own value through WriteAtUncached (WriteAtDSync with
// dsync, the flags Append will use), so that a kernel without
// RWF_DONTCACHE is found at Open rather than at the first Append.
func probeUncached(f vfs.File, wrotePos int64, dsync bool) error {
	off := max(wrotePos-1, 0)
	var b [1]byte
	if _, err := f.ReadAt(b[:], off); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if dsync {
		_, err := vfs.WriteAtDSync(f, b[:], off, true)
		return err
	}
	_, err := vfs.WriteAtUncached(f, b[:], off)
	return err
}

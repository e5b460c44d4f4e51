package iopath

import "errors"

// Errors returned by the write paths in addition to those in iopath.go.
var (
	// ErrBadSize is returned for a non-positive segment or buffer size, or
	// a wrotePos or read offset outside the segment.
	ErrBadSize = errors.New("iopath: invalid size or position")
	// ErrSizeMismatch is returned by an Opener when the segment file already
	// exists with a size other than the requested one (or is empty while
	// wrotePos > 0).
	ErrSizeMismatch = errors.New("iopath: existing segment file has the wrong size")
	// ErrBadAdvice is returned by an Opener for an unknown Config.Advice.
	ErrBadAdvice = errors.New("iopath: unknown advice")
	// ErrMlock is returned by an Opener when Config.Mlock is set and
	// mlock(2) fails (RLIMIT_MEMLOCK too low without CAP_IPC_LOCK: EPERM or
	// ENOMEM). The knob never degrades silently: the segment is not opened.
	ErrMlock = errors.New("iopath: mlock failed (raise RLIMIT_MEMLOCK or grant CAP_IPC_LOCK)")
	// ErrPoolExhausted is returned by BufferPool.Get, and by the pool
	// Opener, when every buffer is lent out.
	ErrPoolExhausted = errors.New("iopath: transient buffer pool exhausted")
	// ErrPoolClosed is returned by BufferPool.Get after Close.
	ErrPoolClosed = errors.New("iopath: buffer pool closed")
)

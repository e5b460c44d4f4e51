package iopath

import "fmt"

// What the Config knobs mean per write path (applied by the Opener, in the
// order Warm, Mlock, Advice; a failing knob fails the Open):
//
//	          Warm                           Mlock                    Advice
//	mmap      write one 0 byte per 4096 B    mlock the mapping        madvise(mapping)
//	          page of the mapping at and
//	          after wrotePos
//	pwrite    posix_fadvise(WILLNEED) of     no-op (no user buffer)   posix_fadvise(fd)
//	          [wrotePos, size)
//	pool      touch the buffer's pages at    mlock the pool buffer    posix_fadvise(fd)
//	          and after wrotePos, and        (stays locked while
//	          fadvise(WILLNEED) the file     it is in the pool)
//	direct    touch the staging and flush    mlock the staging and    posix_fadvise(fd)
//	          buffers (O_DIRECT bypasses     flush buffers            (little effect:
//	          the page cache)                                         O_DIRECT bypasses it)
//
// Mlock failure (EPERM/ENOMEM under a low RLIMIT_MEMLOCK) makes the Opener
// return an error wrapping ErrMlock: it never degrades silently, so an
// experiment that asked for locked memory either gets it or fails.

// validateConfig checks the knobs every write path shares.
func validateConfig(cfg *Config) error {
	switch cfg.Advice {
	case AdviceNone, AdviceNormal, AdviceRandom, AdviceSequential, AdviceWillNeed:
		return nil
	}
	return fmt.Errorf("%w %q", ErrBadAdvice, cfg.Advice)
}

// lockMemory mlocks b (mlock is the platform's; tests replace it),
// wrapping a failure in ErrMlock.
func lockMemory(b []byte, what string) error {
	if len(b) == 0 {
		return nil
	}
	if err := mlock(b); err != nil {
		return fmt.Errorf("%w: %s (%d bytes): %w", ErrMlock, what, len(b), err)
	}
	return nil
}

// touchPages writes a 0 byte at from and at every later multiple of
// pageSize in b, so that later writes there do not fault (RocketMQ
// warmMappedFile). Bytes below from hold data and are not touched.
func touchPages(b []byte, from int64) {
	if from >= int64(len(b)) {
		return
	}
	b[from] = 0
	for i := alignDown(from, pageSize) + pageSize; i < int64(len(b)); i += pageSize {
		b[i] = 0
	}
}

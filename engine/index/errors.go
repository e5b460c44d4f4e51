package index

import "errors"

var (
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("index: closed")
	// ErrInvalidConfig is returned for a Config that cannot work.
	ErrInvalidConfig = errors.New("index: invalid config")
	// ErrFileSize is returned by Open for a file whose length does not match
	// the configured slot and entry counts.
	ErrFileSize = errors.New("index: file length does not match the configured size")
	// ErrCorrupt is returned by Open for a header that cannot be right.
	ErrCorrupt = errors.New("index: corrupt index file header")
)

package consumequeue

import "errors"

var (
	// ErrFileSize is returned by Open when a segment file's length differs from
	// the configured file size (RocketMQ: "length not matched message store
	// config value").
	ErrFileSize = errors.New("consumequeue: file length does not match the configured file size")
	// ErrFileName is returned by Open for a file whose name is not a 20-digit
	// start offset aligned to the file size.
	ErrFileName = errors.New("consumequeue: bad segment file name")
	// ErrRemoved is returned by Get and Read when the file holding the offset
	// has been removed (cleaned, below the queue's minimum offset, or never
	// written because of a gap). RollNextFile gives the next file's first offset.
	ErrRemoved = errors.New("consumequeue: offset is in a removed file")
	// ErrNotFound is returned by Get for an offset at or beyond MaxOffset.
	ErrNotFound = errors.New("consumequeue: no unit at offset")
	// ErrNotRecovered is returned by mutators of a queue loaded from disk before
	// Recover has run.
	ErrNotRecovered = errors.New("consumequeue: queue not recovered")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("consumequeue: closed")
	// ErrNoQueue is returned by Store.Queue when the queue does not exist and
	// create is false.
	ErrNoQueue = errors.New("consumequeue: no such queue")
	// ErrInvalidTopic is returned for a topic that cannot be a directory name.
	ErrInvalidTopic = errors.New("consumequeue: invalid topic name")
	// ErrInvalidConfig is returned for a Config that cannot work.
	ErrInvalidConfig = errors.New("consumequeue: invalid config")
)

// ErrInvalidUnit is returned by Put for a negative queue offset or a unit that
// is not data (negative phyOffset or size <= 0).
var ErrInvalidUnit = errors.New("consumequeue: invalid unit")

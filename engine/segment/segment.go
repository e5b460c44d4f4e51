// Package segment is RocketMQ's MappedFile and MappedFileQueue: a directory
// of fixed-size segment files, each named by its 20-digit zero-padded start
// offset, each written through an iopath.Appender.
//
//	<dir>/00000000000000000000      bytes [0, size)
//	<dir>/00000000001073741824      bytes [size, 2*size)
//	...
//
// Every segment is preallocated to exactly Size bytes before it is used. The
// next segment is created, preallocated (and warmed, if configured) in the
// background by an allocator goroutine so that a roll does not stall appends
// (RocketMQ AllocateMappedFileService; etcd's file pipeline).
//
// Concurrency: Queue.Last, Find, Segments and the position accessors may be
// called from any goroutine (the segment list is an immutable snapshot
// swapped atomically). Roll, Truncate and Remove* are called by the log's
// single writer (under its append lock). Close is called once.
package segment

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/engine/iopath"
)

// NameDigits is the width of a segment file name.
const NameDigits = 20

// Name returns the file name of the segment that starts at offset.
func Name(start int64) string { return fmt.Sprintf("%020d", start) }

// ParseName parses a segment file name; ok is false for anything else.
func ParseName(name string) (start int64, ok bool) {
	if len(name) != NameDigits {
		return 0, false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(name, 10, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return v, true
}

// Errors.
var (
	ErrSizeMismatch = errors.New("segment: file length does not match the configured segment size")
	ErrClosed       = errors.New("segment: queue closed")
	ErrNotFound     = errors.New("segment: no segment holds that offset")
)

// Segment is one file of the queue.
type Segment struct {
	start int64
	path  string
	app   iopath.Appender
}

// Start is the segment's first global offset.
func (s *Segment) Start() int64 { return s.start }

// Path is the segment's file path.
func (s *Segment) Path() string { return s.path }

// Appender is the write path over the segment's file.
func (s *Segment) Appender() iopath.Appender { return s.app }

// Size is the segment's fixed size.
func (s *Segment) Size() int64 { return s.app.Size() }

// End is the global offset one past the segment's last byte.
func (s *Segment) End() int64 { return s.start + s.app.Size() }

// WroteOffset is the global offset of the segment's write position.
func (s *Segment) WroteOffset() int64 { return s.start + s.app.WrotePos() }

// FlushedOffset is the global offset of the segment's flushed position.
func (s *Segment) FlushedOffset() int64 { return s.start + s.app.FlushedPos() }

// Full reports whether nothing more can be appended.
func (s *Segment) Full() bool { return s.app.WrotePos() >= s.app.Size() }

// Contains reports whether off lies in the segment.
func (s *Segment) Contains(off int64) bool { return off >= s.start && off < s.End() }

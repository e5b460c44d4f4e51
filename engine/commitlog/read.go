package commitlog

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/brokerlab/brokerlab/engine/record"
)

// MaxRecordSize bounds TOTALSIZE for a log with this config: the body limit
// plus 64 KiB of headers, topic and properties (RocketMQ's encoder buffer).
func (l *Log) MaxRecordSize() int { return l.cfg.MaxBodySize + 64<<10 }

// ReadAt reads len(p) bytes at global offset off. The range must lie in one
// segment and below MaxOffset.
func (l *Log) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > l.wrote.Load() {
		return 0, fmt.Errorf("%w: [%d,%d) beyond max offset %d", ErrNoRecord, off, off+int64(len(p)), l.wrote.Load())
	}
	l.rmu.RLock()
	defer l.rmu.RUnlock()
	seg, err := l.q.Find(off)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNoRecord, err)
	}
	pos := off - seg.Start()
	if pos+int64(len(p)) > seg.Size() {
		return 0, fmt.Errorf("commitlog: read [%d,%d) crosses the end of %s", off, off+int64(len(p)), seg.Path())
	}
	return seg.Appender().ReadAt(p, pos)
}

// ReadRecord reads the record at off into buf (grown as needed) and decodes
// it (without CRC check; the caller may verify with record.Decode). It
// returns record.ErrBlank (errors.Is) at an end-of-segment blank: continue at
// RollNextFile(off). A record that does not decode is reported as a
// *CorruptionError naming the segment and offset.
func (l *Log) ReadRecord(off int64, buf []byte) ([]byte, record.Record, error) {
	var hdr [8]byte
	if _, err := l.ReadAt(hdr[:], off); err != nil {
		return buf, record.Record{}, err
	}
	size := int32(binary.BigEndian.Uint32(hdr[:4]))
	magic := int32(binary.BigEndian.Uint32(hdr[4:8]))
	if magic == record.MagicBlank {
		return buf, record.Record{TotalSize: size, Magic: magic}, record.ErrBlank
	}
	if size < record.BlankMinLen || int(size) > l.MaxRecordSize() {
		return buf, record.Record{}, l.corruption(off, fmt.Errorf("record size %d out of range", size))
	}
	if cap(buf) < int(size) {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	if _, err := l.ReadAt(buf, off); err != nil {
		return buf, record.Record{}, err
	}
	rec, err := record.Decode(buf, false)
	if err != nil {
		if errors.Is(err, record.ErrBlank) {
			return buf, rec, err
		}
		return buf, rec, l.corruption(off, err)
	}
	return buf, rec, nil
}

// corruption names the segment file and offset of a bad record.
func (l *Log) corruption(off int64, err error) error {
	path := "?"
	if seg, ferr := l.q.Find(off); ferr == nil {
		path = seg.Path()
	}
	return &CorruptionError{Path: path, Offset: off, Err: err}
}

// ErrCorruption marks every corruption error (errors.Is).
var ErrCorruption = errors.New("commitlog: corruption")

// CorruptionError reports an invalid record: which segment file, which
// global offset, and why.
type CorruptionError struct {
	Path   string
	Offset int64
	Err    error
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("commitlog: corrupt record in %s at offset %d: %v", e.Path, e.Offset, e.Err)
}

func (e *CorruptionError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrCorruption) true.
func (e *CorruptionError) Is(target error) bool { return target == ErrCorruption }

package commitlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/brokerlab/brokerlab/engine/record"
)

// Raw appends: a replica (a RocketMQ slave) receives the master's commit log
// as a byte stream cut at arbitrary boundaries and stores it verbatim, so
// its segments are byte-identical to the master's: the same records at the
// same offsets, the same end-of-file blanks and padding, the same rolls.
//
// Two positions describe a replica's log:
//
//   - RawEnd: every byte received and written, the offset the replica
//     reports to its master and where the next raw append must start.
//   - MaxOffset (the published end): the end of the last complete record,
//     or the end of a segment whose blank and padding are complete. Readers,
//     the dispatcher and the flush policy see only the published end, so a
//     record cut in half by the stream is invisible until its rest arrives.
//
// Each record is verified before it is published (sizes, magic, body CRC
// when Config.CheckCRC, PHYSICALOFFSET equal to where it lies, room for the
// blank after it); a record that fails is a divergence between master and
// replica and makes the log unwritable (sticky error). After a crash the
// usual recovery scan cuts a partial tail: the replica's RawEnd is then
// its recovered end, and its master resends the rest.
//
// Raw appends and ordinary appends must not be mixed on one log while a
// partial record is pending: the owner (the store) refuses puts on a
// replica.

// ErrRawOffset is returned by AppendRaw for bytes that do not start where
// the log's raw end is.
var ErrRawOffset = errors.New("commitlog: raw append at the wrong offset")

// ErrRawDiverged marks received bytes that do not form valid records at
// their offsets: the replica and its master disagree about the log.
var ErrRawDiverged = errors.New("commitlog: replicated bytes are not a valid log")

// rawState is a replica's raw-append position (see above).
type rawState struct {
	started atomic.Bool  // a raw append happened since Open
	end     atomic.Int64 // RawEnd once started
	hdr     [record.BlankMinLen]byte
	buf     []byte // verification buffer, guarded by Log.mu
}

// RawEnd is the offset one past the last byte stored by AppendRaw, or
// MaxOffset when nothing was raw-appended since Open (a recovered log ends
// at a record boundary).
func (l *Log) RawEnd() int64 {
	if l.raw.started.Load() {
		return l.raw.end.Load()
	}
	return l.wrote.Load()
}

// AppendRaw writes p verbatim at global offset off, which must equal
// RawEnd; into an empty log (no segment, nothing written) off may be any
// segment-aligned offset, where the log then starts (a fresh replica of a
// master whose older segments it never receives). Bytes that reach a
// segment's end continue in a new segment at the next offset, exactly as
// the master rolled. The published end (MaxOffset) then advances over every
// record p completes.
//
// Errors: ErrClosed; ErrNotWritable after a sticky error; ErrRawOffset
// (nothing written); ErrRawDiverged or a write error, which are sticky.
// AppendRaw serializes with appends under the append lock.
func (l *Log) AppendRaw(off int64, p []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrClosed
	}
	if err := l.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrNotWritable, err)
	}
	end := l.RawEnd()
	if off != end {
		if end != 0 || l.q.Last() != nil || off < 0 || off%l.cfg.SegmentSize != 0 {
			return fmt.Errorf("%w: bytes for %d, the log ends at %d", ErrRawOffset, off, end)
		}
		l.wrote.Store(off) // empty log: the first roll starts at off
	}
	for len(p) > 0 {
		seg := l.q.Last()
		if seg == nil || seg.Full() {
			if seg != nil && l.wrote.Load() != seg.End() {
				return l.setErr(fmt.Errorf("%w: segment %s is full but its records end at %d", ErrRawDiverged, seg.Path(), l.wrote.Load()))
			}
			var err error
			if seg, err = l.roll(seg); err != nil {
				return err
			}
		}
		app := seg.Appender()
		if seg.Start()+app.WrotePos() != off {
			panic(fmt.Sprintf("commitlog: raw end %d is not the segment's write position %d", off, seg.Start()+app.WrotePos()))
		}
		n := min(int64(len(p)), app.Size()-app.WrotePos())
		if _, err := app.Append(p[:n]); err != nil {
			return l.setErr(fmt.Errorf("commitlog: raw append to %s: %w", seg.Path(), err))
		}
		off += n
		p = p[n:]
		l.raw.end.Store(off)
		l.raw.started.Store(true)
		if err := l.publishRaw(); err != nil {
			return err
		}
	}
	return nil
}

// publishRaw advances the published end over the complete records (and
// complete blanks) below RawEnd, verifying each.
// REQUIRES: l.mu held.
func (l *Log) publishRaw() error {
	w := l.wrote.Load()
	end := l.raw.end.Load()
	size := l.cfg.SegmentSize
	maxRec := int64(l.MaxRecordSize())
	published := w
	defer func() { l.wrote.Store(published) }()
	for end-w >= record.BlankMinLen {
		seg, err := l.q.Find(w)
		if err != nil {
			return l.setErr(fmt.Errorf("%w: no segment holds offset %d: %w", ErrRawDiverged, w, err))
		}
		segEnd := seg.End()
		app := seg.Appender()
		if _, err := app.ReadAt(l.raw.hdr[:], w-seg.Start()); err != nil {
			return l.setErr(fmt.Errorf("commitlog: read back raw bytes at %d: %w", w, err))
		}
		total := int64(int32(binary.BigEndian.Uint32(l.raw.hdr[:4])))
		magic := int32(binary.BigEndian.Uint32(l.raw.hdr[4:8]))
		if magic == record.MagicBlank {
			if total != segEnd-w {
				return l.setErr(l.divergence(w, fmt.Errorf("blank of %d bytes, %d left in the segment", total, segEnd-w)))
			}
			if end < segEnd {
				return nil // the padding is still coming
			}
			w = segEnd
			published = w
			if w%size != 0 {
				panic("commitlog: segment end not aligned")
			}
			continue
		}
		if total < record.BlankMinLen || total > maxRec || w+total+record.BlankMinLen > segEnd {
			return l.setErr(l.divergence(w, fmt.Errorf("record size %d out of range", total)))
		}
		if end-w < total {
			return nil // the rest of the record is still coming
		}
		if int64(cap(l.raw.buf)) < total {
			l.raw.buf = make([]byte, total)
		}
		buf := l.raw.buf[:total]
		if _, err := app.ReadAt(buf, w-seg.Start()); err != nil {
			return l.setErr(fmt.Errorf("commitlog: read back raw record at %d: %w", w, err))
		}
		rec, err := record.Decode(buf, l.cfg.CheckCRC)
		if err != nil {
			return l.setErr(l.divergence(w, err))
		}
		if rec.PhysicalOffset != w {
			return l.setErr(l.divergence(w, fmt.Errorf("record says physical offset %d", rec.PhysicalOffset)))
		}
		w += total
		published = w
		l.st.appends.Add(1)
	}
	return nil
}

func (l *Log) divergence(off int64, err error) error {
	return fmt.Errorf("%w: %w", ErrRawDiverged, l.corruption(off, err))
}

// ReadRaw copies committed log bytes at off into p for a replica: at most
// len(p) bytes, never past the end of off's segment nor past limit (the
// caller passes what it may ship, e.g. CommittedOffset). It returns 0 and no
// error when there is nothing to send yet; ErrNoRecord (wrapped) when off is
// below MinOffset (cleaned) or beyond MaxOffset.
func (l *Log) ReadRaw(p []byte, off, limit int64) (int, error) {
	limit = min(limit, l.wrote.Load())
	if off < l.MinOffset() || off > limit {
		if off == limit {
			return 0, nil
		}
		return 0, fmt.Errorf("%w: offset %d outside [%d, %d]", ErrNoRecord, off, l.MinOffset(), limit)
	}
	segEnd := off - off%l.cfg.SegmentSize + l.cfg.SegmentSize
	n := min(int64(len(p)), limit-off, segEnd-off)
	if n <= 0 {
		return 0, nil
	}
	return l.ReadAt(p[:n], off)
}

package consumequeue

import (
	"encoding/binary"
	"math"
)

// UnitSize is the size of one consume-queue unit (CQ_STORE_UNIT_SIZE).
const UnitSize = 20

// pageSize is RocketMQ's OS_PAGE_SIZE, used by the flush least-pages rule.
const pageSize = 4096

// Unit is one consume-queue entry.
type Unit struct {
	PhyOffset int64 // commit-log offset of the record
	Size      int32 // record TOTALSIZE
	TagsCode  int64 // sign-extended Java hashCode of TAGS, 0 without tags
}

// BlankUnit is the pre-fill/gap unit (0, MaxInt32, 0) (RocketMQ fillPreBlank).
var BlankUnit = Unit{PhyOffset: 0, Size: math.MaxInt32, TagsCode: 0}

// IsBlank reports whether u is a pre-fill/gap unit that references no record.
func (u Unit) IsBlank() bool { return u == BlankUnit }

// valid reports whether u is data (not the all-zero end marker): RocketMQ's
// recovery condition offset >= 0 && size > 0. Blank units are valid.
func (u Unit) valid() bool { return u.PhyOffset >= 0 && u.Size > 0 }

// End is the commit-log offset just past the record.
func (u Unit) End() int64 { return u.PhyOffset + int64(u.Size) }

// Encode writes u into b[:20] big-endian.
func (u Unit) Encode(b []byte) {
	_ = b[UnitSize-1]
	binary.BigEndian.PutUint64(b[0:8], uint64(u.PhyOffset))
	binary.BigEndian.PutUint32(b[8:12], uint32(u.Size))
	binary.BigEndian.PutUint64(b[12:20], uint64(u.TagsCode))
}

// DecodeUnit reads a unit from b[:20].
func DecodeUnit(b []byte) Unit {
	_ = b[UnitSize-1]
	return Unit{
		PhyOffset: int64(binary.BigEndian.Uint64(b[0:8])),
		Size:      int32(binary.BigEndian.Uint32(b[8:12])),
		TagsCode:  int64(binary.BigEndian.Uint64(b[12:20])),
	}
}

package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/netip"
	"slices"
)

// BodyCRC returns the BODYCRC of body: crc32.ChecksumIEEE(body) & 0x7FFFFFFF
// (UtilAll.crc32). Compute it outside the append lock.
func BodyCRC(body []byte) uint32 {
	return crc32.ChecksumIEEE(body) & 0x7FFFFFFF
}

// AppendEncode appends m's full record to dst and returns the extended
// slice. bodyCRC (see BodyCRC), queueOffset, physOffset and storeTimestamp
// are written as given; Patch rewrites the last three in place once they are
// known. The magic is V2 iff the topic is longer than 127 bytes. It does not
// allocate when dst has room for Size() more bytes. On error dst is returned
// unchanged; errors are those of Size.
func AppendEncode(dst []byte, m *Message, bodyCRC uint32, queueOffset, physOffset, storeTimestamp int64) ([]byte, error) {
	l, err := m.layout(false)
	if err != nil {
		return dst, err
	}
	return appendLayout(dst, m, &l, bodyCRC, queueOffset, physOffset, storeTimestamp), nil
}

// appendLayout writes m's record shaped by l; with l.reserveCRC it leaves
// the 20 reserved bytes zero for FillPropCRC.
func appendLayout(dst []byte, m *Message, l *layout, bodyCRC uint32, queueOffset, physOffset, storeTimestamp int64) []byte {
	n := len(dst)
	dst = slices.Grow(dst, l.size)[:n+l.size]
	out := dst[n:]
	magic := MagicV1
	if l.v2 {
		magic = MagicV2
	}
	h := Record{
		TotalSize: int32(l.size), Magic: magic, BodyCRC: bodyCRC,
		QueueID: m.QueueID, Flag: m.Flag,
		QueueOffset: queueOffset, PhysicalOffset: physOffset,
		SysFlag: l.sysFlag, BornTimestamp: m.BornTimestamp, BornHost: l.born,
		StoreTimestamp: storeTimestamp, StoreHost: l.store,
		ReconsumeTimes: m.ReconsumeTimes, PreparedTransactionOffset: m.PreparedTransactionOffset,
	}
	pos := putFixed(out, &h)
	pos = putVariable(out, pos, l.v2, m.Body, m.Topic, m.Properties, l.propLen)
	if l.addSep {
		out[pos] = PropertySeparator
		pos++
	}
	if l.reserveCRC {
		clear(out[pos : pos+PropCRCReservedLen])
	}
	return dst
}

// putFixed writes fields TOTALSIZE through PREPARED TRANSACTION OFFSET
// from r (host widths from r.SysFlag) and returns the position after them.
func putFixed(out []byte, r *Record) int {
	be := binary.BigEndian
	be.PutUint32(out[PosTotalSize:], uint32(r.TotalSize))
	be.PutUint32(out[PosMagic:], uint32(r.Magic))
	be.PutUint32(out[PosBodyCRC:], r.BodyCRC)
	be.PutUint32(out[PosQueueID:], uint32(r.QueueID))
	be.PutUint32(out[PosFlag:], uint32(r.Flag))
	be.PutUint64(out[PosQueueOffset:], uint64(r.QueueOffset))
	be.PutUint64(out[PosPhysicalOffset:], uint64(r.PhysicalOffset))
	be.PutUint32(out[PosSysFlag:], uint32(r.SysFlag))
	be.PutUint64(out[PosBornTimestamp:], uint64(r.BornTimestamp))
	pos := putHost(out, PosBornHost, r.BornHost, r.SysFlag&FlagBornHostV6 != 0)
	be.PutUint64(out[pos:], uint64(r.StoreTimestamp))
	pos = putHost(out, pos+8, r.StoreHost, r.SysFlag&FlagStoreHostV6 != 0)
	be.PutUint32(out[pos:], uint32(r.ReconsumeTimes))
	be.PutUint64(out[pos+4:], uint64(r.PreparedTransactionOffset))
	return pos + 12
}

// putHost writes address and port (as int32) at pos, 4 or 16 address bytes
// as v6 says, and returns the position after it.
func putHost(out []byte, pos int, ap netip.AddrPort, v6 bool) int {
	a := ap.Addr()
	if v6 {
		b := a.As16()
		pos += copy(out[pos:], b[:])
	} else {
		b := a.As4()
		pos += copy(out[pos:], b[:])
	}
	binary.BigEndian.PutUint32(out[pos:], uint32(ap.Port()))
	return pos + 4
}

// putVariable writes BODY, TOPIC and PROPERTIES with their lengths; propLen
// is the PROPERTIESLENGTH to write (>= len(props) with a CRC reservation).
func putVariable[S ~string | ~[]byte](out []byte, pos int, v2 bool, body []byte, topic, props S, propLen int) int {
	be := binary.BigEndian
	be.PutUint32(out[pos:], uint32(len(body)))
	pos += 4
	pos += copy(out[pos:], body)
	if v2 {
		be.PutUint16(out[pos:], uint16(len(topic)))
		pos += 2
	} else {
		out[pos] = byte(len(topic))
		pos++
	}
	pos += copy(out[pos:], topic)
	be.PutUint16(out[pos:], uint16(propLen))
	pos += 2
	pos += copy(out[pos:], props)
	return pos
}

// Patch rewrites QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP in rec, a
// record from AppendEncode: the fields only known under the append lock.
// The STORETIMESTAMP position follows the record's born-host width. A record
// with a "__CRC32#" reservation needs FillPropCRC afterwards.
//
// REQUIRES: rec starts with an encoded record (panics otherwise).
func Patch(rec []byte, queueOffset, physOffset, storeTimestamp int64) {
	if len(rec) < PosBornHost {
		panic(fmt.Sprintf("record: Patch on %d bytes, not an encoded record", len(rec)))
	}
	be := binary.BigEndian
	ts := StoreTimestampPos(int32(be.Uint32(rec[PosSysFlag:])))
	if len(rec) < ts+8 {
		panic(fmt.Sprintf("record: Patch on %d bytes, not an encoded record", len(rec)))
	}
	be.PutUint64(rec[PosQueueOffset:], uint64(queueOffset))
	be.PutUint64(rec[PosPhysicalOffset:], uint64(physOffset))
	be.PutUint64(rec[ts:], uint64(storeTimestamp))
}

// PutBlank writes the 8-byte end-of-segment record [maxBlank][MagicBlank]
// at the start of dst. maxBlank is the number of bytes left in the segment
// from dst[0]; the bytes after the first 8 are not touched.
//
// REQUIRES: len(dst) >= BlankMinLen (panics otherwise).
func PutBlank(dst []byte, maxBlank int32) {
	_ = dst[BlankMinLen-1]
	binary.BigEndian.PutUint32(dst[0:], uint32(maxBlank))
	binary.BigEndian.PutUint32(dst[4:], blankMagicBits)
}

// AppendBlank appends the 8-byte end-of-segment record to dst.
func AppendBlank(dst []byte, maxBlank int32) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(maxBlank))
	return binary.BigEndian.AppendUint32(dst, blankMagicBits)
}

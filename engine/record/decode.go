package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// Decode errors. Every error Decode, PeekSize, DecodeBatch and VerifyPropCRC
// return is ErrBlank or a *DecodeError; errors.Is(err, ErrCorrupt) holds for
// every *DecodeError, and errors.Is(err, ErrShort) also holds when the input
// ended before the record did.
var (
	// ErrBlank marks the end-of-segment BLANK record; the rest of the
	// segment holds no records.
	ErrBlank = errors.New("record: end-of-segment blank record")
	// ErrCorrupt: the bytes are not a valid record.
	ErrCorrupt = errors.New("record: corrupt record")
	// ErrShort: the input ends before the record does.
	ErrShort = errors.New("record: truncated record")
)

// DecodeError describes why bytes are not a valid record. Err is ErrCorrupt
// or ErrShort; the error matches ErrCorrupt in both cases.
type DecodeError struct {
	Reason string
	Err    error
}

func (e *DecodeError) Error() string { return e.Err.Error() + ": " + e.Reason }

// Unwrap returns Err.
func (e *DecodeError) Unwrap() error { return e.Err }

// Is reports that every DecodeError is an ErrCorrupt.
func (e *DecodeError) Is(target error) bool { return target == ErrCorrupt }

func corruptf(format string, args ...any) error {
	return &DecodeError{Reason: fmt.Sprintf(format, args...), Err: ErrCorrupt}
}

func shortf(format string, args ...any) error {
	return &DecodeError{Reason: fmt.Sprintf(format, args...), Err: ErrShort}
}

// Record is a decoded commit-log record. Body, Topic and Properties alias
// the decoded input (capacity-limited, so appending to them copies).
type Record struct {
	TotalSize                 int32
	Magic                     int32
	BodyCRC                   uint32
	QueueID, Flag             int32
	QueueOffset               int64
	PhysicalOffset            int64
	SysFlag                   int32
	BornTimestamp             int64
	BornHost                  netip.AddrPort
	StoreTimestamp            int64
	StoreHost                 netip.AddrPort
	ReconsumeTimes            int32
	PreparedTransactionOffset int64
	Body                      []byte
	Topic                     []byte
	Properties                []byte
}

// PeekSize reads TOTALSIZE and MAGICCODE from the first 8 bytes of b and
// checks them: a known magic and a size no smaller than the smallest record
// of that kind. For a BLANK record it returns magic MagicBlank and a nil
// error. It does not look at b beyond 8 bytes.
func PeekSize(b []byte) (size int32, magic int32, err error) {
	if len(b) < 8 {
		return 0, 0, shortf("%d bytes, TOTALSIZE and MAGICCODE need 8", len(b))
	}
	size = int32(binary.BigEndian.Uint32(b[PosTotalSize:]))
	magic = int32(binary.BigEndian.Uint32(b[PosMagic:]))
	var minSize int32
	switch magic {
	case MagicBlank:
		minSize = BlankMinLen
	case MagicV1:
		minSize = MinRecordSize
	case MagicV2:
		minSize = MinRecordSize + 1
	default:
		return size, magic, corruptf("bad MAGICCODE %#08x", uint32(magic))
	}
	if size < minSize {
		return size, magic, corruptf("TOTALSIZE %d below the minimum %d", size, minSize)
	}
	return size, magic, nil
}

// Decode parses the record at the start of b; bytes after TOTALSIZE are
// ignored. For a BLANK record it returns ErrBlank with TotalSize (the bytes
// left in the segment) and Magic set. Otherwise it checks that the field
// lengths add up to TOTALSIZE (as checkMessageAndReturnSize does) and, with
// checkCRC, that BODYCRC matches the body; failures are *DecodeError. It
// never panics and does not allocate unless it fails.
func Decode(b []byte, checkCRC bool) (Record, error) {
	var r Record
	size, magic, err := PeekSize(b)
	r.TotalSize, r.Magic = size, magic
	if err != nil {
		return r, err
	}
	if magic == MagicBlank {
		return r, ErrBlank
	}
	if int(size) > len(b) {
		return r, shortf("TOTALSIZE %d, only %d bytes available", size, len(b))
	}
	rec := b[:size:size]
	be := binary.BigEndian
	r.SysFlag = int32(be.Uint32(rec[PosSysFlag:]))
	v2 := magic == MagicV2
	if fixed := fixedSize(v2, r.SysFlag); int(size) < fixed {
		return r, corruptf("TOTALSIZE %d below the %d fixed bytes of SYSFLAG %#x", size, fixed, r.SysFlag)
	}
	r.BodyCRC = be.Uint32(rec[PosBodyCRC:])
	r.QueueID = int32(be.Uint32(rec[PosQueueID:]))
	r.Flag = int32(be.Uint32(rec[PosFlag:]))
	r.QueueOffset = int64(be.Uint64(rec[PosQueueOffset:]))
	r.PhysicalOffset = int64(be.Uint64(rec[PosPhysicalOffset:]))
	r.BornTimestamp = int64(be.Uint64(rec[PosBornTimestamp:]))
	pos := PosBornHost
	if r.BornHost, pos, err = readHost(rec, pos, r.SysFlag&FlagBornHostV6 != 0); err != nil {
		return r, err
	}
	r.StoreTimestamp = int64(be.Uint64(rec[pos:]))
	if r.StoreHost, pos, err = readHost(rec, pos+8, r.SysFlag&FlagStoreHostV6 != 0); err != nil {
		return r, err
	}
	r.ReconsumeTimes = int32(be.Uint32(rec[pos:]))
	r.PreparedTransactionOffset = int64(be.Uint64(rec[pos+4:]))
	pos += 12

	// The fixed-size check above guarantees the length fields fit when the
	// variable parts before them are within TOTALSIZE.
	bodyLen := int64(int32(be.Uint32(rec[pos:])))
	pos += 4
	if bodyLen < 0 || bodyLen > int64(len(rec)-pos) {
		return r, corruptf("BODYLENGTH %d does not fit TOTALSIZE %d", bodyLen, size)
	}
	r.Body = rec[pos : pos+int(bodyLen) : pos+int(bodyLen)]
	pos += int(bodyLen)

	var topicLen int
	if v2 {
		if pos+2 > len(rec) {
			return r, corruptf("TOTALSIZE %d ends inside TOPICLENGTH", size)
		}
		topicLen = int(int16(be.Uint16(rec[pos:])))
		pos += 2
	} else {
		if pos+1 > len(rec) {
			return r, corruptf("TOTALSIZE %d ends inside TOPICLENGTH", size)
		}
		topicLen = int(int8(rec[pos]))
		pos++
	}
	if topicLen < 0 || topicLen > len(rec)-pos {
		return r, corruptf("TOPICLENGTH %d does not fit TOTALSIZE %d", topicLen, size)
	}
	r.Topic = rec[pos : pos+topicLen : pos+topicLen]
	pos += topicLen

	if pos+2 > len(rec) {
		return r, corruptf("TOTALSIZE %d ends inside PROPERTIESLENGTH", size)
	}
	propLen := int(int16(be.Uint16(rec[pos:])))
	pos += 2
	if propLen < 0 || pos+propLen != len(rec) {
		return r, corruptf("fields add up to %d bytes, TOTALSIZE is %d", pos+propLen, size)
	}
	r.Properties = rec[pos:len(rec):len(rec)]

	if checkCRC {
		if crc := BodyCRC(r.Body); crc != r.BodyCRC {
			return r, corruptf("BODYCRC %#08x, body has %#08x", r.BodyCRC, crc)
		}
	}
	return r, nil
}

// readHost reads a 4- or 16-byte address and an int32 port at pos.
// REQUIRES: rec holds them (checked by the caller via fixedSize).
func readHost(rec []byte, pos int, v6 bool) (netip.AddrPort, int, error) {
	var a netip.Addr
	if v6 {
		a = netip.AddrFrom16([16]byte(rec[pos : pos+16]))
		pos += 16
	} else {
		a = netip.AddrFrom4([4]byte(rec[pos : pos+4]))
		pos += 4
	}
	port := int32(binary.BigEndian.Uint32(rec[pos:]))
	if port < 0 || port > 0xFFFF {
		return netip.AddrPort{}, pos, corruptf("port %d out of range", port)
	}
	return netip.AddrPortFrom(a, uint16(port)), pos + 4, nil
}

// IsV2 reports whether the record has a 2-byte topic length.
func (r *Record) IsV2() bool { return r.Magic == MagicV2 }

// Property returns the value of the named property (the last one if the
// name repeats), aliasing r.Properties.
func (r *Record) Property(name string) ([]byte, bool) { return PropertyBytes(r.Properties, name) }

// TagsCode returns the consume-queue tags code: TagsCode of the TAGS
// property, 0 without tags. (For SCHEDULE_TOPIC_XXXX the store puts the
// delivery time there instead; that is the store's business.)
func (r *Record) TagsCode() int64 {
	tags, _ := PropertyBytes(r.Properties, PropertyTags)
	return int64(javaHashBytes(tags))
}

// Message returns r as a Message. Body aliases r.Body; Topic and Properties
// are copied into strings. SysFlag keeps its IPv6 bits, which the encoder
// recomputes from the hosts.
func (r *Record) Message() Message {
	return Message{
		Topic: string(r.Topic), QueueID: r.QueueID, Flag: r.Flag, SysFlag: r.SysFlag,
		Body: r.Body, Properties: string(r.Properties),
		BornTimestamp: r.BornTimestamp, BornHost: r.BornHost, StoreHost: r.StoreHost,
		ReconsumeTimes: r.ReconsumeTimes, PreparedTransactionOffset: r.PreparedTransactionOffset,
	}
}

// PeekStoreTimestamp returns STORETIMESTAMP of the record starting at b
// without decoding the rest (searching by time needs only this field).
func PeekStoreTimestamp(b []byte) (int64, error) {
	if _, magic, err := PeekSize(b); err != nil {
		return 0, err
	} else if magic == MagicBlank {
		return 0, ErrBlank
	}
	if len(b) < PosSysFlag+4 {
		return 0, shortf("%d bytes, SYSFLAG needs %d", len(b), PosSysFlag+4)
	}
	p := StoreTimestampPos(int32(binary.BigEndian.Uint32(b[PosSysFlag:])))
	if len(b) < p+8 {
		return 0, shortf("%d bytes, STORETIMESTAMP needs %d", len(b), p+8)
	}
	return int64(binary.BigEndian.Uint64(b[p:])), nil
}

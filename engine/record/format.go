package record

// Magic codes (MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2, BLANK_MAGIC_CODE).
const (
	MagicV1    int32 = -626843481 // DA A3 20 A7: 1-byte topic length
	MagicV2    int32 = -626843477 // DA A3 20 AB: 2-byte topic length
	MagicBlank int32 = -875286124 // CB D4 31 94: end-of-segment filler
)

// BlankMinLen is END_FILE_MIN_BLANK_LENGTH: the size of a BLANK record, and
// the space a segment must keep free after every normal record.
const BlankMinLen = 8

// SYSFLAG bits (MessageSysFlag).
const (
	FlagCompressed int32 = 0x1 // body is compressed
	FlagMultiTags  int32 = 0x2 // legacy multi tags

	TransactionNot      int32 = 0x0
	TransactionPrepared int32 = 0x4 // half message
	TransactionCommit   int32 = 0x8
	TransactionRollback int32 = 0xC
	TransactionMask     int32 = 0xC

	FlagBornHostV6  int32 = 0x10 // born host is 16+4 bytes
	FlagStoreHostV6 int32 = 0x20 // store host is 16+4 bytes
	FlagNeedUnwrap  int32 = 0x40 // batch to be unwrapped
	FlagInnerBatch  int32 = 0x80 // inner batch (BatchConsumeQueue topics)

	CompressionLZ4  int32 = 0x100
	CompressionZSTD int32 = 0x200
	CompressionZLIB int32 = 0x300
	CompressionMask int32 = 0x700
)

// TransactionType returns the transaction bits of a SYSFLAG
// (MessageSysFlag.getTransactionValue): one of TransactionNot, ...Prepared,
// ...Commit, ...Rollback. The commit log writes QUEUEOFFSET 0 for Prepared
// and Rollback records; this package writes whatever it is given.
func TransactionType(sysFlag int32) int32 { return sysFlag & TransactionMask }

// Field positions from the start of a record. Positions after BORNHOST
// depend on the host sizes; see StoreTimestampPos.
const (
	PosTotalSize      = 0
	PosMagic          = 4
	PosBodyCRC        = 8
	PosQueueID        = 12
	PosFlag           = 16
	PosQueueOffset    = 20
	PosPhysicalOffset = 28
	PosSysFlag        = 36
	PosBornTimestamp  = 40
	PosBornHost       = 48
)

// Size limits of the format.
const (
	// MaxTopicLenV1 is the largest topic, in bytes, a V1 record can hold
	// (its length is a signed byte). Longer topics are written as V2.
	MaxTopicLenV1 = 127
	// MaxTopicLenV2 is the largest topic a V2 record can hold (int16).
	MaxTopicLenV2 = 32767
	// MaxPropertiesLen is the largest PROPERTIES field (int16).
	MaxPropertiesLen = 32767
	// MinRecordSize is the smallest normal record: V1, IPv4 hosts, empty
	// body, topic and properties.
	MinRecordSize = fixedV1IPv4
)

const (
	fixedV1IPv4 = 91 // everything but body, topic and properties bytes
	ipv4HostLen = 8
	ipv6HostLen = 20
)

// hostLen returns the BORNHOST/STOREHOST field length selected by bit.
func hostLen(sysFlag, bit int32) int {
	if sysFlag&bit != 0 {
		return ipv6HostLen
	}
	return ipv4HostLen
}

// StoreTimestampPos returns the position of STORETIMESTAMP in a record with
// the given SYSFLAG: 56, or 68 when the born host is IPv6.
func StoreTimestampPos(sysFlag int32) int {
	return PosBornHost + hostLen(sysFlag, FlagBornHostV6)
}

// fixedSize returns the record size without body, topic and properties.
func fixedSize(v2 bool, sysFlag int32) int {
	n := fixedV1IPv4
	if v2 {
		n++
	}
	if sysFlag&FlagBornHostV6 != 0 {
		n += ipv6HostLen - ipv4HostLen
	}
	if sysFlag&FlagStoreHostV6 != 0 {
		n += ipv6HostLen - ipv4HostLen
	}
	return n
}

// blankMagicBits is MagicBlank as it is stored.
const blankMagicBits uint32 = 0xCBD43194

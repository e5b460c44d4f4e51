// Package record is the one place the RocketMQ commit-log record format
// lives: the commit log, recovery, the pull response, the broker and the
// tests all encode and decode through it. The format follows Apache RocketMQ
// 5.3.x byte for byte (rocketmq-store.md §0–§2).
//
// # Record layout
//
// Big-endian, no padding. Offsets for V1 magic with IPv4 born and store hosts:
//
//	off size field
//	  0   4  TOTALSIZE        whole record, this field included
//	  4   4  MAGICCODE        DAA320A7 (V1, 1-byte topic length) or DAA320AB (V2, 2-byte)
//	  8   4  BODYCRC          crc32.ChecksumIEEE(body) & 0x7FFFFFFF
//	 12   4  QUEUEID
//	 16   4  FLAG             producer's user flag
//	 20   8  QUEUEOFFSET      logical offset in the consume queue   (Patch)
//	 28   8  PHYSICALOFFSET   commit-log offset of this record      (Patch)
//	 36   4  SYSFLAG          bit 0x10: born host IPv6, 0x20: store host IPv6
//	 40   8  BORNTIMESTAMP    producer ms
//	 48 8|20 BORNHOST         IPv4 (4) or IPv6 (16) address + port as int32
//	 56   8  STORETIMESTAMP   broker ms; offset 68 with an IPv6 born host (Patch)
//	 64 8|20 STOREHOST
//	 72   4  RECONSUMETIMES
//	 76   8  PREPARED TRANSACTION OFFSET
//	 84 4+n  BODYLENGTH, BODY
//	    1|2+t TOPICLENGTH (V1 signed byte, V2 int16), TOPIC (UTF-8)
//	    2+p  PROPERTIESLENGTH (int16), PROPERTIES (name 0x01 value 0x02 ...)
//
// TOTALSIZE = 91 + n + t + p for V1/IPv4/IPv4; V2 adds 1, each IPv6 host 12.
// A decoder recomputes that sum and rejects a record whose TOTALSIZE differs.
//
// The end of every full segment holds an 8-byte BLANK record
// [int32 bytes left in the segment][int32 CBD43194]; the bytes after it are
// undefined. A normal record is only written when at least 8 bytes remain
// after it (the commit log's rule; see PutBlank).
//
// Optionally (enabledAppendPropCRC) the last 20 bytes of PROPERTIES hold
// "__CRC32#" 0x01 <10 ASCII digits, least significant first> 0x02: the CRC of
// the whole record minus those 20 bytes (AppendEncodePropCRC, FillPropCRC,
// VerifyPropCRC).
//
// # Choices where Go and Java differ
//
//   - V1 vs V2: RocketMQ switches to V2 when the topic has more than 127 Java
//     chars. This package counts UTF-8 bytes, because the V1 length is a signed
//     byte of the byte length: a 100-char non-ASCII topic would overflow it.
//     Valid topics are ASCII (Validate), where both counts agree.
//   - Hosts: IPv4-mapped IPv6 addresses (what Go's dual-stack sockets report)
//     are written as IPv4, as Java's InetSocketAddress does; zones are dropped.
//     The IPv6 SYSFLAG bits are derived from the hosts, never taken from
//     Message.SysFlag.
//   - Decode rejects a stored port outside 0..65535 (never written by any
//     RocketMQ encoder) so every accepted record re-encodes to the same bytes.
//
// # Concurrency
//
// The functions share no mutable state and may be called concurrently; the
// usual rule applies to the buffers passed in (Patch, PutBlank and
// FillPropCRC write into theirs). A decoded Record and DecodeBatch's bodies
// alias the input, which must stay unchanged while they are in use.
// A UniqIDGenerator (and NewUniqID) is safe for concurrent use.
package record

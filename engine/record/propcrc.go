package record

import (
	"hash/crc32"
)

// PropCRCReservedLen is CommitLog.CRC32_RESERVED_LEN: the bytes at the end
// of PROPERTIES that hold "__CRC32#" 0x01 <10 digits> 0x02 when
// enabledAppendPropCRC is on.
const PropCRCReservedLen = len(PropertyCRC32) + 1 + 10 + 1

// AppendEncodePropCRC is AppendEncode with enabledAppendPropCRC: it adds a
// 0x02 after properties that do not end with one, reserves
// PropCRCReservedLen bytes at the end of PROPERTIES (counted in
// PROPERTIESLENGTH) and fills them with the CRC of the rest of the record.
// After Patch, call FillPropCRC again. Sizes are SizePropCRC's.
func AppendEncodePropCRC(dst []byte, m *Message, bodyCRC uint32, queueOffset, physOffset, storeTimestamp int64) ([]byte, error) {
	l, err := m.layout(true)
	if err != nil {
		return dst, err
	}
	n := len(dst)
	dst = appendLayout(dst, m, &l, bodyCRC, queueOffset, physOffset, storeTimestamp)
	writePropCRC(dst[n:])
	return dst, nil
}

// FillPropCRC recomputes the whole-record CRC of the record at the start of
// rec and writes it into the record's last PropCRCReservedLen bytes
// (CommitLog.doAppend with enabledAppendPropCRC). It fails, writing
// nothing, unless rec starts with a record whose properties end with a
// reservation: 20 zero bytes or a filled "__CRC32#" entry, preceded by
// nothing or by 0x02.
func FillPropCRC(rec []byte) error {
	r, err := Decode(rec, false)
	if err != nil {
		return err
	}
	if !hasCRCReservation(r.Properties) {
		return corruptf("properties do not end with a %d-byte CRC reservation", PropCRCReservedLen)
	}
	writePropCRC(rec[:r.TotalSize])
	return nil
}

func hasCRCReservation(props []byte) bool {
	n := len(props) - PropCRCReservedLen
	if n < 0 || (n > 0 && props[n-1] != PropertySeparator) {
		return false
	}
	res := props[n:]
	if string(res[:len(PropertyCRC32)+1]) == PropertyCRC32+"\x01" && res[PropCRCReservedLen-1] == PropertySeparator {
		return true
	}
	for _, c := range res {
		if c != 0 {
			return false
		}
	}
	return true
}

// writePropCRC fills the last PropCRCReservedLen bytes of rec, one whole
// record. The ten digits go least significant first (MessageDecoder.createCrc32).
func writePropCRC(rec []byte) {
	n := len(rec) - PropCRCReservedLen
	crc := crc32.ChecksumIEEE(rec[:n]) & 0x7FFFFFFF
	out := rec[n:]
	copy(out, PropertyCRC32)
	out[len(PropertyCRC32)] = NameValueSeparator
	for i := range 10 {
		out[len(PropertyCRC32)+1+i] = '0' + byte(crc%10)
		crc /= 10
	}
	out[PropCRCReservedLen-1] = PropertySeparator
}

// VerifyPropCRC checks the whole-record CRC of the record at the start of
// rec (recovery with forceVerifyPropCRC): the "__CRC32#" property, digits
// read least significant first, must equal the CRC of all but the record's
// last PropCRCReservedLen bytes. A missing property is corruption. Errors
// are Decode's or a *DecodeError.
func VerifyPropCRC(rec []byte) error {
	r, err := Decode(rec, false)
	if err != nil {
		return err
	}
	v, ok := PropertyBytes(r.Properties, PropertyCRC32)
	if !ok {
		return corruptf("no %s property", PropertyCRC32)
	}
	if len(v) > 10 || len(r.Properties) < PropCRCReservedLen {
		return corruptf("malformed %s property %q", PropertyCRC32, v)
	}
	var want uint64
	for i := len(v) - 1; i >= 0; i-- {
		if v[i] < '0' || v[i] > '9' {
			return corruptf("malformed %s property %q", PropertyCRC32, v)
		}
		want = want*10 + uint64(v[i]-'0')
	}
	n := int(r.TotalSize) - PropCRCReservedLen
	if got := crc32.ChecksumIEEE(rec[:n]) & 0x7FFFFFFF; uint64(got) != want {
		return corruptf("%s %d, record has %d", PropertyCRC32, want, got)
	}
	return nil
}

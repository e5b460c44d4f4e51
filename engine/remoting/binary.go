package remoting

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// binaryFixedLen is the ROCKETMQ header size without remark and ext bytes:
// code 2 + language 1 + version 2 + opaque 4 + flag 4 + remarkLen 4 + extLen 4.
const binaryFixedLen = 21

// appendBinaryHeader appends c's header in the ROCKETMQ binary layout. Ext
// fields are written in key order. It fails if code or version do not fit an
// int16 or a key is longer than an int16 length.
func appendBinaryHeader(dst []byte, c *Command) ([]byte, error) {
	if c.Code < math.MinInt16 || c.Code > math.MaxInt16 {
		return dst, fmt.Errorf("%w: code %d does not fit the binary header's int16", ErrHeaderNotEncodable, c.Code)
	}
	if c.Version < math.MinInt16 || c.Version > math.MaxInt16 {
		return dst, fmt.Errorf("%w: version %d does not fit the binary header's int16", ErrHeaderNotEncodable, c.Version)
	}
	extLen := 0
	var arr [16]string
	keys := arr[:0]
	for k, v := range c.ExtFields {
		if len(k) > math.MaxInt16 {
			return dst, fmt.Errorf("%w: ext key of %d bytes", ErrHeaderNotEncodable, len(k))
		}
		extLen += 2 + len(k) + 4 + len(v)
		keys = append(keys, k)
	}
	if extLen > math.MaxInt32 || len(c.Remark) > math.MaxInt32 {
		return dst, fmt.Errorf("%w: header too large", ErrHeaderNotEncodable)
	}
	slices.Sort(keys)
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(c.Code)))
	dst = append(dst, byte(c.Language))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(c.Version)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Opaque))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Flag))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(c.Remark)))
	dst = append(dst, c.Remark...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(extLen))
	for _, k := range keys {
		v := c.ExtFields[k]
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(k)))
		dst = append(dst, k...)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
		dst = append(dst, v...)
	}
	return dst, nil
}

// decodeBinaryHeader decodes a ROCKETMQ binary header. Every length is checked
// against the bytes present; bytes after the ext section are an error.
func decodeBinaryHeader(data []byte, c *Command) error {
	if len(data) < binaryFixedLen {
		return fmt.Errorf("%w: binary header of %d bytes, need at least %d", ErrMalformedHeader, len(data), binaryFixedLen)
	}
	c.Code = int32(int16(binary.BigEndian.Uint16(data[0:])))
	c.Language = Language(data[2])
	c.Version = int32(int16(binary.BigEndian.Uint16(data[3:])))
	c.Opaque = int32(binary.BigEndian.Uint32(data[5:]))
	c.Flag = int32(binary.BigEndian.Uint32(data[9:]))
	p := 13
	remarkLen := int64(int32(binary.BigEndian.Uint32(data[p:])))
	p += 4
	if remarkLen < 0 || remarkLen > int64(len(data)-p-4) {
		return fmt.Errorf("%w: remark length %d with %d header bytes left", ErrMalformedHeader, remarkLen, len(data)-p)
	}
	// The remark, keys and values never alias data (strArena): one kept
	// past the request pins neither the header nor the frame.
	var arena strArena
	c.Remark = arena.value(data[p : p+int(remarkLen)])
	p += int(remarkLen)
	extLen := int64(int32(binary.BigEndian.Uint32(data[p:])))
	p += 4
	if extLen < 0 || extLen > int64(len(data)-p) {
		return fmt.Errorf("%w: ext length %d with %d header bytes left", ErrMalformedHeader, extLen, len(data)-p)
	}
	ext := data[p : p+int(extLen)]
	if p+int(extLen) != len(data) {
		return fmt.Errorf("%w: %d bytes after the ext fields", ErrMalformedHeader, len(data)-p-int(extLen))
	}
	c.ExtFields, c.headerErr = nil, nil
	if len(ext) > 0 {
		c.ExtFields = c.newExt()
	}
	for q := 0; q < len(ext); {
		if len(ext)-q < 2 {
			return fmt.Errorf("%w: truncated ext key length", ErrMalformedHeader)
		}
		kl := int(int16(binary.BigEndian.Uint16(ext[q:])))
		q += 2
		if kl < 0 || kl > len(ext)-q-4 {
			return fmt.Errorf("%w: ext key length %d", ErrMalformedHeader, kl)
		}
		kb := ext[q : q+kl]
		q += kl
		vl := int64(int32(binary.BigEndian.Uint32(ext[q:])))
		q += 4
		if vl < 0 || vl > int64(len(ext)-q) {
			return fmt.Errorf("%w: ext value length %d", ErrMalformedHeader, vl)
		}
		vb := ext[q : q+int(vl)]
		q += int(vl)
		if _, present := c.ExtFields[string(kb)]; !present && len(c.ExtFields) >= MaxExtFields {
			if c.headerErr == nil {
				c.headerErr = tooManyExtErr() // answered; the rest is still checked as framing
			}
			continue
		}
		c.ExtFields[arena.key(kb)] = arena.value(vb)
	}
	return nil
}

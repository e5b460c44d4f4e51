package record

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A SEND_BATCH_MESSAGE request body is a concatenation of items
// (MessageDecoder.encodeMessage), big-endian:
//
//	[int32 TOTALSIZE][int32 MAGICCODE=0][int32 BODYCRC=0][int32 FLAG]
//	[int32 BODYLENGTH][BODY][int16 PROPERTIESLENGTH][PROPERTIES]
//
// The broker turns each item into a full record carrying the batch's topic,
// queue, sysflag, born and store fields.

// batchItemFixed is an item's size without body and properties.
const batchItemFixed = 4 + 4 + 4 + 4 + 4 + 2

// ErrBatchEmpty is returned by DecodeBatch for a body without items.
var ErrBatchEmpty = errors.New("record: batch has no messages")

// BatchItem is one message of a batch. DecodeBatch's Body aliases its input.
type BatchItem struct {
	Flag       int32
	Body       []byte
	Properties string
}

// Size returns the item's encoded size.
func (it *BatchItem) Size() int { return batchItemFixed + len(it.Body) + len(it.Properties) }

// AppendBatchItem appends it in the wire format above, with MAGICCODE and
// BODYCRC 0 as the Java client writes them.
//
// REQUIRES: len(it.Properties) <= MaxPropertiesLen and it.Size() < 2^31
// (panics otherwise: the length fields could not hold them).
func AppendBatchItem(dst []byte, it BatchItem) []byte {
	if len(it.Properties) > MaxPropertiesLen || it.Size() > 1<<31-1 {
		panic(fmt.Sprintf("record: AppendBatchItem: %d-byte body with %d-byte properties does not fit the format",
			len(it.Body), len(it.Properties)))
	}
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(it.Size()))
	dst = be.AppendUint32(dst, 0)
	dst = be.AppendUint32(dst, 0)
	dst = be.AppendUint32(dst, uint32(it.Flag))
	dst = be.AppendUint32(dst, uint32(len(it.Body)))
	dst = append(dst, it.Body...)
	dst = be.AppendUint16(dst, uint16(len(it.Properties)))
	return append(dst, it.Properties...)
}

// DecodeBatch splits a SEND_BATCH_MESSAGE body into its items. The broker
// ignores MAGICCODE and BODYCRC (it computes the CRC itself), and so does
// DecodeBatch; unlike the broker it also requires each TOTALSIZE to match
// the item's fields. Errors are *DecodeError (ErrShort when the body ends
// inside an item) or ErrBatchEmpty. It never panics.
func DecodeBatch(b []byte) ([]BatchItem, error) {
	if len(b) == 0 {
		return nil, ErrBatchEmpty
	}
	var items []BatchItem
	be := binary.BigEndian
	for off := 0; off < len(b); {
		rest := b[off:]
		if len(rest) < batchItemFixed-2 {
			return nil, shortf("batch item %d at offset %d: %d bytes left, header needs %d", len(items), off, len(rest), batchItemFixed-2)
		}
		total := int64(int32(be.Uint32(rest)))
		flag := int32(be.Uint32(rest[12:]))
		bodyLen := int64(int32(be.Uint32(rest[16:])))
		if bodyLen < 0 {
			return nil, corruptf("batch item %d at offset %d: BODYLENGTH %d", len(items), off, bodyLen)
		}
		propPos := int64(batchItemFixed-2) + bodyLen
		if propPos+2 > int64(len(rest)) {
			return nil, shortf("batch item %d at offset %d: body of %d bytes, %d bytes left", len(items), off, bodyLen, len(rest))
		}
		p := int(propPos)
		propLen := int(int16(be.Uint16(rest[p:])))
		if propLen < 0 {
			return nil, corruptf("batch item %d at offset %d: PROPERTIESLENGTH %d", len(items), off, propLen)
		}
		end := p + 2 + propLen
		if end > len(rest) {
			return nil, shortf("batch item %d at offset %d: properties of %d bytes, %d bytes left", len(items), off, propLen, len(rest)-p-2)
		}
		if total != int64(end) {
			return nil, corruptf("batch item %d at offset %d: TOTALSIZE %d, fields add up to %d", len(items), off, total, end)
		}
		items = append(items, BatchItem{
			Flag:       flag,
			Body:       rest[batchItemFixed-2 : p : p],
			Properties: string(rest[p+2 : end]),
		})
		off += end
	}
	return items, nil
}

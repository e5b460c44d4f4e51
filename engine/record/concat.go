package record

import "fmt"

// DecodeAll decodes records laid end to end, as a PULL_MESSAGE,
// POP_MESSAGE, QUERY_MESSAGE or VIEW_MESSAGE_BY_ID body carries them (each
// its own TOTALSIZE long, no padding). It returns the records decoded before
// the first that fails, and that failure naming the record's index and
// offset in b (wrapping ErrCorrupt or ErrShort). With checkCRC each body's
// CRC is checked (Java's client decoder does not). The records' slices
// alias b.
func DecodeAll(b []byte, checkCRC bool) ([]Record, error) {
	var out []Record
	for off := 0; off < len(b); {
		size, _, err := PeekSize(b[off:])
		if err != nil {
			return out, fmt.Errorf("record %d at offset %d: %w", len(out), off, err)
		}
		if int(size) > len(b)-off {
			return out, fmt.Errorf("record %d at offset %d: %w", len(out), off, shortf("TOTALSIZE %d, %d bytes left", size, len(b)-off))
		}
		r, err := Decode(b[off:off+int(size)], checkCRC)
		if err != nil {
			return out, fmt.Errorf("record %d at offset %d: %w", len(out), off, err)
		}
		out = append(out, r)
		off += int(size)
	}
	return out, nil
}

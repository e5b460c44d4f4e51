package workloads

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// HeaderSize is the length of the generated-body header (see the package doc).
const HeaderSize = 24

// ErrShortBody is returned by DecodeHeader for a body shorter than HeaderSize.
var ErrShortBody = errors.New("workloads: body shorter than the 24-byte header")

// Header is the decoded start of a generated body.
type Header struct {
	Born    int64  // unix nanoseconds
	Seq     uint64 // index within the stream
	Stream  uint32 // generator id
	DelayUs uint32 // send delay in µs, saturated
}

// Intended is the intended send time in unix nanoseconds (Born - delay).
func (h Header) Intended() int64 { return h.Born - int64(h.DelayUs)*1000 }

// DelayMicros saturates a send delay into the header's 32-bit µs field.
func DelayMicros(d time.Duration) uint32 {
	us := d.Microseconds()
	switch {
	case us <= 0:
		return 0
	case us >= math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(us)
}

// EncodeHeader writes h into b[:HeaderSize]; b must be at least that long.
func EncodeHeader(b []byte, h Header) {
	_ = b[HeaderSize-1]
	binary.LittleEndian.PutUint64(b[0:], uint64(h.Born))
	binary.LittleEndian.PutUint64(b[8:], h.Seq)
	binary.LittleEndian.PutUint32(b[16:], h.Stream)
	binary.LittleEndian.PutUint32(b[20:], h.DelayUs)
}

// DecodeHeader reads the header of a generated body.
func DecodeHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w (%d bytes)", ErrShortBody, len(b))
	}
	return Header{
		Born:    int64(binary.LittleEndian.Uint64(b[0:])),
		Seq:     binary.LittleEndian.Uint64(b[8:]),
		Stream:  binary.LittleEndian.Uint32(b[16:]),
		DelayUs: binary.LittleEndian.Uint32(b[20:]),
	}, nil
}

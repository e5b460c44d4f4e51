package remoting

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxFrameBytes caps a frame, length field included (Java's
// NettyDecoder maxFrameLength, 16 MiB).
const DefaultMaxFrameBytes = 16 << 20

// maxHeaderBytes is the largest header the 24-bit header length can announce.
const maxHeaderBytes = 1<<24 - 1

// EncodeHeader appends c's header in the st encoding to dst.
func EncodeHeader(dst []byte, c *Command, st SerializeType) ([]byte, error) {
	switch st {
	case SerializeJSON:
		return appendJSONHeader(dst, c), nil
	case SerializeRocketMQ:
		return appendBinaryHeader(dst, c)
	}
	return dst, fmt.Errorf("%w: %d", ErrUnknownSerializeType, st)
}

// DecodeHeader decodes a header encoded as st. Body is left nil.
func DecodeHeader(header []byte, st SerializeType) (*Command, error) {
	return decodeHeader(header, st, nil, nil)
}

// decodeHeader is DecodeHeader into c (nil: a new Command), which must be
// zeroed, taking the ExtFields map from pool (nil: NewExtFields's).
func decodeHeader(header []byte, st SerializeType, pool *sync.Pool, c *Command) (*Command, error) {
	if c == nil {
		c = new(Command)
	}
	c.SerializeType, c.extPool = st, pool
	var err error
	switch st {
	case SerializeJSON:
		err = decodeJSONHeader(header, c)
	case SerializeRocketMQ:
		err = decodeBinaryHeader(header, c)
	default:
		err = fmt.Errorf("%w: %d", ErrUnknownSerializeType, st)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// appendFrameHead appends the length word, the header-length word and the
// header; the caller writes c.Body right after.
func appendFrameHead(dst []byte, c *Command, st SerializeType) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst, err := EncodeHeader(dst, c, st)
	if err != nil {
		return dst[:start], err
	}
	hl := len(dst) - start - 8
	if hl > maxHeaderBytes {
		return dst[:start], fmt.Errorf("%w: header of %d bytes exceeds 24-bit length", ErrHeaderNotEncodable, hl)
	}
	total := int64(4) + int64(hl) + int64(len(c.Body))
	if total > 1<<31-1 {
		return dst[:start], fmt.Errorf("%w: frame of %d bytes", ErrHeaderNotEncodable, total)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(total))
	binary.BigEndian.PutUint32(dst[start+4:], uint32(st)<<24|uint32(hl))
	return dst, nil
}

// AppendFrame appends the whole frame for c (length field, header-length word,
// header in st encoding, body) to dst.
func AppendFrame(dst []byte, c *Command, st SerializeType) ([]byte, error) {
	dst, err := appendFrameHead(dst, c, st)
	if err != nil {
		return dst, err
	}
	return append(dst, c.Body...), nil
}

// checkFrameLength validates the length field (which excludes itself).
func checkFrameLength(length int32, maxFrameBytes int) error {
	if length < 4 {
		return fmt.Errorf("%w: %d (a frame holds at least the 4-byte header length)", ErrBadFrameLength, length)
	}
	if maxFrameBytes > 0 && int64(length)+4 > int64(maxFrameBytes) {
		return fmt.Errorf("%w: %d bytes > limit %d", ErrFrameTooLarge, int64(length)+4, maxFrameBytes)
	}
	return nil
}

// decodeFrameContent decodes the bytes after the length field: the
// header-length word, the header and the body (aliased, not copied), into
// c (nil: a new Command). The ExtFields map comes from pool (nil:
// NewExtFields's).
func decodeFrameContent(content []byte, pool *sync.Pool, c *Command) (*Command, error) {
	hv := binary.BigEndian.Uint32(content)
	st := SerializeType(hv >> 24)
	hl := int(hv & maxHeaderBytes)
	if hl > len(content)-4 {
		return nil, fmt.Errorf("%w: header length %d, frame holds %d", ErrBadHeaderLength, hl, len(content)-4)
	}
	if st != SerializeJSON && st != SerializeRocketMQ {
		return nil, fmt.Errorf("%w: %d", ErrUnknownSerializeType, st)
	}
	c, err := decodeHeader(content[4:4+hl], st, pool, c)
	if err != nil {
		return nil, err
	}
	if body := content[4+hl:]; len(body) > 0 {
		c.Body = body
	}
	return c, nil
}

// DecodeFrame decodes the frame at the start of buf (length field included)
// and returns it with the number of bytes it occupied. The body aliases buf.
// An incomplete frame is ErrTruncatedFrame. maxFrameBytes ≤ 0 means no limit.
func DecodeFrame(buf []byte, maxFrameBytes int) (*Command, int, error) {
	if len(buf) < 4 {
		return nil, 0, fmt.Errorf("%w: %d bytes, need the 4-byte length", ErrTruncatedFrame, len(buf))
	}
	length := int32(binary.BigEndian.Uint32(buf))
	if err := checkFrameLength(length, maxFrameBytes); err != nil {
		return nil, 0, err
	}
	n := 4 + int(length)
	if len(buf) < n {
		return nil, 0, fmt.Errorf("%w: %d of %d bytes", ErrTruncatedFrame, len(buf), n)
	}
	c, err := decodeFrameContent(buf[4:n], nil, nil)
	if err != nil {
		return nil, 0, err
	}
	return c, n, nil
}

// ReadFrame reads and decodes one frame from r. The length is checked before
// the frame buffer is allocated. io.EOF means r ended cleanly between frames.
func ReadFrame(r io.Reader, maxFrameBytes int) (*Command, error) {
	fr := frameReader{r: r, maxFrameBytes: maxFrameBytes}
	return fr.read(false)
}

// frameReader reads frames from one reader: a connection's read goroutine
// owns one, so the length word is read into its scratch array instead of
// a buffer allocated per frame.
type frameReader struct {
	r             io.Reader
	maxFrameBytes int
	extPool       *sync.Pool // where decoded ExtFields maps come from (nil: NewExtFields's)
	// recycle: frames and Commands come from the request pools and the
	// commands are marked for Release (server connections; recycle.go).
	recycle bool
	lb      [4]byte
}

// read reads and decodes the next frame; timed stamps the command's
// FrameStart, FrameRead and Decoded Timings.
func (fr *frameReader) read(timed bool) (*Command, error) {
	if _, err := io.ReadFull(fr.r, fr.lb[:]); err != nil {
		return nil, err
	}
	var start, read int64
	if timed {
		start = Nanotime()
	}
	length := int32(binary.BigEndian.Uint32(fr.lb[:]))
	if err := checkFrameLength(length, fr.maxFrameBytes); err != nil {
		return nil, err
	}
	var frame *[]byte // pooled
	var content []byte
	var err error
	if fr.recycle && int(length) <= maxPooledFrame {
		if frame, err = readPooled(fr.r, int(length)); err != nil {
			return nil, err
		}
		content = *frame
	} else if content, err = readGrowing(fr.r, int(length)); err != nil {
		return nil, err
	}
	if timed {
		read = Nanotime()
	}
	var dst *Command
	if fr.recycle {
		dst = newCommand()
	}
	c, err := decodeFrameContent(content, fr.extPool, dst)
	if err != nil {
		if frame != nil {
			putFrame(frame) // nothing decoded refers to it: the error's text is a copy
		}
		return nil, err
	}
	c.recycle, c.frame = fr.recycle, frame
	if timed {
		c.Timings = Timings{FrameStart: start, FrameRead: read, Decoded: Nanotime()}
	}
	return c, nil
}

// frameReadChunk is how much of a frame's announced length is allocated
// before its bytes arrive: a peer that announces 16 MiB and stalls pins
// this much, not the announced length.
const frameReadChunk = 64 << 10

// readGrowing reads exactly n bytes, growing the buffer as data arrives.
func readGrowing(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, min(n, frameReadChunk))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, min(n-len(buf), max(cap(buf), frameReadChunk)))...)[:len(buf)]
		}
		m, err := io.ReadFull(r, buf[len(buf):min(n, cap(buf))])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return buf, nil
}

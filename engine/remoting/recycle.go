package remoting

import (
	"io"
	"math/bits"
	"sync"
)

// Request recycling. A server connection reads each request frame of up
// to maxPooledFrame bytes into a buffer from the frame pools and decodes
// it into a Command from cmdPool, its ExtFields map from requestExtPool.
// None of them is reused unless the processor that answered the request
// calls Release — the broker does for single sends, once the reply is
// written and the store has copied the body. Every other request's
// Command, frame and map are left to the GC, so a processor that keeps a
// request, its Body or its map past its answer is never affected. The
// header's strings (ExtFields keys and values, Remark) never point into
// the frame: they are interned or copied into chunks of their header's
// strArena (intern.go), which are not recycled.

// maxPooledFrame is the largest frame content (after the length word)
// read into a pooled buffer; larger frames are read as before.
const maxPooledFrame = frameReadChunk

// minFrameClass is the smallest pooled buffer (512 bytes); class i holds
// buffers of minFrameClass<<i bytes.
const minFrameClass = 512

var (
	framePools [frameClasses]sync.Pool // *[]byte of cap minFrameClass<<i
	cmdPool    sync.Pool               // *Command, zeroed
)

const frameClasses = 8 // 512 B … 64 KiB

// frameClass is the index of the smallest class holding n bytes.
// REQUIRES: 0 < n ≤ maxPooledFrame.
func frameClass(n int) int {
	if n <= minFrameClass {
		return 0
	}
	return bits.Len(uint(n-1)) - 9 // 2^(9+i) ≥ n
}

// getFrame returns a buffer of length n from the frame pools.
func getFrame(n int) *[]byte {
	i := frameClass(n)
	if p, ok := framePools[i].Get().(*[]byte); ok {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n, minFrameClass<<i)
	return &b
}

// putFrame returns a buffer getFrame made to its pool.
func putFrame(p *[]byte) {
	i := frameClass(cap(*p))
	if cap(*p) != minFrameClass<<i {
		panic("remoting: a frame buffer of a size no frame class has")
	}
	framePools[i].Put(p)
}

// readPooled reads a frame content of n bytes into a pooled buffer.
// REQUIRES: n ≤ maxPooledFrame.
func readPooled(r io.Reader, n int) (*[]byte, error) {
	p := getFrame(n)
	if _, err := io.ReadFull(r, *p); err != nil {
		putFrame(p)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return p, nil
}

// newCommand returns a zeroed Command from cmdPool.
func newCommand() *Command {
	if c, ok := cmdPool.Get().(*Command); ok {
		return c
	}
	return new(Command)
}

// Release returns a request a server connection decoded — its Command,
// the frame buffer Body points into, and its ExtFields map — to the pools
// the connection reads later requests into. Call it at most once, after
// the request is answered (Reply returned, or the processor returned its
// response to the connection), from the goroutine that owns the request,
// and only when nothing refers to the Command, its Body or its ExtFields
// map any more (a store has copied the body). The strings decoded from
// the header stay valid. For any other Command it only releases the
// ExtFields map (ReleaseExtFields).
func (c *Command) Release() {
	c.ReleaseExtFields()
	if !c.recycle {
		return
	}
	if c.frame != nil {
		putFrame(c.frame)
	}
	*c = Command{}
	cmdPool.Put(c)
}

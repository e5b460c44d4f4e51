package remoting

import (
	"net"
	"sync"
	"time"
)

// inlineBodyBytes: bodies up to this size are copied behind the header and
// written with one write; larger ones go out with writev, uncopied.
const inlineBodyBytes = 4 << 10

var frameBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// write encodes cmd and writes the whole frame under the write mutex, so
// frames from concurrent writers never interleave. A failed write closes the
// connection; an encoding error does not.
func (c *Conn) write(cmd *Command) error {
	bp := frameBufPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 64<<10 {
			frameBufPool.Put(bp)
		}
	}()
	buf, err := appendFrameHead((*bp)[:0], cmd, c.opts.serializeType)
	if err != nil {
		return err
	}
	body := cmd.Body
	inline := len(body) <= inlineBodyBytes
	if inline {
		buf = append(buf, body...)
	}
	*bp = buf[:0]

	c.wmu.Lock()
	if c.isClosed() {
		c.wmu.Unlock()
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.closedErrLocked()
	}
	if c.opts.writeTimeout > 0 {
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.opts.writeTimeout))
	}
	if inline {
		_, err = c.nc.Write(buf)
	} else {
		bufs := net.Buffers{buf, body}
		_, err = bufs.WriteTo(c.nc)
	}
	c.wmu.Unlock()
	if err != nil {
		c.log.Debug("remoting: write failed, closing connection", "err", err)
		c.closeWith(err)
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.closedErrLocked()
	}
	return nil
}

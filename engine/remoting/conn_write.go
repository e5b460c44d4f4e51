package remoting

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"time"
)

// inlineBodyBytes: bodies up to this size are copied behind the header;
// larger ones go out as their own buffer, uncopied.
const inlineBodyBytes = 4 << 10

// maxPendingWriteBytes bounds the frames queued for one connection's
// writer. A peer that stops reading its socket while the queue grows past it
// is a slow consumer and is disconnected, so it can neither pin unbounded
// memory nor hold up the goroutines that answer other connections.
const maxPendingWriteBytes = 64 << 20

// requestHighWater is back pressure for this side's own requests: a caller
// that writes a request (Invoke, InvokeAsync, SendContext) waits while this
// many bytes are already queued for the connection's writer, until room is
// made or its context ends, instead of the queue growing to
// maxPendingWriteBytes and the connection being closed with every queued
// frame in it. Oneway senders need it most: no reply slows them down, and
// without it a producer faster than the peer's reader loses whole queues of
// sends that it was told were written. (Java's client bounds its oneway and
// async requests with semaphores for the same reason.)
const requestHighWater = 4 << 20

// ErrSlowPeer closes a connection whose peer does not read its replies.
var ErrSlowPeer = errors.New("remoting: peer does not read its socket (write queue full)")

var frameBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// outFrame is one encoded frame waiting for the writer.
type outFrame struct {
	head *[]byte     // pooled: header (and an inline body)
	body []byte      // a large body, written uncopied; nil when inline
	obs  Observation // a reply's request, for the observers; Timings zero = not observed
}

func (f outFrame) size() int64 { return int64(len(*f.head) + len(f.body)) }

// writeQueue is a connection's pending frames. Frames are written in the
// order they were queued, by one writer goroutine, batched into one writev.
type writeQueue struct {
	mu      sync.Mutex
	q       []outFrame
	bytes   int64
	writing bool
	kick    chan struct{} // capacity 1
	room    chan struct{} // closed by the writer when it drains bytes; nil until a request waits
}

// waitRoom blocks until fewer than requestHighWater bytes are queued, ctx
// ends or the connection closes.
func (c *Conn) waitRoom(ctx context.Context) error {
	w := &c.wq
	for {
		w.mu.Lock()
		if w.bytes < requestHighWater {
			w.mu.Unlock()
			return nil
		}
		if w.room == nil {
			w.room = make(chan struct{})
		}
		room := w.room
		w.mu.Unlock()
		select {
		case <-room:
		case <-c.done:
			return c.closedErr()
		case <-ctx.Done():
			return ctxErr(ctx)
		}
	}
}

// writeRequest is write for a request of this side's own: it first waits
// for room (requestHighWater).
func (c *Conn) writeRequest(ctx context.Context, cmd *Command) error {
	if err := c.waitRoom(ctx); err != nil {
		return err
	}
	return c.write(cmd)
}

// write encodes cmd and queues the whole frame for the connection's writer,
// so frames never interleave and the caller — a processor's worker, a
// long-poll wake-up — never blocks on a peer that does not read. An error
// means the frame was not queued (the connection is closed, or this peer is
// a slow consumer and is now disconnected); a failed socket write later
// closes the connection, failing its pending calls.
func (c *Conn) write(cmd *Command) error { return c.writeObserved(cmd, nil) }

// writeObserved is write for the reply to req (nil: not a reply): with
// Timings on, it stamps req's Replied and the writer tells the observers
// once the frame is written.
func (c *Conn) writeObserved(cmd, req *Command) error {
	bp := frameBufPool.Get().(*[]byte)
	buf, err := appendFrameHead((*bp)[:0], cmd, c.opts.serializeType)
	if err != nil {
		frameBufPool.Put(bp)
		return err
	}
	f := outFrame{head: bp}
	if req != nil && req.Timings.FrameStart != 0 {
		req.Timings.Replied = Nanotime()
		f.obs = Observation{Code: req.Code, Opaque: req.Opaque, RespCode: cmd.Code, Timings: req.Timings}
	}
	if len(cmd.Body) <= inlineBodyBytes {
		buf = append(buf, cmd.Body...)
	} else {
		f.body = cmd.Body
	}
	*bp = buf

	w := &c.wq
	w.mu.Lock()
	if c.isClosed() {
		w.mu.Unlock()
		frameBufPool.Put(bp)
		return c.closedErr()
	}
	if w.bytes+f.size() > maxPendingWriteBytes && w.bytes > 0 {
		w.mu.Unlock()
		frameBufPool.Put(bp)
		c.log.Warn("remoting: closing a slow consumer", "queued_bytes", w.bytes)
		c.closeWith(ErrSlowPeer)
		return c.closedErr()
	}
	w.q = append(w.q, f)
	w.bytes += f.size()
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
	return nil
}

// writeLoop is the connection's only socket writer.
func (c *Conn) writeLoop() {
	w := &c.wq
	var batch []outFrame
	// bufs is what WriteTo consumes (it advances the slice to its end);
	// iov keeps the backing array, so each batch reuses it.
	var iov, bufs net.Buffers
	for {
		select {
		case <-w.kick:
		case <-c.done:
			c.dropQueued()
			return
		}
		yielded := false
		for {
			w.mu.Lock()
			if len(w.q) == 1 && !yielded {
				// One frame queued: let the goroutines that are about to
				// queue theirs run first, so one writev carries them too.
				w.mu.Unlock()
				yielded = true
				runtime.Gosched()
				continue
			}
			batch, w.q = w.q, batch[:0]
			w.writing = len(batch) > 0
			w.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			iov = iov[:0]
			var n int64
			for _, f := range batch {
				iov = append(iov, *f.head)
				if f.body != nil {
					iov = append(iov, f.body)
				}
				n += f.size()
			}
			bufs = iov
			if c.opts.writeTimeout > 0 {
				_ = c.nc.SetWriteDeadline(time.Now().Add(c.opts.writeTimeout))
			}
			_, err := bufs.WriteTo(c.nc)
			clear(iov) // drop the written frames' buffers (pooled again below)
			if err == nil && c.timed() {
				c.observeWritten(batch)
			}
			for i := range batch {
				if cap(*batch[i].head) <= 64<<10 {
					frameBufPool.Put(batch[i].head)
				}
				batch[i] = outFrame{}
			}
			w.mu.Lock()
			w.bytes -= n
			w.writing = false
			if w.room != nil {
				close(w.room) // wake the requests waiting for room
				w.room = nil
			}
			w.mu.Unlock()
			if err != nil {
				c.log.Debug("remoting: write failed, closing connection", "err", err)
				c.closeWith(err)
				c.dropQueued()
				return
			}
		}
	}
}

func (c *Conn) dropQueued() {
	w := &c.wq
	w.mu.Lock()
	for _, f := range w.q {
		frameBufPool.Put(f.head)
	}
	w.q, w.bytes = nil, 0
	w.mu.Unlock()
}

// drain waits until every queued frame has been written, or ctx ends: a
// graceful shutdown answers what it admitted before it closes the socket.
func (c *Conn) drain(ctx context.Context) {
	w := &c.wq
	for {
		w.mu.Lock()
		idle := len(w.q) == 0 && !w.writing
		w.mu.Unlock()
		if idle || c.isClosed() {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-c.done:
			return
		case <-time.After(time.Millisecond):
		}
	}
}

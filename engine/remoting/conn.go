package remoting

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// connOptions are the per-connection limits shared by server and client conns.
type connOptions struct {
	maxFrameBytes int
	maxInFlight   int // requests dispatched and not yet answered; ≤ 0 = unlimited
	idleTimeout   time.Duration
	writeTimeout  time.Duration
	serializeType SerializeType
	logger        *slog.Logger
	badInput      *badInputLog   // counts and rate-limits logs of bad input
	observers     []Observer     // told about each answered request; non-empty = take Timings
	onewayDropped *atomic.Uint64 // oneway requests the server refused before a processor saw them (nil: not counted)
	extPool       *sync.Pool     // decoded ExtFields maps come from it (nil: NewExtFields's); server conns: requestExtPool
	recycle       bool           // requests are read into pooled frames and Commands (server conns; Command.Release)

	afterReplyWrite func() // test hook: runs in Reply after the answer is queued, before Shutdown's accounting ends
}

// Conn is one TCP connection speaking the remoting protocol, on either side.
// It reads frames on one goroutine, matches responses to pending calls by
// opaque, hands requests to its owner's dispatcher, and queues whole frames
// for one writer goroutine. All methods are safe for concurrent use.
type Conn struct {
	nc       net.Conn
	opts     connOptions
	log      *slog.Logger
	dispatch func(c *Conn, req *Command) // called on the read goroutine; must not block
	ctx      context.Context
	cancel   context.CancelFunc

	wq writeQueue // frames for writeLoop, the only socket writer

	mu struct {
		sync.Mutex
		closed   bool
		closeErr error
		pending  map[int32]*call             // outstanding Invoke/InvokeAsync by opaque
		inflight map[*inflightToken]struct{} // dispatched requests not yet answered
		hooks    []func(*Conn)
	}
	attrs sync.Map
	done  chan struct{}
}

// call is one outstanding request waiting for its response.
type call struct {
	resp *Command
	err  error
	done chan struct{}         // sync calls
	cb   func(*Command, error) // async calls
	stop func() bool           // stops the async call's context watcher
}

func (cl *call) finish(resp *Command, err error) {
	cl.resp, cl.err = resp, err
	if cl.cb == nil {
		close(cl.done)
		return
	}
	if cl.stop != nil {
		cl.stop()
	}
	go cl.cb(resp, err) // never on the read goroutine: the callback may Invoke again
}

// inflightToken marks a dispatched request until it is answered.
type inflightToken struct {
	conn      *Conn
	onRelease func()
	replied   atomic.Bool // Reply claimed this request
}

func newConn(parent context.Context, nc net.Conn, opts connOptions, dispatch func(*Conn, *Command)) *Conn {
	c := &Conn{nc: nc, opts: opts, dispatch: dispatch, done: make(chan struct{})}
	c.log = opts.logger.With("remote", nc.RemoteAddr().String(), "local", nc.LocalAddr().String())
	c.ctx, c.cancel = context.WithCancel(parent)
	c.mu.pending = make(map[int32]*call)
	c.mu.inflight = make(map[*inflightToken]struct{})
	c.wq.kick = make(chan struct{}, 1)
	go c.writeLoop()
	return c
}

// RemoteAddr is the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// LocalAddr is this side's address.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// Context is cancelled when the connection closes or its server shuts down.
// Processors receive it; long-poll handlers should watch it.
func (c *Conn) Context() context.Context { return c.ctx }

// Done is closed once the connection is closed and its close hooks have run.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection closed, or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.closeErr
}

// SetAttr stores a per-connection attribute (e.g. the client id a heartbeat announced).
func (c *Conn) SetAttr(key, val any) { c.attrs.Store(key, val) }

// Attr returns a per-connection attribute.
func (c *Conn) Attr(key any) (any, bool) { return c.attrs.Load(key) }

// DeleteAttr removes a per-connection attribute.
func (c *Conn) DeleteAttr(key any) { c.attrs.Delete(key) }

// OnClose registers fn to run once when the connection closes, after pending
// calls have failed. If it is already closed, fn runs now.
func (c *Conn) OnClose(fn func(*Conn)) {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		fn(c)
		return
	}
	c.mu.hooks = append(c.mu.hooks, fn)
	c.mu.Unlock()
}

// Close closes the connection: pending calls fail with ErrConnClosed and the
// close hooks run.
func (c *Conn) Close() error {
	c.closeWith(ErrConnClosed)
	return nil
}

func (c *Conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.closed
}

func (c *Conn) closeWith(cause error) {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return
	}
	c.mu.closed = true
	c.mu.closeErr = cause
	pending := c.mu.pending
	c.mu.pending = nil
	// The tokens live in their requests, which may be recycled (Release)
	// once answered: read what is needed of them under the lock.
	var released []func()
	for t := range c.mu.inflight {
		if t.onRelease != nil {
			released = append(released, t.onRelease)
		}
	}
	c.mu.inflight = nil
	hooks := c.mu.hooks
	c.mu.hooks = nil
	c.mu.Unlock()

	c.cancel()
	_ = c.nc.Close()
	err := fmt.Errorf("%w: %w", ErrConnClosed, cause)
	if cause == ErrConnClosed {
		err = ErrConnClosed
	}
	for _, cl := range pending {
		cl.finish(nil, err)
	}
	for _, f := range released {
		f()
	}
	for _, h := range hooks {
		h(c)
	}
	close(c.done)
}

// readLoop reads frames until the connection fails or is closed.
func (c *Conn) readLoop() {
	fr := &frameReader{r: bufio.NewReaderSize(c.nc, 64<<10), maxFrameBytes: c.opts.maxFrameBytes,
		extPool: c.opts.extPool, recycle: c.opts.recycle}
	for {
		if c.opts.idleTimeout > 0 {
			_ = c.nc.SetReadDeadline(time.Now().Add(c.opts.idleTimeout))
		}
		cmd, err := fr.read(c.timed())
		if err != nil {
			c.readFailed(err)
			return
		}
		if cmd.headerErr != nil {
			if cmd.IsResponse() {
				c.completeErr(cmd.Opaque, cmd.headerErr)
			} else {
				c.answerBadHeader(cmd) // well framed: answered, the connection stays
			}
			continue
		}
		if cmd.IsResponse() {
			c.complete(cmd)
			continue
		}
		c.dispatch(c, cmd)
	}
}

func (c *Conn) readFailed(err error) {
	switch {
	case c.isClosed(), errors.Is(err, net.ErrClosed):
	case errors.Is(err, io.EOF):
		c.log.Debug("remoting: peer closed connection")
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.log.Info("remoting: closing idle connection", "idle", c.opts.idleTimeout)
	case isProtocolError(err), errors.Is(err, io.ErrUnexpectedEOF):
		if c.opts.badInput != nil {
			c.opts.badInput.noteClose(c, err) // counted; logged once per interval per host
		}
	default:
		c.log.Info("remoting: connection read failed", "err", err)
	}
	c.closeWith(err)
}

func isProtocolError(err error) bool {
	for _, e := range []error{ErrFrameTooLarge, ErrBadFrameLength, ErrBadHeaderLength,
		ErrUnknownSerializeType, ErrMalformedHeader} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// complete hands a response to the call waiting for its opaque.
func (c *Conn) complete(resp *Command) {
	c.mu.Lock()
	cl := c.mu.pending[resp.Opaque]
	delete(c.mu.pending, resp.Opaque)
	c.mu.Unlock()
	if cl == nil {
		c.log.Debug("remoting: dropping response nobody waits for", "opaque", resp.Opaque, "code", resp.Code)
		return
	}
	cl.finish(resp, nil)
}

// completeErr fails the call waiting for opaque with err (a response whose
// header could not be read as one).
func (c *Conn) completeErr(opaque int32, err error) {
	c.mu.Lock()
	cl := c.mu.pending[opaque]
	delete(c.mu.pending, opaque)
	c.mu.Unlock()
	if cl == nil {
		c.log.Debug("remoting: dropping bad response nobody waits for", "opaque", opaque, "err", err)
		return
	}
	cl.finish(nil, err)
}

// register records a pending call; start runs under the lock once it is recorded.
func (c *Conn) register(opaque int32, cl *call, start func()) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return c.closedErrLocked()
	}
	c.mu.pending[opaque] = cl
	if start != nil {
		start()
	}
	return nil
}

// unregister removes cl if it is still pending and reports whether it did.
func (c *Conn) unregister(opaque int32, cl *call) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.pending[opaque] != cl {
		return false
	}
	delete(c.mu.pending, opaque)
	return true
}

// closedErr is closedErrLocked for a caller without c.mu.
func (c *Conn) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closedErrLocked()
}

func (c *Conn) closedErrLocked() error {
	if c.mu.closeErr == nil || c.mu.closeErr == ErrConnClosed {
		return ErrConnClosed
	}
	return fmt.Errorf("%w: %w", ErrConnClosed, c.mu.closeErr)
}

func ctxErr(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}

// prepareRequest gives req a fresh opaque and clears the response bit.
func prepareRequest(req *Command) {
	req.Opaque = nextOpaque()
	req.Flag &^= FlagResponse | FlagOneway
}

// Invoke sends req and waits for its response until ctx is done (ErrTimeout on
// a deadline). It assigns req a fresh opaque. The response's code is not
// checked.
func (c *Conn) Invoke(ctx context.Context, req *Command) (*Command, error) {
	prepareRequest(req)
	cl := &call{done: make(chan struct{})}
	if err := c.register(req.Opaque, cl, nil); err != nil {
		return nil, err
	}
	if err := c.writeRequest(ctx, req); err != nil {
		if c.unregister(req.Opaque, cl) {
			return nil, err
		}
	}
	select {
	case <-cl.done:
		return cl.resp, cl.err
	case <-ctx.Done():
		if c.unregister(req.Opaque, cl) {
			return nil, ctxErr(ctx)
		}
		<-cl.done // the response or the close won the race
		return cl.resp, cl.err
	}
}

// InvokeAsync sends req and calls cb exactly once, on its own goroutine, with
// the response or the error (ErrTimeout when ctx's deadline passes first,
// ErrConnClosed). If InvokeAsync itself returns an error, cb is never called.
func (c *Conn) InvokeAsync(ctx context.Context, req *Command, cb func(*Command, error)) error {
	prepareRequest(req)
	cl := &call{cb: cb}
	opaque := req.Opaque
	err := c.register(opaque, cl, func() {
		cl.stop = context.AfterFunc(ctx, func() {
			if c.unregister(opaque, cl) {
				cb(nil, ctxErr(ctx))
			}
		})
	})
	if err != nil {
		return err
	}
	if err := c.writeRequest(ctx, req); err != nil && c.unregister(opaque, cl) {
		cl.stop()
		return err
	}
	return nil
}

// Send writes req as a oneway request (flag FlagOneway, fresh opaque); no
// response is expected. It never waits: a server's pushes
// (NOTIFY_CONSUMER_IDS_CHANGED) are sent this way, and a client that does
// not read them is a slow peer.
func (c *Conn) Send(req *Command) error {
	prepareRequest(req)
	req.Flag |= FlagOneway
	return c.write(req)
}

// SendContext is Send for a caller that writes requests of its own (a
// oneway producer): while requestHighWater bytes are queued it waits for
// the writer to make room, or for ctx to end.
func (c *Conn) SendContext(ctx context.Context, req *Command) error {
	prepareRequest(req)
	req.Flag |= FlagOneway
	return c.writeRequest(ctx, req)
}

// Reply answers req with resp: it copies req's opaque into resp, sets the
// response flag and writes it. A oneway req is not answered. Use it from a
// processor that returned ErrReplyLater; a request can be replied to once
// (ErrAlreadyReplied after that).
func (c *Conn) Reply(req, resp *Command) error {
	if t := req.token; t != nil && !t.replied.CompareAndSwap(false, true) {
		return ErrAlreadyReplied
	}
	// Free the request's slot before the answer can reach the peer: a peer
	// holding its answer may send the next request at once, and that one
	// must find the slot free (MaxInFlightPerConn counts requests not yet
	// answered). Shutdown's accounting (onRelease) ends only after the
	// write, so Shutdown cannot close the connection between the two.
	done := c.freeSlot(req)
	var err error
	if !req.IsOneway() {
		resp.Opaque = req.Opaque
		resp.Flag |= FlagResponse
		err = c.writeObserved(resp, req)
	}
	if c.opts.afterReplyWrite != nil {
		c.opts.afterReplyWrite()
	}
	if done != nil {
		done()
	}
	return err
}

// acquire counts req as in flight; false if the connection is at its limit or closed.
func (c *Conn) acquire(req *Command, onRelease func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed || (c.opts.maxInFlight > 0 && len(c.mu.inflight) >= c.opts.maxInFlight) {
		return false
	}
	t := &req.tok
	t.conn, t.onRelease = c, onRelease
	c.mu.inflight[t] = struct{}{}
	req.token = t
	return true
}

// freeSlot ends req's in-flight accounting on this connection and returns
// what is left to run once its answer is written: the owner's onRelease, or
// nil if there is none, req was freed before, or the connection is closed
// (closeWith ran every onRelease still counted). Requests this Conn did not
// dispatch have nothing to free.
func (c *Conn) freeSlot(req *Command) func() {
	t := req.token
	if t == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil
	}
	if _, ok := c.mu.inflight[t]; !ok {
		return nil
	}
	delete(c.mu.inflight, t)
	return t.onRelease
}

// release ends req's in-flight accounting for a request that gets no
// written answer here.
func (c *Conn) release(req *Command) {
	if done := c.freeSlot(req); done != nil {
		done()
	}
}

// reject answers req with code and remark right away (unless it is oneway).
func (c *Conn) reject(req *Command, code int32, remark string) {
	if req.IsOneway() {
		if c.opts.onewayDropped != nil {
			c.opts.onewayDropped.Add(1)
		}
		return
	}
	resp := NewResponse(code, remark)
	resp.Opaque = req.Opaque
	if err := c.writeObserved(resp, req); err != nil {
		c.log.Debug("remoting: writing rejection failed", "err", err)
	}
}

// runProcessor runs p on req and writes its answer.
func (c *Conn) runProcessor(p Processor, req *Command) {
	if req.Timings.FrameStart != 0 {
		req.Timings.Dequeued = Nanotime()
	}
	resp, err := c.callProcessor(p, req)
	switch {
	case errors.Is(err, ErrReplyLater):
		return
	case IsBadRequest(err):
		resp = c.BadRequest(req, err)
	case err != nil:
		c.log.Debug("remoting: processor failed", "code", req.Code, "err", err)
		resp = NewResponse(protocol.RespSystemError, err.Error())
	case resp == nil:
		c.release(req)
		return
	}
	if err := c.Reply(req, resp); err != nil && !errors.Is(err, ErrConnClosed) {
		c.log.Warn("remoting: writing response failed", "code", req.Code, "err", err)
	}
}

func (c *Conn) callProcessor(p Processor, req *Command) (resp *Command, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("remoting: processor panicked", "code", req.Code, "panic", r)
			resp, err = nil, fmt.Errorf("remoting: processor for code %d panicked: %v", req.Code, r)
		}
	}()
	return p.ProcessRequest(c.ctx, c, req)
}

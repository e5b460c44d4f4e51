package remoting

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// ClientConfig configures a Client.
type ClientConfig struct {
	DialTimeout        time.Duration
	MaxFrameBytes      int           // frame cap for responses and pushed requests
	MaxInFlightPerConn int           // pushed requests handled at once per connection
	IdleTimeout        time.Duration // 0 = never close an idle connection
	WriteTimeout       time.Duration
	SerializeType      SerializeType
	Logger             *slog.Logger // nil = slog.Default()
	// TLS, if set, runs a TLS handshake on every connection (within
	// DialTimeout); TLSClientConfig.Load builds one. nil = plaintext.
	TLS *tls.Config
	// RequestProcessor handles requests the server pushes (e.g.
	// NOTIFY_CONSUMER_IDS_CHANGED), each on its own goroutine. nil answers
	// REQUEST_CODE_NOT_SUPPORTED (nothing for oneway pushes).
	RequestProcessor Processor
}

// DefaultClientConfig: 3 s dial timeout, 16 MiB frames, JSON headers, no idle timeout.
func DefaultClientConfig() ClientConfig {
	return ClientConfig{
		DialTimeout:        3 * time.Second,
		MaxFrameBytes:      DefaultMaxFrameBytes,
		MaxInFlightPerConn: 10000,
		WriteTimeout:       10 * time.Second,
		SerializeType:      SerializeJSON,
	}
}

// Client keeps one connection per address and multiplexes calls on it.
// Safe for concurrent use.
type Client struct {
	cfg  ClientConfig
	opts connOptions
	proc Processor

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu struct {
		sync.Mutex
		conns  map[string]*dialEntry
		closed bool
	}
}

// dialEntry is one address's connection, or the dial in progress for it.
type dialEntry struct {
	ready chan struct{} // closed when conn or err is set
	conn  *Conn
	err   error
}

// NewClient returns a client; connections are dialed on first use.
func NewClient(cfg ClientConfig) *Client {
	cl := &Client{cfg: cfg, proc: cfg.RequestProcessor}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cl.proc == nil {
		cl.proc = ProcessorFunc(notSupported)
	}
	cl.opts = connOptions{
		maxFrameBytes: cfg.MaxFrameBytes,
		maxInFlight:   cfg.MaxInFlightPerConn,
		idleTimeout:   cfg.IdleTimeout,
		writeTimeout:  cfg.WriteTimeout,
		serializeType: cfg.SerializeType,
		logger:        log,
		badInput:      newBadInputLog(log, 0),
	}
	cl.ctx, cl.cancel = context.WithCancel(context.Background())
	cl.mu.conns = make(map[string]*dialEntry)
	return cl
}

// Dial returns the open connection to addr, dialing it if there is none.
// Concurrent callers for one address share one dial.
func (cl *Client) Dial(ctx context.Context, addr string) (*Conn, error) {
	for {
		cl.mu.Lock()
		if cl.mu.closed {
			cl.mu.Unlock()
			return nil, ErrClientClosed
		}
		e, ok := cl.mu.conns[addr]
		if !ok {
			e = &dialEntry{ready: make(chan struct{})}
			cl.mu.conns[addr] = e
			cl.mu.Unlock()
			return cl.dial(ctx, addr, e)
		}
		cl.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			return nil, ctxErr(ctx)
		}
		if e.err != nil {
			return nil, e.err
		}
		if !e.conn.isClosed() {
			return e.conn, nil
		}
		cl.forget(addr, e) // closed: its hook may not have run yet; redial
	}
}

func (cl *Client) forget(addr string, e *dialEntry) {
	cl.mu.Lock()
	if cl.mu.conns[addr] == e {
		delete(cl.mu.conns, addr)
	}
	cl.mu.Unlock()
}

func (cl *Client) dial(ctx context.Context, addr string, e *dialEntry) (*Conn, error) {
	d := net.Dialer{Timeout: cl.cfg.DialTimeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		e.err = fmt.Errorf("remoting: dial %s: %w", addr, err)
		cl.forget(addr, e)
		close(e.ready)
		return nil, e.err
	}
	if cl.cfg.TLS != nil {
		nc, err = clientHandshake(ctx, nc, addr, cl.cfg.TLS, cl.cfg.DialTimeout)
		if err != nil {
			e.err = err
			cl.forget(addr, e)
			close(e.ready)
			return nil, e.err
		}
	}
	c := newConn(cl.ctx, nc, cl.opts, cl.dispatch)
	c.OnClose(func(*Conn) { cl.forget(addr, e) })
	e.conn = c
	close(e.ready)
	cl.mu.Lock()
	closed := cl.mu.closed
	if !closed {
		cl.wg.Add(1)
	}
	cl.mu.Unlock()
	if closed {
		c.closeWith(ErrClientClosed)
		return nil, ErrClientClosed
	}
	go func() {
		defer cl.wg.Done()
		c.readLoop()
	}()
	return c, nil
}

// dispatch handles a server-pushed request on its own goroutine.
func (cl *Client) dispatch(c *Conn, req *Command) {
	if !c.acquire(req, nil) {
		c.reject(req, protocol.RespSystemBusy, RemarkTooManyRequests)
		return
	}
	go c.runProcessor(cl.proc, req)
}

// InvokeSync sends req to addr and waits for the response until ctx is done.
func (cl *Client) InvokeSync(ctx context.Context, addr string, req *Command) (*Command, error) {
	c, err := cl.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	return c.Invoke(ctx, req)
}

// InvokeAsync sends req to addr; cb gets the response or error exactly once,
// unless InvokeAsync returns an error.
func (cl *Client) InvokeAsync(ctx context.Context, addr string, req *Command, cb func(*Command, error)) error {
	c, err := cl.Dial(ctx, addr)
	if err != nil {
		return err
	}
	return c.InvokeAsync(ctx, req, cb)
}

// InvokeOneway sends req to addr with the oneway flag and does not wait
// for an answer; it waits for room while the connection's writer is behind
// (SendContext), until ctx ends.
func (cl *Client) InvokeOneway(ctx context.Context, addr string, req *Command) error {
	c, err := cl.Dial(ctx, addr)
	if err != nil {
		return err
	}
	return c.SendContext(ctx, req)
}

// CloseConn closes the connection to addr, if any; the next call redials.
func (cl *Client) CloseConn(addr string) {
	cl.mu.Lock()
	e := cl.mu.conns[addr]
	cl.mu.Unlock()
	if e == nil {
		return
	}
	<-e.ready
	if e.conn != nil {
		e.conn.Close()
	}
}

// Close closes every connection (pending calls fail with ErrConnClosed) and
// waits for their read goroutines.
func (cl *Client) Close() error {
	cl.mu.Lock()
	if cl.mu.closed {
		cl.mu.Unlock()
		return nil
	}
	cl.mu.closed = true
	entries := make([]*dialEntry, 0, len(cl.mu.conns))
	for _, e := range cl.mu.conns {
		entries = append(entries, e)
	}
	cl.mu.Unlock()
	cl.cancel()
	for _, e := range entries {
		<-e.ready
		if e.conn != nil {
			e.conn.Close()
		}
	}
	cl.wg.Wait()
	return nil
}

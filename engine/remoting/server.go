package remoting

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// ServerConfig configures a Server. Zero limits mean "no limit".
type ServerConfig struct {
	Addr               string        // listen address, e.g. "127.0.0.1:10911"; ":0" picks a port
	MaxFrameBytes      int           // frame cap including the length field (DefaultMaxFrameBytes)
	MaxConns           int           // connections beyond this are closed on accept
	MaxInFlightPerConn int           // requests answered SYSTEM_BUSY "too many requests" beyond this
	IdleTimeout        time.Duration // close a connection that sent nothing for this long
	WriteTimeout       time.Duration // close a connection whose frame write stalls this long
	DefaultExecutor    ExecutorConfig
	SerializeType      SerializeType // header encoding of everything the server writes
	Logger             *slog.Logger  // nil = slog.Default()
	// BadInputLogInterval rate-limits the logging of bad input per remote
	// host: the first occurrence, then a count per interval (0 = 10 s).
	BadInputLogInterval time.Duration
	// TLS is the port's TLS mode and certificates (zero value: disabled,
	// plaintext only); see TLSConfig.
	TLS TLSConfig
}

// DefaultServerConfig: 16 MiB frames, 10000 connections, 10000 requests in
// flight per connection, 120 s idle timeout (Java's
// serverChannelMaxIdleTimeSeconds), 10 s write timeout, JSON headers.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{
		Addr:               "127.0.0.1:0",
		MaxFrameBytes:      DefaultMaxFrameBytes,
		MaxConns:           10000,
		MaxInFlightPerConn: 10000,
		IdleTimeout:        120 * time.Second,
		WriteTimeout:       10 * time.Second,
		DefaultExecutor:    DefaultExecutorConfig(),
		SerializeType:      SerializeJSON,
	}
}

// Remarks of the SYSTEM_BUSY answers.
const (
	RemarkTooManyRequests = "too many requests"
	RemarkOverload        = "[OVERLOAD]system busy, start flow control for a while"
	RemarkShuttingDown    = "server is shutting down"
)

type processorEntry struct {
	proc Processor
	exec *Executor
}

// Server accepts connections and dispatches each request to the processor
// registered for its code, on that processor's Executor. Register processors
// and create executors before Start; everything else is safe for concurrent use.
type Server struct {
	cfg  ServerConfig
	log  *slog.Logger
	opts connOptions

	ctx    context.Context // parent of every Conn's context; cancelled by Shutdown
	cancel context.CancelFunc

	processors  map[int32]processorEntry // written before Start only
	defaultProc processorEntry
	executors   []*Executor
	closeHooks  []func(*Conn)
	started     atomic.Bool

	ln         net.Listener
	acceptDone chan struct{}
	badStop    chan struct{} // stops the bad-input log flusher
	connWG     sync.WaitGroup
	active     activeCounter
	activeDone func() // s.active.done, made once (a method value allocates)
	// onewayDropped counts the oneway requests refused before a processor
	// saw them (shutting down, too many in flight, executor full): their
	// senders hear nothing.
	onewayDropped atomic.Uint64

	mu struct {
		sync.Mutex
		conns    map[*Conn]struct{}
		shutdown bool
	}
}

// NewServer returns a server that answers every code with
// REQUEST_CODE_NOT_SUPPORTED until processors are registered.
func NewServer(cfg ServerConfig) *Server {
	s := &Server{cfg: cfg, processors: make(map[int32]processorEntry)}
	s.log = cfg.Logger
	if s.log == nil {
		s.log = slog.Default()
	}
	s.opts = connOptions{
		maxFrameBytes: cfg.MaxFrameBytes,
		maxInFlight:   cfg.MaxInFlightPerConn,
		idleTimeout:   cfg.IdleTimeout,
		writeTimeout:  cfg.WriteTimeout,
		serializeType: cfg.SerializeType,
		logger:        s.log,
		badInput:      newBadInputLog(s.log, cfg.BadInputLogInterval),
		onewayDropped: &s.onewayDropped,
		extPool:       &requestExtPool,
		recycle:       true,
	}
	s.activeDone = s.active.done
	s.badStop = make(chan struct{})
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mu.conns = make(map[*Conn]struct{})
	s.defaultProc = processorEntry{proc: ProcessorFunc(notSupported), exec: s.NewExecutor("default", cfg.DefaultExecutor)}
	return s
}

// OnewayRejected is the number of oneway requests the server refused
// before a processor saw them (shutting down, MaxInFlightPerConn, an
// executor's full queue), which their senders never hear of.
func (s *Server) OnewayRejected() uint64 { return s.onewayDropped.Load() }

// notSupported answers a code nobody handles as Java does, and counts it as
// bad input.
func notSupported(_ context.Context, c *Conn, req *Command) (*Command, error) {
	remark := fmt.Sprintf("request type %d not supported", req.Code)
	c.noteBadRequest(req, errors.New(remark))
	return NewResponse(protocol.RespRequestCodeNotSupported, remark), nil
}

// NotSupported is the processor of codes without one: REQUEST_CODE_NOT_SUPPORTED,
// counted as bad input (for a RegisterDefaultProcessor that falls back to it).
var NotSupported Processor = ProcessorFunc(notSupported)

// Stats returns the server's bad-input counters.
func (s *Server) Stats() ServerStats { return s.opts.badInput.stats() }

// NewExecutor creates a worker pool owned by the server, for RegisterProcessor.
// Several codes may share one (Java shares the send pool among 10/310/320).
func (s *Server) NewExecutor(name string, cfg ExecutorConfig) *Executor {
	e := newExecutor(name, cfg)
	s.executors = append(s.executors, e)
	return e
}

// RegisterProcessor routes code to p on ex (nil = the default executor).
// REQUIRES: called before Start.
func (s *Server) RegisterProcessor(code int32, p Processor, ex *Executor) {
	if ex == nil {
		ex = s.defaultProc.exec
	}
	s.processors[code] = processorEntry{proc: p, exec: ex}
}

// ProcessorCodes lists the request codes with a registered processor, in
// increasing order (the default processor's codes are not listed). Safe for
// concurrent use once registration is done (processors are registered
// before Start only).
func (s *Server) ProcessorCodes() []int32 {
	codes := make([]int32, 0, len(s.processors))
	for code := range s.processors {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	return codes
}

// RegisterDefaultProcessor handles codes without a processor (instead of
// answering REQUEST_CODE_NOT_SUPPORTED). REQUIRES: called before Start.
func (s *Server) RegisterDefaultProcessor(p Processor, ex *Executor) {
	if ex == nil {
		ex = s.defaultProc.exec
	}
	s.defaultProc = processorEntry{proc: p, exec: ex}
}

// OnConnClose registers fn to run when any connection closes (the broker drops
// that connection's consumers, the name server its brokers).
// REQUIRES: called before Start.
func (s *Server) OnConnClose(fn func(*Conn)) { s.closeHooks = append(s.closeHooks, fn) }

// Start listens on cfg.Addr and serves in the background.
func (s *Server) Start(ctx context.Context) error {
	if !s.started.CompareAndSwap(false, true) {
		return errors.New("remoting: server already started")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("remoting: listen %s: %w", s.cfg.Addr, err)
	}
	if ln, err = s.listenTLS(ln); err != nil {
		return err
	}
	s.ln = ln
	for _, e := range s.executors {
		e.start()
	}
	s.acceptDone = make(chan struct{})
	go s.acceptLoop()
	go s.opts.badInput.run(s.badStop)
	s.log.Info("remoting: server listening", "addr", ln.Addr().String(), "tls", s.tlsMode())
	return nil
}

// Addr is the listening address ("127.0.0.1:port"), or "" before Start.
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// ConnCount returns the number of open connections.
func (s *Server) ConnCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.conns)
}

func (s *Server) acceptLoop() {
	defer close(s.acceptDone)
	backoff := time.Duration(0)
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporaryAcceptError(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("remoting: accept failed, retrying", "err", err, "backoff", backoff)
				time.Sleep(backoff)
				continue
			}
			s.log.Error("remoting: accept failed, server stops accepting", "err", err)
			return
		}
		backoff = 0
		s.serve(nc)
	}
}

func (s *Server) serve(nc net.Conn) {
	s.mu.Lock()
	if s.mu.shutdown || (s.cfg.MaxConns > 0 && len(s.mu.conns) >= s.cfg.MaxConns) {
		n := len(s.mu.conns)
		s.mu.Unlock()
		s.log.Warn("remoting: refusing connection", "remote", nc.RemoteAddr().String(), "conns", n, "max", s.cfg.MaxConns)
		_ = nc.Close()
		return
	}
	c := newConn(s.ctx, nc, s.opts, s.dispatch)
	s.mu.conns[c] = struct{}{}
	s.connWG.Add(1)
	s.mu.Unlock()
	c.OnClose(func(c *Conn) {
		s.mu.Lock()
		delete(s.mu.conns, c)
		s.mu.Unlock()
		for _, h := range s.closeHooks {
			h(c)
		}
	})
	go func() {
		defer s.connWG.Done()
		c.readLoop()
	}()
}

// dispatch runs on the connection's read goroutine: admit, then queue.
func (s *Server) dispatch(c *Conn, req *Command) {
	if !s.active.add() {
		c.reject(req, protocol.RespSystemBusy, RemarkShuttingDown)
		return
	}
	if !c.acquire(req, s.activeDone) {
		s.active.done()
		c.log.Debug("remoting: too many requests in flight", "code", req.Code, "max", s.cfg.MaxInFlightPerConn)
		c.reject(req, protocol.RespSystemBusy, RemarkTooManyRequests)
		return
	}
	entry, ok := s.processors[req.Code]
	if !ok {
		entry = s.defaultProc
	}
	if !entry.exec.submit(execTask{conn: c, proc: entry.proc, req: req}) {
		c.release(req)
		c.log.Debug("remoting: executor full", "executor", entry.exec.name, "code", req.Code)
		c.reject(req, protocol.RespSystemBusy, RemarkOverload)
	}
}

// Shutdown stops accepting, answers new requests SYSTEM_BUSY, cancels the
// processors' contexts, waits until every admitted request is answered (or
// ctx ends), then closes all connections and stops the executors. It returns
// ctx's error if the wait was cut short.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.mu.shutdown {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.mu.shutdown = true
	s.mu.Unlock()
	if s.ln != nil {
		_ = s.ln.Close()
		<-s.acceptDone
		close(s.badStop)
	}
	idle := s.active.drain()
	s.cancel()
	var err error
	select {
	case <-idle:
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.mu.Lock()
	conns := make([]*Conn, 0, len(s.mu.conns))
	for c := range s.mu.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.drain(ctx) // replies already queued go out first
		c.closeWith(ErrServerClosed)
	}
	s.connWG.Wait()
	stopped := make(chan struct{})
	go func() {
		for _, e := range s.executors {
			e.stop()
		}
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-ctx.Done(): // a processor ignores its context; leave its worker behind
		err = ctx.Err()
	}
	return err
}

// activeCounter counts admitted requests so Shutdown can wait for them.
type activeCounter struct {
	mu       sync.Mutex
	n        int
	draining bool
	idle     chan struct{}
}

func (a *activeCounter) add() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.draining {
		return false
	}
	a.n++
	return true
}

func (a *activeCounter) done() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n--
	if a.n == 0 && a.idle != nil {
		close(a.idle)
		a.idle = nil
	}
}

// drain refuses further adds and returns a channel closed once n is zero.
func (a *activeCounter) drain() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.draining = true
	ch := make(chan struct{})
	if a.n == 0 {
		close(ch)
	} else {
		a.idle = ch
	}
	return ch
}

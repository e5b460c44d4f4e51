package remoting

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"
)

// tlsRecordHandshake is the first byte of a TLS ClientHello (record type 22).
const tlsRecordHandshake = 0x16

// acceptResult is one connection ready to serve, or an accept error.
type acceptResult struct {
	c   net.Conn
	err error
}

// tlsListener wraps the server's TCP listener in permissive and enforcing
// modes. One goroutine accepts; each accepted connection gets a goroutine
// that waits for its first byte (up to the idle timeout, as for any silent
// connection) and, for a TLS handshake record, completes the handshake
// within the handshake timeout. Accept returns connections ready to speak
// the remoting protocol: a *tlsConn or the plain TCP socket.
// Close closes the inner listener and every connection still in its
// handshake, and waits for those goroutines.
type tlsListener struct {
	inner      net.Listener
	mode       TLSMode
	conf       *tls.Config
	timeout    time.Duration // the handshake, from the first byte
	idle       time.Duration // the first byte; 0 = no limit
	maxPending int           // connections peeking or handshaking at once; ≤ 0 = no limit
	log        *slog.Logger
	refused    rateLimiter // plaintext under enforcing
	failed     rateLimiter // failed handshakes
	overflow   rateLimiter

	out       chan acceptResult
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
	wg        sync.WaitGroup

	mu struct {
		sync.Mutex
		pending map[net.Conn]struct{}
		closed  bool
	}
}

// newTLSListener starts accepting on inner for a permissive or enforcing server.
func newTLSListener(inner net.Listener, cfg TLSConfig, src *serverTLS, idle time.Duration, maxPending int, log *slog.Logger) *tlsListener {
	l := &tlsListener{
		inner:      inner,
		mode:       cfg.Mode,
		conf:       src.tlsConfig(),
		timeout:    cfg.HandshakeTimeout,
		idle:       idle,
		maxPending: maxPending,
		log:        log,
		refused:    rateLimiter{every: 10 * time.Second},
		failed:     rateLimiter{every: 10 * time.Second},
		overflow:   rateLimiter{every: 10 * time.Second},
		out:        make(chan acceptResult),
		done:       make(chan struct{}),
	}
	if l.timeout <= 0 {
		l.timeout = DefaultTLSHandshakeTimeout
	}
	l.mu.pending = make(map[net.Conn]struct{})
	l.wg.Add(1)
	go l.acceptLoop()
	return l
}

// Accept returns the next connection that passed the mode's check.
func (l *tlsListener) Accept() (net.Conn, error) {
	select {
	case r := <-l.out:
		return r.c, r.err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting and closes connections still in their handshake.
func (l *tlsListener) Close() error {
	l.closeOnce.Do(func() {
		close(l.done)
		l.closeErr = l.inner.Close()
		l.mu.Lock()
		l.mu.closed = true
		for c := range l.mu.pending {
			_ = c.Close()
		}
		l.mu.Unlock()
		l.wg.Wait()
	})
	return l.closeErr
}

// Addr is the inner listener's address.
func (l *tlsListener) Addr() net.Addr { return l.inner.Addr() }

func (l *tlsListener) acceptLoop() {
	defer l.wg.Done()
	for {
		nc, err := l.inner.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			select { // the server's accept loop backs off before it asks again
			case l.out <- acceptResult{err: err}:
				continue
			case <-l.done:
				return
			}
		}
		if !l.track(nc) {
			_ = nc.Close()
			continue
		}
		go l.admit(nc)
	}
}

// track registers nc as in its handshake (and the goroutine that will run
// it), unless the listener is closed or too many are pending.
func (l *tlsListener) track(nc net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return false
	}
	if l.maxPending > 0 && len(l.mu.pending) >= l.maxPending {
		if n, ok := l.overflow.allow(time.Now()); ok {
			l.log.Warn("remoting: too many connections in their TLS handshake, refusing", "remote", nc.RemoteAddr().String(),
				"pending", len(l.mu.pending), "suppressed", n)
		}
		return false
	}
	l.mu.pending[nc] = struct{}{}
	l.wg.Add(1)
	return true
}

func (l *tlsListener) untrack(nc net.Conn) {
	l.mu.Lock()
	delete(l.mu.pending, nc)
	l.mu.Unlock()
}

// admit peeks nc's first byte and upgrades, serves or refuses it.
func (l *tlsListener) admit(nc net.Conn) {
	defer l.wg.Done()
	c, err := l.classify(nc)
	l.untrack(nc)
	if err != nil {
		_ = nc.Close()
		return
	}
	select {
	case l.out <- acceptResult{c: c}:
	case <-l.done:
		_ = c.Close()
	}
}

// classify returns the connection to serve, or an error after logging why
// nc is refused.
func (l *tlsListener) classify(nc net.Conn) (net.Conn, error) {
	remote := nc.RemoteAddr().String()
	if l.idle > 0 {
		_ = nc.SetReadDeadline(time.Now().Add(l.idle))
	}
	first, c, err := peekFirstByte(nc)
	if err != nil {
		l.log.Debug("remoting: connection closed before its first byte", "remote", remote, "err", err)
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(l.timeout))
	if first != tlsRecordHandshake {
		if l.mode == TLSEnforcing {
			if n, ok := l.refused.allow(time.Now()); ok {
				l.log.Warn("remoting: refusing plaintext connection: TLS is enforced (tls.server.mode enforcing)",
					"remote", remote, "suppressed", n)
			}
			return nil, ErrTLSRequired
		}
		_ = c.SetDeadline(time.Time{})
		return c, nil
	}
	tc := tls.Server(c, l.conf)
	if err := tc.Handshake(); err != nil {
		if n, ok := l.failed.allow(time.Now()); ok {
			l.log.Warn("remoting: TLS handshake failed", "remote", remote, "err", err, "suppressed", n)
		}
		return nil, err
	}
	_ = c.SetDeadline(time.Time{})
	st := tc.ConnectionState()
	l.log.Debug("remoting: TLS connection", "remote", remote, "version", tls.VersionName(st.Version),
		"cipher", tls.CipherSuiteName(st.CipherSuite), "clientCert", len(st.PeerCertificates) > 0)
	return &tlsConn{Conn: tc}, nil
}

// tlsConn is an established TLS connection whose Close closes the socket
// at once, without the close_notify alert: crypto/tls would wait up to 5 s
// to write it to a peer that stopped reading, and a close must not block
// (a stalled consumer is disconnected by closing it; Shutdown closes every
// connection in turn). The remoting frames carry their own lengths, so a
// truncated stream cannot pass for a complete one.
type tlsConn struct{ *tls.Conn }

func (c *tlsConn) Close() error { return c.NetConn().Close() }

// prefixConn returns an already-read first byte before reading on (where
// the socket cannot be peeked).
type prefixConn struct {
	net.Conn
	first []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.first) > 0 && len(b) > 0 {
		n := copy(b, p.first)
		p.first = p.first[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// readFirstByte reads the first byte and returns a connection that still
// yields it.
func readFirstByte(nc net.Conn) (byte, net.Conn, error) {
	var b [1]byte
	if _, err := io.ReadFull(nc, b[:]); err != nil {
		return 0, nil, err
	}
	return b[0], &prefixConn{Conn: nc, first: b[:]}, nil
}

// listenTLS wraps ln for the server's TLS mode (ln itself when disabled).
// Connections waiting for their first byte or in their handshake are capped
// at MaxConns; a silent one is closed after IdleTimeout.
func (s *Server) listenTLS(ln net.Listener) (net.Listener, error) {
	if !s.cfg.TLS.Enabled() {
		if err := s.cfg.TLS.Validate(); err != nil {
			_ = ln.Close()
			return nil, err
		}
		return ln, nil
	}
	var hosts []string
	if h, _, err := net.SplitHostPort(ln.Addr().String()); err == nil {
		hosts = append(hosts, h)
	}
	if h, _, err := net.SplitHostPort(s.cfg.Addr); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	src, err := newServerTLS(s.cfg.TLS, s.log, hosts)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	return newTLSListener(ln, s.cfg.TLS, src, s.cfg.IdleTimeout, s.cfg.MaxConns, s.log), nil
}

// tlsMode is the mode logged at Start.
func (s *Server) tlsMode() TLSMode {
	if s.cfg.TLS.Mode == "" {
		return TLSDisabled
	}
	return s.cfg.TLS.Mode
}

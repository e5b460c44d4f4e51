package proxy

import (
	"bufio"
	"crypto/tls"
	"net"
	"sync"
	"time"
)

// peekTimeout bounds the wait for a connection's first byte.
const peekTimeout = 10 * time.Second

// tlsHandshakeByte starts every TLS connection (a handshake record).
const tlsHandshakeByte = 0x16

// mixedListener serves TLS and plaintext on one port, as RocketMQ's proxy
// does: a connection whose first byte starts a TLS handshake is served
// with tc, any other in plaintext (only TLS when tlsOnly). The first byte
// is awaited on the connection's own goroutine, so a silent client does not
// hold up the others. Safe for concurrent use.
type mixedListener struct {
	net.Listener
	tc      *tls.Config
	tlsOnly bool

	once      sync.Once
	closeOnce sync.Once
	ready     chan net.Conn
	errc      chan error
	done      chan struct{}
}

func (l *mixedListener) start() {
	l.ready, l.errc, l.done = make(chan net.Conn), make(chan error, 1), make(chan struct{})
	go func() {
		for {
			c, err := l.Listener.Accept()
			if err != nil {
				l.errc <- err
				return
			}
			go l.classify(c)
		}
	}()
}

func (l *mixedListener) classify(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(peekTimeout))
	br := bufio.NewReaderSize(c, 16)
	first, err := br.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil || (l.tlsOnly && first[0] != tlsHandshakeByte) {
		_ = c.Close()
		return
	}
	var out net.Conn = &peekedConn{Conn: c, r: br}
	if first[0] == tlsHandshakeByte {
		out = tls.Server(out, l.tc)
	}
	select {
	case l.ready <- out:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *mixedListener) Accept() (net.Conn, error) {
	l.once.Do(l.start)
	select {
	case c := <-l.ready:
		return c, nil
	case err := <-l.errc:
		l.errc <- err // every later Accept sees it too
		return nil, err
	}
}

func (l *mixedListener) Close() error {
	l.once.Do(l.start)
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// peekedConn reads through the reader that peeked.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

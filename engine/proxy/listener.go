package proxy

import (
	"bufio"
	"crypto/tls"
	"net"
	"time"
)

// peekTimeout bounds the wait for a connection's first byte.
const peekTimeout = 10 * time.Second

// tlsHandshakeByte starts every TLS connection (a handshake record).
const tlsHandshakeByte = 0x16

// mixedListener serves TLS and plaintext on one port, as RocketMQ's proxy
// does: a connection whose first byte starts a TLS handshake is served
// with tc, any other in plaintext (only TLS when tlsOnly).
type mixedListener struct {
	net.Listener
	tc      *tls.Config
	tlsOnly bool
}

func (l *mixedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		_ = c.SetReadDeadline(time.Now().Add(peekTimeout))
		br := bufio.NewReaderSize(c, 1)
		first, err := br.Peek(1)
		_ = c.SetReadDeadline(time.Time{})
		if err != nil {
			_ = c.Close()
			continue
		}
		pc := &peekedConn{Conn: c, r: br}
		if first[0] == tlsHandshakeByte {
			return tls.Server(pc, l.tc), nil
		}
		if l.tlsOnly {
			_ = c.Close()
			continue
		}
		return pc, nil
	}
}

// peekedConn reads through the reader that peeked.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

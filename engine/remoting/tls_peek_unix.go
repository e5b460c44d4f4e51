//go:build unix

package remoting

import (
	"io"
	"net"
	"syscall"
)

// peekFirstByte returns nc's first byte without consuming it (recv with
// MSG_PEEK through the runtime poller, so nc's read deadline applies), and
// nc itself, unwrapped.
func peekFirstByte(nc net.Conn) (byte, net.Conn, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return readFirstByte(nc)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return readFirstByte(nc)
	}
	var (
		b    [1]byte
		n    int
		rerr error
	)
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
		return rerr != syscall.EAGAIN && rerr != syscall.EINTR
	})
	switch {
	case err != nil:
		return 0, nil, err
	case rerr != nil:
		return 0, nil, rerr
	case n == 0:
		return 0, nil, io.EOF
	}
	return b[0], nc, nil
}

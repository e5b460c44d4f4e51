//go:build !unix

package remoting

import "net"

// peekFirstByte reads nc's first byte and returns a connection that still
// yields it (no MSG_PEEK here).
func peekFirstByte(nc net.Conn) (byte, net.Conn, error) { return readFirstByte(nc) }

package remoting

import (
	"errors"
	"syscall"
)

// isTemporaryAcceptError reports accept failures worth retrying: out of file
// descriptors or buffers, or a connection reset before it was accepted.
func isTemporaryAcceptError(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

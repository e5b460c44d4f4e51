package remoting

import (
	"errors"
	"fmt"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

var (
	// Frame and header errors. Each closes the connection it arrived on.
	ErrFrameTooLarge        = errors.New("remoting: frame exceeds the maximum size")
	ErrBadFrameLength       = errors.New("remoting: bad frame length")
	ErrBadHeaderLength      = errors.New("remoting: header length exceeds frame")
	ErrUnknownSerializeType = errors.New("remoting: unknown serialize type")
	ErrMalformedHeader      = errors.New("remoting: malformed header")
	ErrHeaderNotEncodable   = errors.New("remoting: header cannot be encoded")
	ErrTruncatedFrame       = errors.New("remoting: truncated frame")

	// Call errors.
	ErrTimeout         = errors.New("remoting: request timed out")
	ErrConnClosed      = errors.New("remoting: connection closed")
	ErrClientClosed    = errors.New("remoting: client closed")
	ErrServerClosed    = errors.New("remoting: server closed")
	ErrAlreadyReplied  = errors.New("remoting: request already replied to")
	ErrTooManyRequests = errors.New("remoting: too many requests in flight")

	// ErrReplyLater is returned by a Processor that will answer later through
	// Conn.Reply (long polling). The request stays counted as in flight until then.
	ErrReplyLater = errors.New("remoting: reply later")

	// Ext field errors, wrapped in *FieldError (protocol's).
	ErrMissingField   = protocol.ErrMissingField
	ErrMalformedField = protocol.ErrMalformedField
)

// FieldError reports an ext field that is missing or does not parse
// (protocol.FieldError).
type FieldError = protocol.FieldError

// ResponseError is a response whose code the caller did not expect.
type ResponseError struct {
	Code   int32
	Remark string
}

func (e *ResponseError) Error() string {
	return fmt.Sprintf("remoting: response %s (%d): %s", protocol.ResponseCodeName(e.Code), e.Code, e.Remark)
}

// AsResponseError returns the *ResponseError in err's chain, if any.
func AsResponseError(err error) (*ResponseError, bool) {
	var re *ResponseError
	ok := errors.As(err, &re)
	return re, ok
}

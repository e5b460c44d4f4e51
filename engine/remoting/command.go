package remoting

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// Command is one request or response: the header fields plus the body.
//
// A Command is not safe for concurrent mutation; hand it from goroutine to
// goroutine. Body may alias the frame buffer it was decoded from; a
// request a server connection decoded may be recycled with that buffer
// by Release (recycle.go), and is not otherwise.
type Command struct {
	Code      int32 // request code, or response code in a response
	Language  Language
	Version   int32
	Opaque    int32 // request id, echoed by the response
	Flag      int32 // FlagResponse | FlagOneway
	Remark    string
	ExtFields ExtFields
	Body      []byte

	// SerializeType is the header encoding the command arrived in. It is set by
	// the decoder and informational only: a Conn writes with its own configured type.
	SerializeType SerializeType

	// Timings are this request's stage instants while its server has an
	// Observer (see Timings); zero otherwise.
	Timings Timings

	token *inflightToken // set on requests dispatched by a Conn (to &tok); released by the reply
	tok   inflightToken  // the token's storage: no allocation per dispatched request

	// extPool is the pool the decoder took ExtFields from, to which
	// ReleaseExtFields returns it (nil: extPool).
	extPool *sync.Pool
	// recycle marks a request a server connection decoded into a Command
	// from cmdPool; frame is the pooled buffer its Body points into (nil
	// for a frame too large for the pools). Release gives both back.
	recycle bool
	frame   *[]byte

	// headerErr is set by the JSON decoder when the header is a JSON object
	// but a member has a value of the wrong type (ErrBadHeaderField), and by
	// either decoder when the header has more than MaxExtFields extFields
	// (ErrTooManyExtFields): the request is answered SYSTEM_ERROR instead
	// of dispatched.
	headerErr error
}

// HeaderErr reports a header member of the wrong type or more than
// MaxExtFields extFields (wrapping ErrBadHeaderField), or nil. The other
// fields hold what could be decoded.
func (c *Command) HeaderErr() error { return c.headerErr }

var opaqueCounter atomic.Int32

// nextOpaque returns a process-wide fresh request id.
func nextOpaque() int32 { return opaqueCounter.Add(1) }

// NewRequest returns a request with a fresh opaque, this package's language and
// DefaultVersion. ext may be nil.
func NewRequest(code int32, ext ExtFields) *Command {
	return &Command{Code: code, Language: LanguageGo, Version: DefaultVersion, Opaque: nextOpaque(), ExtFields: ext}
}

// NewResponse returns a response with the given code and remark. The opaque is
// filled in when it is written as the reply to a request.
func NewResponse(code int32, remark string) *Command {
	return &Command{Code: code, Language: LanguageGo, Version: DefaultVersion, Flag: FlagResponse, Remark: remark}
}

// ResetResponse makes c, in storage of the caller's (a pooled response),
// what NewResponse(code, remark) returns: every other field is cleared,
// ExtFields to nil.
func (c *Command) ResetResponse(code int32, remark string) {
	*c = Command{Code: code, Language: LanguageGo, Version: DefaultVersion, Flag: FlagResponse, Remark: remark}
}

// IsResponse reports whether the response flag bit is set.
func (c *Command) IsResponse() bool { return c.Flag&FlagResponse != 0 }

// IsOneway reports whether the oneway flag bit is set.
func (c *Command) IsOneway() bool { return c.Flag&FlagOneway != 0 }

// MarkResponse sets the response flag bit.
func (c *Command) MarkResponse() { c.Flag |= FlagResponse }

// MarkOneway sets the oneway flag bit.
func (c *Command) MarkOneway() { c.Flag |= FlagOneway }

// Ext returns ExtFields, allocating it if nil, for setting fields.
func (c *Command) Ext() ExtFields {
	if c.ExtFields == nil {
		c.ExtFields = make(ExtFields)
	}
	return c.ExtFields
}

// String summarises the command for logs (no body bytes).
func (c *Command) String() string {
	if c.IsResponse() {
		return fmt.Sprintf("response{code=%s opaque=%d flag=%d remark=%q ext=%d body=%dB}",
			protocol.ResponseCodeName(c.Code), c.Opaque, c.Flag, c.Remark, len(c.ExtFields), len(c.Body))
	}
	return fmt.Sprintf("request{code=%s opaque=%d flag=%d ext=%d body=%dB}",
		protocol.RequestCodeName(c.Code), c.Opaque, c.Flag, len(c.ExtFields), len(c.Body))
}

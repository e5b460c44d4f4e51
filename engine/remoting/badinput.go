package remoting

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// Bad requests, as opposed to framing errors.
//
// Only a frame that cannot be delimited or whose header cannot be read as a
// header at all (length out of limits, header length beyond the frame,
// unknown serialize type, a JSON header that is not a JSON object, a
// ROCKETMQ header whose lengths do not add up) closes the connection: its
// opaque is unknown, and the bytes after it cannot be trusted to start a
// frame. Everything else a well-framed request can get wrong — a header
// field of the wrong type, a missing or unparsable custom field, a body that
// does not decode, an unknown code — is answered (unless the request is
// oneway) with the request's opaque, as Java's NettyRemotingAbstract does,
// and the other requests on the connection carry on:
//
//	a header field of the wrong type     SYSTEM_ERROR "header field <opaque> ..." (answered by the Conn)
//	a missing custom field               SYSTEM_ERROR "the custom field <name> is null"
//	an unparsable custom field           SYSTEM_ERROR "the custom field <name> is malformed: ..."
//	a body that does not decode          SYSTEM_ERROR naming the body (processors, via NewBadRequest)
//	an unknown request code              REQUEST_CODE_NOT_SUPPORTED "request type <code> not supported"
//
// Every bad request and every connection closed on bad input is counted
// (Server.Stats) and logged at most once per BadInputLogInterval per remote
// host: the first occurrence in full, then one line with the count of the
// rest.

var (
	// ErrBadRequest marks a request that is answered SYSTEM_ERROR because of
	// what it carries; processors return errors wrapping it (NewBadRequest),
	// *FieldError or a header error, and the Conn answers and counts them.
	ErrBadRequest = errors.New("remoting: bad request")
	// ErrBadHeaderField reports a header member of the wrong JSON type (a
	// code that is an object, an extFields value that is an array, ...).
	// The header is still a JSON object, so the request is answered.
	ErrBadHeaderField = errors.New("remoting: header field has a value of the wrong type")
)

// BadRequestError is a bad request answered SYSTEM_ERROR with Remark.
type BadRequestError struct {
	Remark string
	kind   error // ErrBadHeaderField for header members of the wrong type
}

func (e *BadRequestError) Error() string { return "remoting: bad request: " + e.Remark }

// Unwrap makes errors.Is(err, ErrBadRequest) hold (and ErrBadHeaderField
// for a header member of the wrong type).
func (e *BadRequestError) Unwrap() []error {
	if e.kind != nil {
		return []error{ErrBadRequest, e.kind}
	}
	return []error{ErrBadRequest}
}

// NewBadRequest returns a *BadRequestError with the formatted remark.
func NewBadRequest(format string, args ...any) error {
	return &BadRequestError{Remark: fmt.Sprintf(format, args...)}
}

// IsBadRequest reports whether err is about the request itself (answered
// SYSTEM_ERROR and counted as bad input) rather than a processor failure.
func IsBadRequest(err error) bool {
	return errors.Is(err, ErrBadRequest) || errors.Is(err, ErrMissingField) ||
		errors.Is(err, ErrMalformedField) || errors.Is(err, ErrBadHeaderField)
}

// BadRequestRemark is the remark of the answer to a bad request.
func BadRequestRemark(err error) string {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe.Remark()
	}
	var be *BadRequestError
	if errors.As(err, &be) {
		return be.Remark
	}
	return strings.TrimPrefix(err.Error(), "remoting: ")
}

// BadRequest counts and logs (rate-limited) req as bad input and returns the
// SYSTEM_ERROR response for it, remark BadRequestRemark(err). Processors
// that reply later (Conn.Reply) use it; those that return use (nil, err).
func (c *Conn) BadRequest(req *Command, err error) *Command {
	c.noteBadRequest(req, err)
	return NewResponse(protocol.RespSystemError, BadRequestRemark(err))
}

func (c *Conn) noteBadRequest(req *Command, err error) {
	if c.opts.badInput != nil {
		c.opts.badInput.noteRequest(c, req, err)
	}
}

// answerBadHeader answers a request whose header had a field of the wrong
// type, without dispatching it.
func (c *Conn) answerBadHeader(req *Command) {
	c.noteBadRequest(req, req.headerErr)
	c.reject(req, protocol.RespSystemError, BadRequestRemark(req.headerErr))
}

// ServerStats counts the bad input a server met.
type ServerStats struct {
	// BadRequests were answered with an error (SYSTEM_ERROR for a bad
	// header field, custom field or body, REQUEST_CODE_NOT_SUPPORTED for an
	// unknown code); their connections stayed open.
	BadRequests uint64
	// BadInputCloses are connections closed on a framing error or a frame
	// cut off by the peer.
	BadInputCloses uint64
}

// DefaultBadInputLogInterval is how often bad input from one host is logged.
const DefaultBadInputLogInterval = 10 * time.Second

// maxBadInputHosts bounds the hosts tracked for rate limiting; beyond it
// bad input from new hosts is counted but not logged until entries expire.
const maxBadInputHosts = 4096

// badInputLog counts bad input and logs it at most once per interval per
// remote host (an IP: a client's connections share one budget). Safe for
// concurrent use.
type badInputLog struct {
	log      *slog.Logger
	interval time.Duration
	now      func() time.Time

	requests atomic.Uint64
	closes   atomic.Uint64

	mu    sync.Mutex
	hosts map[string]*badHost
}

// badHost is one remote host's current logging window.
type badHost struct {
	start      time.Time // when the window's first occurrence was logged
	suppressed int       // occurrences since, not yet logged
}

func newBadInputLog(log *slog.Logger, interval time.Duration) *badInputLog {
	if interval <= 0 {
		interval = DefaultBadInputLogInterval
	}
	return &badInputLog{log: log, interval: interval, now: time.Now, hosts: make(map[string]*badHost)}
}

func (l *badInputLog) stats() ServerStats {
	return ServerStats{BadRequests: l.requests.Load(), BadInputCloses: l.closes.Load()}
}

func hostOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	s := a.String()
	if h, _, err := net.SplitHostPort(s); err == nil {
		return h
	}
	return s
}

// allow reports whether an occurrence from host is logged now; when it
// opens a new window it also logs how many the previous one suppressed.
func (l *badInputLog) allow(host string) bool {
	now := l.now()
	l.mu.Lock()
	h := l.hosts[host]
	if h != nil && now.Sub(h.start) < l.interval {
		h.suppressed++
		l.mu.Unlock()
		return false
	}
	prev := 0
	switch {
	case h != nil:
		prev, h.start, h.suppressed = h.suppressed, now, 0
	case len(l.hosts) < maxBadInputHosts:
		l.hosts[host] = &badHost{start: now}
	default:
		l.mu.Unlock()
		return false
	}
	l.mu.Unlock()
	if prev > 0 {
		l.log.Warn("remoting: more bad input from host", "host", host, "count", prev, "interval", l.interval)
	}
	return true
}

// flush logs the counts of windows that ended (all of them when final)
// and forgets idle hosts. The server calls it every interval and at shutdown.
func (l *badInputLog) flush(final bool) {
	now := l.now()
	type line struct {
		host string
		n    int
	}
	var lines []line
	l.mu.Lock()
	for host, h := range l.hosts {
		if !final && now.Sub(h.start) < l.interval {
			continue
		}
		if h.suppressed > 0 {
			lines = append(lines, line{host, h.suppressed})
		}
		delete(l.hosts, host)
	}
	l.mu.Unlock()
	for _, ln := range lines {
		l.log.Warn("remoting: more bad input from host", "host", ln.host, "count", ln.n, "interval", l.interval)
	}
}

func (l *badInputLog) noteRequest(c *Conn, req *Command, err error) {
	l.requests.Add(1)
	if l.allow(hostOf(c.RemoteAddr())) {
		c.log.Warn("remoting: bad request answered", "code", req.Code, "opaque", req.Opaque, "err", err)
	}
}

func (l *badInputLog) noteClose(c *Conn, err error) {
	l.closes.Add(1)
	if l.allow(hostOf(c.RemoteAddr())) {
		c.log.Warn("remoting: closing connection on bad input", "err", err)
	}
}

// run flushes every interval until stop closes.
func (l *badInputLog) run(stop <-chan struct{}) {
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			l.flush(true)
			return
		case <-t.C:
			l.flush(false)
		}
	}
}

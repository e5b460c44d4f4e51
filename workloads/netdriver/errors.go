package netdriver

import "errors"

var (
	// ErrNoRoute reports a topic the name servers do not know (and that
	// was not created).
	ErrNoRoute = errors.New("netdriver: no route for topic")
	// ErrBadConfig reports a Config without a name server or broker.
	ErrBadConfig = errors.New("netdriver: bad config")
	// ErrRejected wraps a broker's non-success answer (a
	// *remoting.ResponseError carries the code).
	ErrRejected = errors.New("netdriver: request rejected")
	// ErrBadResponse reports a reply that does not decode.
	ErrBadResponse = errors.New("netdriver: bad response")
)

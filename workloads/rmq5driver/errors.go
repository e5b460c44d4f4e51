package rmq5driver

import "errors"

// Errors of the driver (the client's own errors are wrapped with %w).
var (
	// ErrBadConfig: a required setting is missing or invalid.
	ErrBadConfig = errors.New("rmq5driver: bad config")
	// ErrSendStatus: the service answered a send with a status that has no
	// remoting counterpart (the status's code name is in the message).
	ErrSendStatus = errors.New("rmq5driver: send refused")
	// ErrNoReceipt: a send returned no receipt and no error.
	ErrNoReceipt = errors.New("rmq5driver: send returned no receipt")
)

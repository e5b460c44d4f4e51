package rmqdriver

import "errors"

// Errors of the driver (the client's own errors are wrapped with %w).
var (
	// ErrBadConfig: a required setting is missing or invalid.
	ErrBadConfig = errors.New("rmqdriver: bad config")
	// ErrNoRoute: the name servers know no queue of the topic.
	ErrNoRoute = errors.New("rmqdriver: no route for topic")
	// ErrSendStatus: the broker stored the message with a durability
	// warning (FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE).
	ErrSendStatus = errors.New("rmqdriver: send not acknowledged as SEND_OK")
	// ErrPullStatus: the broker answered a pull with a status the driver
	// does not know.
	ErrPullStatus = errors.New("rmqdriver: unexpected pull status")
)

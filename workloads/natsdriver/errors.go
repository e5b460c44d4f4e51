package natsdriver

import "errors"

var (
	// ErrConfig marks an invalid Config.
	ErrConfig = errors.New("natsdriver: invalid config")
	// ErrStart is returned when the embedded server does not start.
	ErrStart = errors.New("natsdriver: server did not start")
	// ErrQueue marks an unusable (topic, queue): empty topic, negative queue id.
	ErrQueue = errors.New("natsdriver: bad queue")
	// ErrPull marks a direct-get answer the driver does not understand.
	ErrPull = errors.New("natsdriver: bad direct get response")
)

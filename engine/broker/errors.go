package broker

import "errors"

var (
	// ErrBadConfig reports a Config that cannot work.
	ErrBadConfig = errors.New("broker: bad config")
	// ErrStarted is returned by a second Start.
	ErrStarted = errors.New("broker: already started")
	// ErrNotStarted is returned by Shutdown before Start.
	ErrNotStarted = errors.New("broker: not started")
	// ErrStopped is returned by a second Shutdown.
	ErrStopped = errors.New("broker: already stopped")
	// ErrStoreOpen wraps the store opener's failure in Start.
	ErrStoreOpen = errors.New("broker: cannot open the message store")
	// ErrNotFound reports a record, message or queue that does not exist
	// (stores may wrap it).
	ErrNotFound = errors.New("broker: not found")
)

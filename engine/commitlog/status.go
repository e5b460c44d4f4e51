package commitlog

import (
	"errors"
	"fmt"
)

// Status is the outcome of an append, named as RocketMQ's PutMessageStatus.
type Status int

// Statuses. The zero value is PutOK.
const (
	PutOK Status = iota
	FlushDiskTimeout
	ServiceNotAvailable
	CreateMappedFileFailed
	MessageIllegal
	PropertiesSizeExceeded
	OSPageCacheBusy
	UnknownError
)

var statusNames = [...]string{
	PutOK:                  "PUT_OK",
	FlushDiskTimeout:       "FLUSH_DISK_TIMEOUT",
	ServiceNotAvailable:    "SERVICE_NOT_AVAILABLE",
	CreateMappedFileFailed: "CREATE_MAPPED_FILE_FAILED",
	MessageIllegal:         "MESSAGE_ILLEGAL",
	PropertiesSizeExceeded: "PROPERTIES_SIZE_EXCEEDED",
	OSPageCacheBusy:        "OS_PAGE_CACHE_BUSY",
	UnknownError:           "UNKNOWN_ERROR",
}

func (s Status) String() string {
	if int(s) >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Stored reports whether a message with this status is in the log (RocketMQ
// treats FLUSH_DISK_TIMEOUT as "send OK": stored, durability unknown).
func (s Status) Stored() bool { return s == PutOK || s == FlushDiskTimeout }

// Sentinel errors.
var (
	ErrClosed   = errors.New("commitlog: log closed")
	ErrNoRecord = errors.New("commitlog: no record at that offset")
	// ErrNotWritable is returned when the log refuses appends (after a
	// write/flush error, or when the owner marked it read-only).
	ErrNotWritable = errors.New("commitlog: log not writable")
)

// StatusError carries a non-OK append status and its cause.
type StatusError struct {
	Status Status
	Err    error
}

func (e *StatusError) Error() string {
	if e.Err == nil {
		return "commitlog: " + e.Status.String()
	}
	return "commitlog: " + e.Status.String() + ": " + e.Err.Error()
}

func (e *StatusError) Unwrap() error { return e.Err }

// StatusOf extracts the append status from an error returned by Append
// (PutOK for nil, UnknownError for an error that carries none).
func StatusOf(err error) Status {
	if err == nil {
		return PutOK
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	return UnknownError
}

func statusErr(s Status, err error) error { return &StatusError{Status: s, Err: err} }

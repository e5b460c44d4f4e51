package store

import (
	"errors"

	"github.com/brokerlab/brokerlab/engine/commitlog"
)

// Sentinel errors.
var (
	// ErrClosed is returned by every operation after Close.
	ErrClosed = errors.New("store: closed")
	// ErrDiskFull is the cause of SERVICE_NOT_AVAILABLE while the partition
	// is above DiskSpaceWarningLevelRatio.
	ErrDiskFull = errors.New("store: disk full: usage above the warning level, puts refused until cleaning frees space")
	// ErrLocked is returned by Open when another process holds the store's
	// lock file.
	ErrLocked = errors.New("store: store directory is locked by another process")
	// ErrInvalidConfig is returned by Open for a Config that cannot work.
	ErrInvalidConfig = errors.New("store: invalid config")
	// ErrBatch is the cause of MESSAGE_ILLEGAL for a batch that mixes topics
	// or queues, is empty, or holds transactional messages.
	ErrBatch = errors.New("store: invalid batch")
	// ErrNoMessage is returned by lookups that find no message.
	ErrNoMessage = errors.New("store: no message")
	// ErrCorruption marks corruption errors (errors.Is); the concrete error
	// is a *CorruptionError naming the segment file and offset.
	ErrCorruption = commitlog.ErrCorruption
)

// CorruptionError reports an invalid record: segment file, global offset
// and cause.
type CorruptionError = commitlog.CorruptionError

// IsCorruption reports whether err marks corruption.
func IsCorruption(err error) bool { return errors.Is(err, ErrCorruption) }

// PutStatus is RocketMQ's PutMessageStatus (the commit log's Status).
type PutStatus = commitlog.Status

// Put statuses (see rocketmq-store.md §8.1 for the response codes).
const (
	PutOK                  = commitlog.PutOK
	FlushDiskTimeout       = commitlog.FlushDiskTimeout
	ServiceNotAvailable    = commitlog.ServiceNotAvailable
	CreateMappedFileFailed = commitlog.CreateMappedFileFailed
	MessageIllegal         = commitlog.MessageIllegal
	PropertiesSizeExceeded = commitlog.PropertiesSizeExceeded
	OSPageCacheBusy        = commitlog.OSPageCacheBusy
	UnknownError           = commitlog.UnknownError
)

// StatusError carries a non-OK put status and its cause.
type StatusError = commitlog.StatusError

// StatusOf extracts the put status from an error returned by Put or
// PutBatch (PutOK for nil).
func StatusOf(err error) PutStatus { return commitlog.StatusOf(err) }

func statusErr(s PutStatus, err error) error { return &commitlog.StatusError{Status: s, Err: err} }

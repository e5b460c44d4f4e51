// Package storeconfig builds a message store's config from the names an
// operator or an experiment file writes: the write path, the flush policy,
// the segment size and the flush interval. The broker command and the
// experiment harness both build their stores here, so a name means the same
// store in either.
package storeconfig

import (
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/store"
)

// Spec names a store's commit log.
type Spec struct {
	// WritePath is an iopath kind: mmap, pwrite, pool, direct, uncached.
	WritePath string
	// Flush is a flush policy: sync, async, group, rmqgroup, dsync (dsync
	// needs a write path with a durable write: pwrite, uncached, direct).
	Flush string
	// SegmentSize is the commit-log segment size in bytes (0: the default).
	SegmentSize int64
	// FlushInterval, if > 0, replaces the policy's default interval.
	FlushInterval time.Duration
}

// FieldError is a Spec field whose name is unknown; Field is "write-path"
// or "flush".
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// New is the store rooted at dir with RocketMQ's defaults (store.
// DefaultConfig) and s's commit log: its write path, its flush policy with
// that policy's defaults, its segment size and flush interval. An unknown
// name is a *FieldError wrapping the engine's parse error.
func New(dir string, s Spec) (store.Config, error) {
	cfg := store.DefaultConfig(dir)
	path, err := iopath.ParseKind(s.WritePath)
	if err != nil {
		return cfg, &FieldError{Field: "write-path", Err: err}
	}
	pol, err := flush.ParseKind(s.Flush)
	if err != nil {
		return cfg, &FieldError{Field: "flush", Err: err}
	}
	cfg.CommitLog.Path = path
	cfg.CommitLog.Flush = flush.DefaultConfig(pol)
	if s.SegmentSize > 0 {
		cfg.CommitLog.SegmentSize = s.SegmentSize
	}
	if s.FlushInterval > 0 {
		cfg.CommitLog.Flush.Interval = s.FlushInterval
	}
	return cfg, nil
}

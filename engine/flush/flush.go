// Package flush decides when appended bytes are made durable: the "flush
// policy" variable of brokerlab's experiments, independent of the write path.
//
//	sync   flush before acknowledging each append.
//	async  RocketMQ FlushRealTimeService: every Interval (500 ms) flush if at
//	       least LeastPages (4) pages are dirty, and everything at least every
//	       ThoroughInterval (10 s); appends are acknowledged at once.
//	group  RocketMQ GroupCommitService: every waiter that arrives while a
//	       flush runs is served by the next single flush; an append is
//	       acknowledged once the flushed position passes its end, or fails
//	       with ErrTimeout after SyncFlushTimeout (5 s).
//
// A policy sees only a Flusher: it does not know which write path it flushes.
// Positions are the log's global byte offsets.
//
// Errors are sticky: after the first Flush error every later Commit returns it.
package flush

import (
	"context"
	"errors"
)

// Flusher is satisfied by the commit log (and by iopath.Appender for a single
// segment). Flush makes every byte appended so far durable and returns the
// new flushed position.
type Flusher interface {
	Flush() (flushedPos int64, err error)
}

// Kind names a flush policy in configs, flags and benchmark names.
type Kind string

// The policies.
const (
	Sync  Kind = "sync"
	Async Kind = "async"
	Group Kind = "group"
)

var (
	// ErrTimeout is returned by Commit when the group flush did not cover the
	// append within SyncFlushTimeout (RocketMQ FLUSH_DISK_TIMEOUT: the bytes
	// are written but not known to be durable).
	ErrTimeout = errors.New("flush: flush did not complete within the sync flush timeout")
	// ErrClosed is returned by Commit after Close.
	ErrClosed = errors.New("flush: policy closed")
	// ErrUnknownKind is returned by ParseKind.
	ErrUnknownKind = errors.New("flush: unknown flush policy")
)

// Policy is told about every append and returns when the bytes up to pos are
// as durable as the policy promises: Sync and Group block until the flushed
// position is >= pos; Async returns at once.
//
// Commit may be called concurrently from many goroutines, with pos values in
// any order; pos must not exceed what has been appended when Commit is
// called. Close flushes everything once more and stops background work.
type Policy interface {
	Commit(ctx context.Context, pos int64) error
	// FlushedPos is the highest position known durable.
	FlushedPos() int64
	Stats() Stats
	Close() error
}

// Package flush decides when appended bytes are made durable: the "flush
// policy" variable of brokerlab's experiments, independent of the write path.
//
//	sync   flush before acknowledging each append.
//	async  RocketMQ FlushRealTimeService: every Interval (500 ms) flush if at
//	       least LeastPages (4) pages are dirty, and everything at least every
//	       ThoroughInterval (10 s); appends are acknowledged at once.
//	group  leader/follower group commit (no flusher goroutine): a committer
//	       whose position is not yet flushed flushes inline when no flush
//	       is running (the leader); everyone who arrives while a flush runs
//	       is served by the next single flush, which one of them runs. An
//	       append is acknowledged once the flushed position passes its end,
//	       or fails with ErrTimeout after SyncFlushTimeout (5 s). With
//	       CoalesceWait the leader first waits (bounded) until the last
//	       round's producers are back, so a flush carries all of them.
//	rmqgroup  RocketMQ GroupCommitService: committers queue a request and
//	       kick one dedicated flusher goroutine, which swaps its
//	       double-buffered request lists and serves the read list with one
//	       flush (the shape of pebble's LogWriter flush loop).
//	dsync  overlapped durable writes: the write path writes every append
//	       durably by itself (pwritev2 RWF_DSYNC; FUA on direct), several
//	       in flight at once, and its flushed position is the end of the
//	       contiguous prefix of completed writes. The Flusher's Flush then
//	       only waits for the writes already issued (no fdatasync), and
//	       the policy is rmqgroup's loop over it: an append is acknowledged
//	       once the write holding it and every earlier byte completed.
//	       Only write paths with a durable write can run it (the commit
//	       log refuses mmap and pool at open).
//
// sync, group and rmqgroup also wake every TickInterval (10 ms, RocketMQ's
// GroupCommitService waitForRunning(10)) and flush whatever was appended but
// not flushed, so appends nobody waits for (RocketMQ WAIT=false) become
// durable; async reads the Flusher's written position itself, as RocketMQ's
// FlushRealTimeService reads the mapped file's.
//
// A policy sees only a Flusher: it does not know which write path it flushes.
// Positions are the log's global byte offsets.
//
// Errors are sticky: after the first Flush error every later Commit returns it.
//
// A short flush — Flush returning less than WrittenPos was before it began —
// is not taken on trust. sync, group and rmqgroup flush again while each
// flush advances the flushed position (within SyncFlushTimeout): RocketMQ's
// GroupCommitService likewise repeats flush(0) until flushedWhere reaches a
// request's offset. A Commit whose position is still beyond the flushed one
// gets an error matching both ErrShortFlush and ErrTimeout, never nil:
// RocketMQ answers such a request FLUSH_DISK_TIMEOUT (the bytes are written,
// not known durable). Like ErrTimeout it is not sticky: a later Commit that
// a flush does cover gets nil, which covers the earlier bytes too.
package flush

import (
	"context"
	"errors"
	"fmt"
)

// Flusher is satisfied by the commit log. Flush makes every byte appended so
// far durable and returns the new flushed position (a result below what
// WrittenPos reported before the call is a short flush: see the package
// doc). WrittenPos is the
// appended end: every byte appended so far, whether or not anyone will
// Commit it; a policy flushes when WrittenPos passes its flushed position.
// A policy calls Flush from one goroutine at a time; WrittenPos may be
// called at any time, concurrently with appends and with Flush.
type Flusher interface {
	Flush() (flushedPos int64, err error)
	WrittenPos() int64
}

// Kind names a flush policy in configs, flags and benchmark names.
type Kind string

// The policies.
const (
	Sync  Kind = "sync"
	Async Kind = "async"
	Group Kind = "group"
	// RMQGroup is RocketMQ's double-buffered GroupCommitService, kept
	// beside Group so experiments can compare the two.
	RMQGroup Kind = "rmqgroup"
	// DSync acknowledges appends when their own durable writes complete
	// (overlapped RWF_DSYNC writes, no fdatasync round).
	DSync Kind = "dsync"
)

// DurableWrites reports whether policy k needs a write path whose writes
// are durable by themselves (dsync).
func (k Kind) DurableWrites() bool { return k == DSync }

var (
	// ErrTimeout is returned by Commit when the group flush did not cover the
	// append within SyncFlushTimeout (RocketMQ FLUSH_DISK_TIMEOUT: the bytes
	// are written but not known to be durable).
	ErrTimeout = errors.New("flush: flush did not complete within the sync flush timeout")
	// ErrClosed is returned by Commit after Close.
	ErrClosed = errors.New("flush: policy closed")
	// ErrUnknownKind is returned by ParseKind.
	ErrUnknownKind = errors.New("flush: unknown flush policy")
	// ErrShortFlush is matched by the error a Commit (or Close) gets when
	// the flushes meant to cover its position reported less: the Flusher
	// returned a flushed position below what was written when the flush
	// began, and flushing again made no progress (or SyncFlushTimeout
	// passed). The same error matches ErrTimeout, as RocketMQ reports the
	// case FLUSH_DISK_TIMEOUT. The error names both offsets.
	ErrShortFlush = errors.New("flush: flush reported less than was written")
)

// shortFlushError is a Commit at pos answered after the flushed position
// stopped at flushed < pos.
type shortFlushError struct{ pos, flushed int64 }

func shortFlush(pos, flushed int64) error { return &shortFlushError{pos: pos, flushed: flushed} }

func (e *shortFlushError) Error() string {
	return fmt.Sprintf("%v: flushed position %d is short of %d (FLUSH_DISK_TIMEOUT)", ErrShortFlush, e.flushed, e.pos)
}

// Is makes the error match ErrShortFlush and ErrTimeout.
func (e *shortFlushError) Is(target error) bool {
	return target == ErrShortFlush || target == ErrTimeout
}

// Policy is told about every append that waits for its flush and returns
// when the bytes up to pos are as durable as the policy promises: Sync,
// Group, RMQGroup and DSync block until the flushed position is >= pos;
// Async returns at once. Appends nobody commits are flushed by the policy's background work.
//
// Commit may be called concurrently from many goroutines, with pos values in
// any order; pos must not exceed what has been appended when Commit is
// called. Close flushes everything once more, answers every Commit still
// waiting (nil if the final flush covered it, else ErrClosed, a short-flush
// error or the sticky error) and stops background work; a Commit after Close
// returns ErrClosed. Close of sync, group and rmqgroup reports a short final
// flush (ErrShortFlush).
type Policy interface {
	Commit(ctx context.Context, pos int64) error
	// FlushedPos is the highest position known durable.
	FlushedPos() int64
	Stats() Stats
	Close() error
}

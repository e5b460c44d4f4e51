package flush

import (
	"fmt"
	"strings"
	"time"
)

// PageSize is RocketMQ's OS_PAGE_SIZE, used for all "least pages" arithmetic.
const PageSize = 4096

// Config selects and tunes a policy. Start from DefaultConfig.
type Config struct {
	Kind Kind
	// Async (RocketMQ FlushRealTimeService): wake every Interval
	// (flushIntervalCommitLog, 500 ms), flush if at least LeastPages pages
	// (flushCommitLogLeastPages, 4) are dirty, and flush everything if
	// ThoroughInterval (flushCommitLogThoroughInterval, 10 s) has passed since
	// the last thorough flush.
	Interval         time.Duration
	LeastPages       int
	ThoroughInterval time.Duration
	// Group, RMQGroup and DSync: a commit not covered within SyncFlushTimeout
	// (syncFlushTimeout, 5 s) gets ErrTimeout.
	SyncFlushTimeout time.Duration
	// TickInterval (sync, group, rmqgroup, dsync): how often the policy wakes to
	// flush bytes appended but not flushed, which no Commit asked for
	// (RocketMQ WAIT=false). RocketMQ's GroupCommitService waits 10 ms
	// between rounds (waitForRunning(10)); 0 means that default. Such
	// bytes become durable within about one TickInterval. Group's deadline
	// sweeper runs at most this far apart too.
	TickInterval time.Duration
	// CoalesceWait lets a flush wait for producers acknowledged by the
	// previous one to append and join it. 0, the default, flushes at once:
	// with closed-loop producers a batch is then whoever arrived during the
	// previous flush, about half of them, so throughput stays near half of
	// producers / flush latency.
	//
	// rmqgroup: the flusher waits this long after the first waiter of a
	// batch arrives before it flushes (as NATS' flusher coalesces).
	//
	// group: the leader waits up to this long until as many commits are
	// queued as the previous round had in flight (those its flush completed
	// plus those it left waiting), and flushes as soon as they are; a lone
	// producer never waits. With closed-loop producers every flush then
	// carries all of them; a producer that stops costs one wait.
	CoalesceWait time.Duration
	// OnFlush, if set, is called after every flush the policy performs
	// (from the flushing goroutine) with its duration and the number of
	// commits it served. It must be cheap; the harness records histograms.
	OnFlush func(Event)
}

// Event describes one flush performed by a policy.
type Event struct {
	Start    time.Time
	Duration time.Duration
	// Waiters is the number of Commit calls this flush completed (group,
	// rmqgroup: the batch size; sync: 1; async and the background flushes
	// of un-waited appends: 0 unless queued commits were covered).
	Waiters int
	// FlushedPos is the position after the flush.
	FlushedPos int64
	Err        error
}

// DefaultConfig returns RocketMQ's defaults for policy k.
func DefaultConfig(k Kind) Config {
	return Config{
		Kind:             k,
		Interval:         500 * time.Millisecond,
		LeastPages:       4,
		ThoroughInterval: 10 * time.Second,
		SyncFlushTimeout: 5 * time.Second,
		TickInterval:     10 * time.Millisecond,
	}
}

// Kinds lists, in a stable order, the policies every write path can run
// (they make bytes durable with fdatasync or msync); tests and benchmarks
// that use one write path iterate it.
func Kinds() []Kind { return []Kind{Sync, Async, Group, RMQGroup} }

// AllKinds is Kinds and DSync, which needs a write path with durable writes
// (iopath.SupportsDSync); matrices over write paths × policies iterate it
// and skip the pairs that cannot run.
func AllKinds() []Kind { return append(Kinds(), DSync) }

// ParseKind validates a policy name.
func ParseKind(s string) (Kind, error) {
	for _, k := range AllKinds() {
		if string(k) == s {
			return k, nil
		}
	}
	names := make([]string, 0, len(AllKinds()))
	for _, k := range AllKinds() {
		names = append(names, string(k))
	}
	return "", fmt.Errorf("%w %q (have %s)", ErrUnknownKind, s, strings.Join(names, ", "))
}

// New starts the policy cfg.Kind over f. startPos is the position already
// durable (a reopened log's end).
func New(f Flusher, startPos int64, cfg Config) (Policy, error) {
	d := DefaultConfig(cfg.Kind)
	if cfg.Interval <= 0 {
		cfg.Interval = d.Interval
	}
	if cfg.ThoroughInterval <= 0 {
		cfg.ThoroughInterval = d.ThoroughInterval
	}
	if cfg.SyncFlushTimeout <= 0 {
		cfg.SyncFlushTimeout = d.SyncFlushTimeout
	}
	if cfg.TickInterval <= 0 {
		cfg.TickInterval = d.TickInterval
	}
	if cfg.LeastPages < 0 {
		cfg.LeastPages = 0
	}
	switch cfg.Kind {
	case Sync:
		return newSync(f, startPos, cfg), nil
	case Async:
		return newAsync(f, startPos, cfg), nil
	case Group:
		return newGroup(f, startPos, cfg), nil
	case RMQGroup:
		return newRMQGroup(f, startPos, cfg, "flush-rmqgroup"), nil
	case DSync:
		return newRMQGroup(f, startPos, cfg, "flush-dsync"), nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownKind, cfg.Kind)
}

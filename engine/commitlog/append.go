package commitlog

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/segment"
)

// Result describes one appended record.
type Result struct {
	Status Status
	// PhysOffset is the record's global offset; Size its TOTALSIZE.
	PhysOffset int64
	Size       int32
	// QueueOffset is the record's QUEUEOFFSET field as written.
	QueueOffset int64
	// StoreHost is the STOREHOST written into the record; with PhysOffset
	// it makes the offset message id (MsgID), built only when asked for.
	StoreHost netip.AddrPort
	// StoreTimestamp is the STORETIMESTAMP (ms), stamped under the lock.
	StoreTimestamp int64
	// LockHeld is how long this append held the append lock.
	LockHeld time.Duration
	// LockAcquired is when the append took the append lock (the clock
	// reading STORETIMESTAMP comes from): with LockHeld it places the
	// append on a caller's clock for a per-stage latency breakdown.
	LockAcquired time.Time
}

// MsgID is the record's offset message id (store host + physical offset,
// 32 or 56 hex digits). It allocates; appends do not build it.
func (r Result) MsgID() string { return record.OffsetMsgID(r.StoreHost, r.PhysOffset) }

// PropertyWait is RocketMQ's WAIT property: "false" means the producer does
// not wait for the flush policy (RocketMQ PROPERTY_WAIT_STORE_MSG_OK).
const PropertyWait = "WAIT"

// OSPageCacheBusyTimeout is RocketMQ's osPageCacheBusyTimeOutMills: while the
// append lock's holder has held it this long, new appends are refused with
// OS_PAGE_CACHE_BUSY.
const OSPageCacheBusyTimeout = time.Second

// Append validates, encodes and appends m with the given QUEUEOFFSET, then
// waits as the flush policy requires. On success it returns a Result with
// Status PutOK and a nil error. Otherwise the error is a *StatusError (see
// StatusOf); for FlushDiskTimeout the record IS stored and Result is
// complete; for the other statuses nothing was stored.
func (l *Log) Append(ctx context.Context, m *record.Message, queueOffset int64) (Result, error) {
	ms := [1]*record.Message{m}
	var buf [1]Result
	rs, err := l.AppendBatch(ctx, ms[:], queueOffset, buf[:0])
	if len(rs) == 1 {
		return rs[0], err
	}
	return Result{Status: StatusOf(err)}, err
}

// AppendBatch appends msgs as consecutive records with consecutive queue
// offsets starting at firstQueueOffset, all in one segment (a batch is
// never split), under one acquisition of the append lock, and waits once for
// the flush policy. Results are appended to dst.
//
// If the append itself fails nothing was stored and dst is returned
// unchanged. If waiting for durability fails (FLUSH_DISK_TIMEOUT, a flush
// error, ctx ending) the records ARE in the log: the Results describe them,
// each carrying the status, and the error says why durability is unknown.
func (l *Log) AppendBatch(ctx context.Context, msgs []*record.Message, firstQueueOffset int64, dst []Result) ([]Result, error) {
	base := len(dst)
	wait := wantsWait(msgs)
	dst, err := l.AppendNoWait(ctx, msgs, firstQueueOffset, dst, wait)
	if err != nil || len(dst) == base || !wait {
		return dst, err
	}
	last := dst[len(dst)-1]
	if err := l.Commit(ctx, last.PhysOffset+int64(last.Size)); err != nil {
		st := StatusOf(err)
		for i := base; i < len(dst); i++ {
			dst[i].Status = st
		}
		return dst, err
	}
	return dst, nil
}

// wantsWait reports whether any message waits for durability (RocketMQ's
// WAIT property, absent = true).
func wantsWait(msgs []*record.Message) bool {
	for _, m := range msgs {
		if v, ok := record.Property(m.Properties, PropertyWait); !ok || v != "false" {
			return true
		}
	}
	return false
}

// AppendBatchNoWait is AppendBatch without the wait for the flush policy,
// for callers that hold their own lock around the append and wait outside it
// with Commit (the store's per-queue lock). Under the sync policy the flush
// still runs under the append lock — one flush per append — so Commit then
// returns at once.
func (l *Log) AppendBatchNoWait(ctx context.Context, msgs []*record.Message, firstQueueOffset int64, dst []Result) ([]Result, error) {
	return l.AppendNoWait(ctx, msgs, firstQueueOffset, dst, wantsWait(msgs))
}

// AppendNoWait is AppendBatchNoWait for a caller that has already read the
// messages' WAIT properties: waits reports whether any producer waits for
// durability (under sync it decides whether the flush runs inline). An
// append that nobody waits for is still flushed: the policy's background
// flush covers it (RocketMQ's 10 ms GroupCommitService wake-up, the async
// flusher's own positions).
func (l *Log) AppendNoWait(ctx context.Context, msgs []*record.Message, firstQueueOffset int64, dst []Result, waits bool) ([]Result, error) {
	if l.closed.Load() {
		return dst, statusErr(ServiceNotAvailable, ErrClosed)
	}
	if err := l.Err(); err != nil {
		return dst, statusErr(ServiceNotAvailable, fmt.Errorf("%w: %w", ErrNotWritable, err))
	}
	if len(msgs) == 0 {
		return dst, statusErr(MessageIllegal, errors.New("commitlog: empty batch"))
	}
	bp := l.getScratch()
	defer l.scratch.Put(bp)
	buf := (*bp)[:0]
	base := len(dst)
	var hostless record.Message // a copy for messages without a store host
	for i, m := range msgs {
		if !m.StoreHost.IsValid() {
			hostless = *m // never modify the caller's message
			hostless.StoreHost = l.cfg.StoreHost
			m = &hostless
		}
		if err := record.ValidateStored(m, l.cfg.MaxBodySize); err != nil {
			if errors.Is(err, record.ErrPropertiesTooLong) {
				return dst[:base], statusErr(PropertiesSizeExceeded, err)
			}
			return dst[:base], statusErr(MessageIllegal, err)
		}
		start := len(buf)
		var err error
		buf, err = record.AppendEncode(buf, m, record.BodyCRC(m.Body), firstQueueOffset+int64(i), 0, 0)
		if err != nil {
			return dst[:base], statusErr(MessageIllegal, err)
		}
		// PhysOffset holds the offset within buf until the append places it.
		dst = append(dst, Result{Size: int32(len(buf) - start), QueueOffset: firstQueueOffset + int64(i), PhysOffset: int64(start), StoreHost: m.StoreHost})
	}
	*bp = buf
	if int64(len(buf))+record.BlankMinLen > l.cfg.SegmentSize {
		return dst[:base], statusErr(MessageIllegal, fmt.Errorf("commitlog: %d-byte batch does not fit a %d-byte segment", len(buf), l.cfg.SegmentSize))
	}
	inline := l.cfg.Flush.Kind == flush.Sync && waits

	if held := l.LockHeldFor(); l.cfg.BusyTimeout > 0 && held > l.cfg.BusyTimeout {
		l.st.busyRefused.Add(1)
		return dst[:base], statusErr(OSPageCacheBusy, fmt.Errorf("commitlog: the append lock has been held for %v", held))
	}
	l.mu.Lock()
	now := time.Now() // one clock read for the lock timing and STORETIMESTAMP
	t1 := int64(now.Sub(epoch)) + 1
	l.beginInLock.Store(t1)
	storeTS := now.UnixMilli()
	phys, err := l.appendLocked(buf, dst[base:], storeTS)
	// sync: the flush runs under the append lock, so it covers exactly this
	// append and nothing else can piggyback on it: one flush per append.
	var cerr error
	if err == nil && inline {
		cerr = l.commit(ctx, phys+int64(len(buf)))
	}
	held := nanotime() - t1
	l.beginInLock.Store(0)
	l.mu.Unlock()
	l.st.lockHeldNanos.Add(uint64(held))
	for {
		m := l.st.maxLockHeld.Load()
		if uint64(held) <= m || l.st.maxLockHeld.CompareAndSwap(m, uint64(held)) {
			break
		}
	}
	if err != nil {
		return dst[:base], err
	}
	l.st.appends.Add(uint64(len(msgs)))
	l.st.bytes.Add(uint64(len(buf)))
	for i := base; i < len(dst); i++ {
		r := &dst[i]
		r.PhysOffset += phys
		r.StoreTimestamp = storeTS
		r.LockHeld = time.Duration(held)
		r.LockAcquired = now
		if cerr != nil {
			r.Status = StatusOf(cerr)
		}
	}
	return dst, cerr
}

// Commit waits until end is as durable as the flush policy promises (sync
// and group: flushed; async: at once). Errors are *StatusError:
// FLUSH_DISK_TIMEOUT (group timeout), SERVICE_NOT_AVAILABLE (a sticky flush
// error), UNKNOWN_ERROR wrapping ctx's error.
func (l *Log) Commit(ctx context.Context, end int64) error {
	if l.cfg.Flush.Kind == flush.Sync && l.flushed.Load() >= end {
		return nil // flushed under the append lock
	}
	return l.commit(ctx, end)
}

// appendLocked writes the encoded batch at the end of the log, rolling to a
// new segment (after writing the end-of-file blank) when it does not fit. It
// patches each record's QUEUEOFFSET/PHYSICALOFFSET/STORETIMESTAMP. It
// returns the physical offset of the first record.
// REQUIRES: l.mu held.
func (l *Log) appendLocked(buf []byte, rs []Result, storeTS int64) (int64, error) {
	if err := l.Err(); err != nil {
		return 0, statusErr(ServiceNotAvailable, fmt.Errorf("%w: %w", ErrNotWritable, err))
	}
	seg := l.q.Last()
	if seg == nil || seg.Full() {
		var err error
		if seg, err = l.roll(seg); err != nil {
			return 0, err
		}
	}
	app := seg.Appender()
	remaining := app.Size() - app.WrotePos()
	if int64(len(buf))+record.BlankMinLen > remaining {
		if err := l.writeBlank(app, remaining); err != nil {
			return 0, err
		}
		var err error
		if seg, err = l.roll(seg); err != nil {
			return 0, err
		}
		app = seg.Appender()
	}
	phys := seg.Start() + app.WrotePos()
	for _, r := range rs {
		rec := buf[r.PhysOffset : r.PhysOffset+int64(r.Size)]
		record.Patch(rec, r.QueueOffset, phys+r.PhysOffset, storeTS)
	}
	if _, err := app.Append(buf); err != nil {
		// ErrFull cannot happen (checked above); anything else is a write
		// error and makes the log unwritable.
		return 0, statusErr(ServiceNotAvailable, l.setErr(fmt.Errorf("commitlog: append to %s: %w", seg.Path(), err)))
	}
	l.wrote.Store(phys + int64(len(buf)))
	return phys, nil
}

// blankZeros backs the padding after an end-of-file blank record.
var blankZeros = make([]byte, 1<<20)

// writeBlank fills the rest of the segment: the 8-byte blank record
// [remaining][BLANK magic] followed by zeros, so the segment's write
// position reaches its end and stale bytes never survive past a blank.
// REQUIRES: l.mu held.
func (l *Log) writeBlank(app iopath.Appender, remaining int64) error {
	var hdr [record.BlankMinLen]byte
	record.PutBlank(hdr[:], int32(remaining))
	if _, err := app.Append(hdr[:]); err != nil {
		return statusErr(ServiceNotAvailable, l.setErr(fmt.Errorf("commitlog: write blank: %w", err)))
	}
	for left := remaining - record.BlankMinLen; left > 0; {
		n := min(left, int64(len(blankZeros)))
		if _, err := app.Append(blankZeros[:n]); err != nil {
			return statusErr(ServiceNotAvailable, l.setErr(fmt.Errorf("commitlog: pad blank: %w", err)))
		}
		left -= n
	}
	l.st.blanks.Add(1)
	return nil
}

// roll starts the segment after prev (or the first one).
// REQUIRES: l.mu held.
func (l *Log) roll(prev *segment.Segment) (*segment.Segment, error) {
	start := l.wrote.Load()
	if prev != nil {
		start = prev.End()
	}
	start -= start % l.cfg.SegmentSize
	before := l.q.Stats().Prepared
	seg, err := l.q.Roll(start)
	if err != nil {
		return nil, statusErr(CreateMappedFileFailed, err)
	}
	l.wrote.Store(start)
	if l.cfg.OnRoll != nil {
		l.cfg.OnRoll(RollEvent{Time: time.Now(), NewStart: start, Prepared: l.q.Stats().Prepared > before})
	}
	return seg, nil
}

func (l *Log) getScratch() *[]byte {
	if p, ok := l.scratch.Get().(*[]byte); ok {
		return p
	}
	b := make([]byte, 0, 4096)
	return &b
}

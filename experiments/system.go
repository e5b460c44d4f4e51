package experiments

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/store"
	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
	"github.com/brokerlab/brokerlab/internal/storeconfig"
	"github.com/brokerlab/brokerlab/workloads"
)

// system is the engine under test for one cell.
type system interface {
	Driver() workloads.Driver
	// Source reads messages back (nil when this system cannot).
	Source() workloads.Source
	// SegmentDir holds the commit-log segments (for residency probes).
	SegmentDir() string
	Stats() sysStats
	// Settle waits until everything written is visible to consumers (the
	// store's dispatcher caught up), so a backlog is complete before the
	// measured phase.
	Settle(timeout time.Duration) error
	// Stall delays the next flush of every kind by d (coordinated-omission
	// experiments).
	Stall(d time.Duration)
	Close() error
}

// sysStats are the engine counters a cell records.
type sysStats struct {
	Flush        flush.Stats
	Rolls        uint64
	SyncCreates  uint64
	MaxLockHeld  time.Duration
	LockHeldNs   uint64
	Appends      uint64
	CacheHitRate float64 // direct path block cache, -1 when none
	// AppendedBytes is the record bytes the store accepted (0 for peers).
	AppendedBytes int64
	// ReplicationLagAt is the slave's lag in bytes sampled at or before a
	// time (nil without replication).
	ReplicationLagAt func(time.Time) (int64, bool)
}

// sysHooks are callbacks into the cell's measurement.
type sysHooks struct {
	onFlush func(flush.Event)
	onRoll  func(t time.Time, start int64, prepared bool)
}

// engineConfig maps the experiment's engine section onto the store config
// of a cell (in-process, loopback and process cells alike; YAML never
// reaches inside engine/).
func engineConfig(en Engine, dir string, h sysHooks) (store.Config, *faultfs.Injector, error) {
	cfg, err := storeconfig.New(dir, storeconfig.Spec{WritePath: en.Path, Flush: en.Flush,
		SegmentSize: int64(en.SegmentSize), FlushInterval: en.FlushInterval.D()})
	if err != nil {
		var fe *storeconfig.FieldError
		if errors.As(err, &fe) {
			err = fe.Err // as before: the engine's own parse error
		}
		return cfg, nil, err
	}
	lc := &cfg.CommitLog
	lc.Flush.OnFlush = h.onFlush
	lc.Flush.CoalesceWait = en.CoalesceWait.D()
	lc.PreallocateNext = en.Prealloc == nil || *en.Prealloc
	lc.IO.Warm = en.Warm
	lc.IO.Mlock = en.Mlock
	lc.IO.Advice = iopath.Advice(en.Advice)
	if lc.Path == iopath.Pool {
		lc.IO.Pool = iopath.NewBufferPool(iopath.DefaultPoolBuffers, lc.SegmentSize)
	}
	if h.onRoll != nil {
		lc.OnRoll = func(e commitlog.RollEvent) { h.onRoll(e.Time, e.NewStart, e.Prepared) }
	}
	// Every file operation goes through an injector so a stall can be
	// injected; with no rules it only counts calls.
	inj := faultfs.NewInjector(1)
	lc.FS = faultfs.Wrap(vfs.Default, inj)
	cfg.FS = lc.FS
	// The store creates the direct path's block cache (64 KiB blocks).
	cfg.ReadCacheBytes = int64(en.CacheSize)
	if en.Retain > 0 {
		cfg.RetainBytes = int64(en.Retain)
		cfg.CleanInterval = time.Second
	}
	return cfg, inj, nil
}

// storeSystem is the engine in-process: producers put into the message
// store, consumers pull from it (the broker's code path minus the network).
type storeSystem struct {
	st     *store.Store
	inj    *faultfs.Injector
	cfg    store.Config
	host   netip.AddrPort
	stages *broker.StageRecorder // engine.stages: each put's store stages
}

// ConsumerGroup is the group the harness's consumers pull as.
const ConsumerGroup = "brokerlab-bench"

func openStoreSystem(en Engine, dir string, h sysHooks) (*storeSystem, error) {
	cfg, inj, err := engineConfig(en, dir, h)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(cfg)
	if err != nil {
		return nil, err
	}
	s := &storeSystem{st: st, inj: inj, cfg: cfg, host: netip.MustParseAddrPort("127.0.0.1:50000")}
	if en.Stages {
		s.stages = broker.NewStageRecorder()
	}
	return s, nil
}

// StageRecorder is the put-stage recorder (nil without engine.stages).
func (s *storeSystem) StageRecorder() *broker.StageRecorder { return s.stages }

func (s *storeSystem) Driver() workloads.Driver { return storeDriver{s} }
func (s *storeSystem) Source() workloads.Source { return storeDriver{s} }
func (s *storeSystem) SegmentDir() string       { return commitlog.SegmentDir(s.cfg.Root) }

func (s *storeSystem) Stats() sysStats { return storeStats(s.st) }

func storeStats(s *store.Store) sysStats {
	st := s.Stats()
	out := sysStats{Flush: st.Flush, Rolls: st.CommitLog.Segment.Rolls, SyncCreates: st.CommitLog.Segment.SyncCreates,
		MaxLockHeld: st.CommitLog.MaxLockHeld, LockHeldNs: st.CommitLog.LockHeldNanos, Appends: st.CommitLog.Appends, CacheHitRate: -1,
		AppendedBytes: int64(st.PutBytes)}
	if s.ReadCache() != nil {
		out.CacheHitRate = st.ReadCache.HitRatio
	}
	return out
}

func (s *storeSystem) Stall(d time.Duration) { stallNext(s.inj, d) }

func (s *storeSystem) Settle(timeout time.Duration) error {
	if !s.st.WaitDispatched(timeout) {
		return fmt.Errorf("experiments: dispatch still %d bytes behind after %v", s.st.DispatchBehindBytes(), timeout)
	}
	return nil
}

func (s *storeSystem) Close() error {
	err := s.st.Close()
	if p := s.cfg.CommitLog.IO.Pool; p != nil {
		p.Close()
	}
	if c := s.cfg.CommitLog.IO.Cache; c != nil {
		c.Close()
	}
	return err
}

// stallNext delays the next sync-class operation (fdatasync, msync, and the
// pool/pwrite commit writes) by d, once.
func stallNext(inj *faultfs.Injector, d time.Duration) {
	for _, op := range []vfs.Op{vfs.OpSync, vfs.OpMsync} {
		inj.Add(faultfs.Rule{Op: op, When: faultfs.OnlyNth(1), Delay: d})
	}
}

type storeDriver struct{ s *storeSystem }

func (d storeDriver) Name() string { return "engine" }
func (d storeDriver) Close() error { return nil }

func (d storeDriver) Send(ctx context.Context, m *workloads.Message) error {
	rm := record.Message{Topic: m.Topic, QueueID: m.QueueID, Body: m.Body, Properties: properties(m),
		BornTimestamp: time.Now().UnixMilli(), BornHost: d.s.host, StoreHost: d.s.cfg.CommitLog.StoreHost}
	if d.s.stages == nil {
		_, err := d.s.st.Put(ctx, &rm)
		return err
	}
	start := time.Now()
	res, err := d.s.st.Put(ctx, &rm)
	if err == nil {
		timedPut(d.s.stages, start, res.LockWait, res.LockHeld, res.FlushWait)
	}
	return err
}

// maxPullBytes bounds one pull (RocketMQ's MAX_PULL_MSG_SIZE is 128 MiB);
// the store's hot/cold transfer caps apply below it.
const maxPullBytes = 128 << 20

// Pull reads through the store's GetMessage (consume queue, then commit
// log), as the broker's PULL_MESSAGE does.
func (d storeDriver) Pull(ctx context.Context, topic string, queueID int32, offset int64, max int) ([][]byte, int64, error) {
	r, err := d.s.st.GetMessage(ConsumerGroup, topic, queueID, offset, max, maxPullBytes, nil)
	if err != nil {
		return nil, offset, err
	}
	if r.Status != store.Found {
		if r.Status == store.OffsetTooSmall || r.Status == store.OffsetOverflowBadly {
			return nil, r.NextBeginOffset, nil
		}
		return nil, offset, nil
	}
	bodies := make([][]byte, 0, len(r.Messages))
	for _, m := range r.Messages {
		rec, err := record.Decode(r.Buffer[m.Pos:m.Pos+int(m.Size)], false)
		if err != nil {
			return bodies, offset, fmt.Errorf("experiments: pulled record at %d: %w", m.PhysOffset, err)
		}
		bodies = append(bodies, rec.Body)
	}
	return bodies, r.NextBeginOffset, nil
}

func (d storeDriver) MaxOffset(topic string, queueID int32) (int64, error) {
	return d.s.st.GetMaxOffsetInQueue(topic, queueID), nil
}

// properties encodes KEYS and TAGS as RocketMQ's properties string.
func properties(m *workloads.Message) string {
	if m.Keys == "" && m.Tags == "" {
		return ""
	}
	var b strings.Builder
	if m.Keys != "" {
		b.WriteString("KEYS\x01" + m.Keys + "\x02")
	}
	if m.Tags != "" {
		b.WriteString("TAGS\x01" + m.Tags + "\x02")
	}
	return b.String()
}

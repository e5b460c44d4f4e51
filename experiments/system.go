package experiments

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
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
}

// sysHooks are callbacks into the cell's measurement.
type sysHooks struct {
	onFlush func(flush.Event)
	onRoll  func(t time.Time, start int64, prepared bool)
}

// engineConfig maps the experiment's engine section onto the commit-log
// config (YAML never reaches inside engine/).
func engineConfig(en Engine, dir string, h sysHooks) (commitlog.Config, *faultfs.Injector, error) {
	cfg := commitlog.DefaultConfig(dir)
	path, err := iopath.ParseKind(en.Path)
	if err != nil {
		return cfg, nil, err
	}
	pol, err := flush.ParseKind(en.Flush)
	if err != nil {
		return cfg, nil, err
	}
	cfg.Path = path
	cfg.Flush = flush.DefaultConfig(pol)
	if en.FlushInterval > 0 {
		cfg.Flush.Interval = en.FlushInterval.D()
	}
	cfg.Flush.OnFlush = h.onFlush
	cfg.SegmentSize = int64(en.SegmentSize)
	cfg.PreallocateNext = en.Prealloc == nil || *en.Prealloc
	cfg.IO.Warm = en.Warm
	cfg.IO.Mlock = en.Mlock
	cfg.IO.Advice = iopath.Advice(en.Advice)
	if path == iopath.Pool {
		cfg.IO.Pool = iopath.NewBufferPool(iopath.DefaultPoolBuffers, cfg.SegmentSize)
	}
	if path == iopath.Direct && en.CacheSize > 0 {
		c, err := iopath.NewBlockCache(int64(en.CacheSize), 4096)
		if err != nil {
			return cfg, nil, err
		}
		cfg.IO.Cache = c
	}
	if h.onRoll != nil {
		cfg.OnRoll = func(e commitlog.RollEvent) { h.onRoll(e.Time, e.NewStart, e.Prepared) }
	}
	// Every file operation goes through an injector so a stall can be
	// injected; with no rules it only counts calls.
	inj := faultfs.NewInjector(1)
	cfg.FS = faultfs.Wrap(vfs.Default, inj)
	return cfg, inj, nil
}

// logSystem is the engine core in-process: producers append to the commit
// log directly (queue offsets assigned per queue as the store does).
type logSystem struct {
	log  *commitlog.Log
	inj  *faultfs.Injector
	cfg  commitlog.Config
	host netip.AddrPort

	mu   sync.Mutex
	qoff map[string]*atomic.Int64
}

func openLogSystem(en Engine, dir string, h sysHooks) (*logSystem, error) {
	cfg, inj, err := engineConfig(en, dir, h)
	if err != nil {
		return nil, err
	}
	l, err := commitlog.Open(cfg)
	if err != nil {
		return nil, err
	}
	return &logSystem{log: l, inj: inj, cfg: cfg, host: netip.MustParseAddrPort("127.0.0.1:50000"), qoff: map[string]*atomic.Int64{}}, nil
}

func (s *logSystem) Driver() workloads.Driver { return logDriver{s} }
func (s *logSystem) Source() workloads.Source { return nil }
func (s *logSystem) SegmentDir() string       { return commitlog.SegmentDir(s.cfg.Dir) }

func (s *logSystem) Stats() sysStats {
	st := s.log.Stats()
	out := sysStats{Flush: st.Flush, Rolls: st.Segment.Rolls, SyncCreates: st.Segment.SyncCreates,
		MaxLockHeld: st.MaxLockHeld, LockHeldNs: st.LockHeldNanos, Appends: st.Appends, CacheHitRate: -1}
	if c := s.cfg.IO.Cache; c != nil {
		out.CacheHitRate = c.Stats().HitRatio
	}
	return out
}

func (s *logSystem) Stall(d time.Duration) { stallNext(s.inj, d) }

func (s *logSystem) Close() error {
	err := s.log.Close()
	if s.cfg.IO.Pool != nil {
		s.cfg.IO.Pool.Close()
	}
	if s.cfg.IO.Cache != nil {
		s.cfg.IO.Cache.Close()
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

func (s *logSystem) nextOffset(topic string, q int32) int64 {
	key := topic + "-" + fmt.Sprint(q)
	s.mu.Lock()
	c, ok := s.qoff[key]
	if !ok {
		c = new(atomic.Int64)
		s.qoff[key] = c
	}
	s.mu.Unlock()
	return c.Add(1) - 1
}

type logDriver struct{ s *logSystem }

func (d logDriver) Name() string { return "engine" }
func (d logDriver) Close() error { return nil }

func (d logDriver) Send(ctx context.Context, m *workloads.Message) error {
	rm := record.Message{Topic: m.Topic, QueueID: m.QueueID, Body: m.Body, Properties: properties(m),
		BornTimestamp: time.Now().UnixMilli(), BornHost: d.s.host}
	_, err := d.s.log.Append(ctx, &rm, d.s.nextOffset(m.Topic, m.QueueID))
	return err
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

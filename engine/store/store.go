package store

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"context"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/iopath"
)

// Store is RocketMQ's DefaultMessageStore. See the package doc for the
// concurrency contract.
type Store struct {
	cfg         Config
	log         *commitlog.Log
	host        netip.AddrPort // the commit log's STOREHOST, set when it opens
	cq          *consumequeue.Store
	idx         *index.Service // nil without MessageIndexEnable
	cache       *iopath.BlockCache
	ownsCache   bool
	ckpt        *checkpointFile
	lock        *dirLock
	recovery    RecoveryReport
	totalMem    int64
	delayLevels []time.Duration
	deleteHours map[int]bool

	// life: Put, PutBatch, GetMessage and the lookups hold it shared for
	// their whole duration; Close takes it exclusively after setting closed.
	life   sync.RWMutex
	closed atomic.Bool

	stripes  [topicQueueLockNum]queueStripe
	diskFull atomic.Bool
	slave    atomic.Bool // a replica: puts refused, the log grows by ReplicaAppend (ha.go)

	disp dispatcher
	// tombs maps deleted topics to the commit-log offset of their deletion
	// (copy-on-write; nil when none); deleteMu serializes DeleteTopicData.
	tombs    atomic.Pointer[map[string]int64]
	deleteMu sync.Mutex
	arriving atomic.Pointer[func(topic string, queueID int32, maxOffset int64)]

	// Checkpoint timestamps (ms).
	physicTS, logicsTS, indexTS atomic.Int64
	// vouch holds full index files waiting for the commit log to be
	// durable past their records before indexTS may cover them.
	vouch indexVouch

	bgStop chan struct{}
	bgWG   sync.WaitGroup

	cleanMu      sync.Mutex
	lastCleanMin int64 // guarded by cleanMu

	st counters
}

// Open opens (creating if needed) the store under cfg.Root and recovers it:
// a normal recovery when the previous process closed it cleanly, an
// abnormal one when the abort file is still there (see the package doc).
// The dispatcher and the periodic services are running when Open returns.
func Open(cfg Config) (*Store, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	fsys := cfg.FS
	if err := fsys.MkdirAll(filepath.Join(cfg.Root, "config"), 0o755); err != nil {
		return nil, fmt.Errorf("store: create %s: %w", cfg.Root, err)
	}
	s := &Store{cfg: cfg, bgStop: make(chan struct{})}
	s.delayLevels, _ = parseDelayLevels(cfg.MessageDelayLevel)
	s.deleteHours, _ = parseDeleteWhen(cfg.DeleteWhen)
	s.totalMem = cfg.TotalMemoryBytes
	if s.totalMem <= 0 {
		s.totalMem = totalMemory()
	}
	if f := cfg.OnMessageArriving; f != nil {
		s.arriving.Store(&f)
	}
	for i := range s.stripes {
		s.stripes[i].next = map[queueKey]int64{}
	}
	if err := s.open(); err != nil {
		s.abandon()
		return nil, err
	}
	s.start()
	return s, nil
}

// open acquires the lock, loads configs, recovers and creates the abort
// file, the checkpoint and the flush policy.
func (s *Store) open() error {
	cfg := s.cfg
	var err error
	if s.lock, err = lockDir(filepath.Join(cfg.Root, "lock")); err != nil {
		return err
	}
	if err := s.loadTombstones(); err != nil {
		return err
	}
	if err := s.recover(); err != nil {
		return err
	}
	if err := s.createAbortFile(); err != nil {
		return err
	}
	if err := s.writeCheckpoint(); err != nil {
		return err
	}
	return nil
}

// logConfig is the commit-log config the store opens the log with.
func (s *Store) logConfig() commitlog.Config {
	c := s.cfg.CommitLog
	if c.Path == iopath.Direct && c.IO.Cache == nil && s.cfg.ReadCacheBytes > 0 {
		if s.cache == nil {
			cache, err := iopath.NewBlockCache(s.cfg.ReadCacheBytes, s.cfg.ReadCacheBlockSize)
			if err == nil {
				s.cache, s.ownsCache = cache, true
			} else {
				s.cfg.Logger.Warn("store: no read cache for the direct path", "err", err)
			}
		}
		c.IO.Cache = s.cache
	} else if c.IO.Cache != nil {
		s.cache = c.IO.Cache
	}
	return c
}

// start launches the dispatcher and the periodic services.
func (s *Store) start() {
	s.disp.wake = make(chan struct{}, 1)
	s.disp.stop = make(chan struct{})
	s.disp.done = make(chan struct{})
	go pprof.Do(context.Background(), pprof.Labels("brokerlab", "store-reput"), func(context.Context) { s.reputLoop() })
	s.every("store-checkpoint", s.cfg.CheckpointInterval, func() {
		s.advanceIndexTS()
		if err := s.writeCheckpoint(); err != nil {
			s.cfg.Logger.Error("store: checkpoint", "err", err)
		}
	})
	lastThorough := time.Now()
	s.every("store-flush-cq", s.cfg.FlushConsumeQueueInterval, func() {
		if time.Since(lastThorough) >= s.cfg.FlushConsumeQueueThoroughInterval {
			lastThorough = time.Now()
			s.flushConsumeQueuesThoroughly()
			return
		}
		if err := s.cq.FlushAll(s.cfg.FlushConsumeQueueLeastPages); err != nil {
			s.cfg.Logger.Error("store: flush consume queues", "err", err)
		}
	})
	if s.cfg.CleanInterval > 0 {
		s.every("store-clean", s.cfg.CleanInterval, func() {
			if _, err := s.CleanOnce(time.Now()); err != nil && !errors.Is(err, ErrClosed) {
				s.cfg.Logger.Error("store: clean", "err", err)
			}
		})
	}
}

// every runs fn every d on its own goroutine until Close.
func (s *Store) every(label string, d time.Duration, fn func()) {
	s.bgWG.Add(1)
	go pprof.Do(context.Background(), pprof.Labels("brokerlab", label), func(context.Context) {
		defer s.bgWG.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-s.bgStop:
				return
			case <-t.C:
				fn()
			}
		}
	})
}

// flushConsumeQueuesThoroughly makes every consume-queue unit durable and
// then advances the checkpoint's logicsMsgTimestamp to the last record
// dispatched before the flush started.
func (s *Store) flushConsumeQueuesThoroughly() {
	ts := s.disp.lastTS.Load()
	var errs []error
	for _, q := range s.cq.Queues() {
		if err := q.FlushAll(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		s.cfg.Logger.Error("store: flush consume queues", "err", err)
		return
	}
	maxStore(&s.logicsTS, ts)
}

func maxStore(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

func (s *Store) writeCheckpoint() error {
	return s.ckpt.write(Checkpoint{
		PhysicMsgTimestamp: s.physicTS.Load(),
		LogicsMsgTimestamp: s.logicsTS.Load(),
		IndexMsgTimestamp:  s.indexTS.Load(),
		ConfirmPhyOffset:   s.disp.from.Load(),
	})
}

// AbortPath is the abort file of a store root: present while a store is
// open, removed by a clean Close.
func AbortPath(root string) string { return filepath.Join(root, "abort") }

func (s *Store) createAbortFile() error {
	p := AbortPath(s.cfg.Root)
	f, err := s.cfg.FS.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("store: create abort file: %w", err)
	}
	_, werr := f.WriteAt([]byte(strconv.Itoa(os.Getpid())), 0)
	serr := f.Datasync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("store: write abort file: %w", err)
	}
	return s.cfg.FS.SyncDir(s.cfg.Root)
}

// Close shuts the store down cleanly: puts are refused, in-flight ones
// finish, the flush policy flushes everything, the dispatcher catches up,
// consume queues, index and commit log are flushed and closed, topics and
// offsets persisted, the checkpoint written, and the abort file removed (kept
// if dispatch could not catch up or the log saw a write error, so the next
// Open recovers abnormally).
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	// The periodic services go first: the cleaner may be waiting for the
	// life lock, which Close is about to take exclusively.
	close(s.bgStop)
	s.bgWG.Wait()
	s.life.Lock()
	defer s.life.Unlock()
	var errs []error
	if _, err := s.log.Flush(); err != nil {
		errs = append(errs, fmt.Errorf("store: final flush: %w", err))
	}
	close(s.disp.stop)
	<-s.disp.done
	caughtUp := s.disp.from.Load() >= s.log.MaxOffset()
	logErr := s.log.Err()
	if err := s.cq.Close(); err != nil {
		errs = append(errs, err)
		caughtUp = false
	} else {
		maxStore(&s.logicsTS, s.disp.lastTS.Load())
	}
	if s.idx != nil {
		if err := s.idx.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := s.log.Flush(); err == nil {
		maxStore(&s.physicTS, s.disp.lastTS.Load())
		s.advanceIndexTS()
	}
	if err := s.log.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := s.writeCheckpoint(); err != nil {
		errs = append(errs, err)
	}
	if err := s.ckpt.close(); err != nil {
		errs = append(errs, err)
	}
	if caughtUp && logErr == nil && len(errs) == 0 {
		if err := s.cfg.FS.Remove(AbortPath(s.cfg.Root)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("store: remove abort file: %w", err))
		} else if err := s.cfg.FS.SyncDir(s.cfg.Root); err != nil {
			errs = append(errs, err)
		}
	} else {
		s.cfg.Logger.Warn("store: closed with the abort file kept; the next open recovers abnormally",
			"dispatched", s.disp.from.Load(), "maxOffset", s.log.MaxOffset(), "logErr", logErr)
	}
	if s.ownsCache {
		s.cache.Close()
	}
	if s.lock != nil {
		if err := s.lock.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// abandon releases what a failed Open acquired.
func (s *Store) abandon() {
	if s.log != nil {
		_ = s.log.Close()
	}
	if s.cq != nil {
		_ = s.cq.Close()
	}
	if s.idx != nil {
		_ = s.idx.Close()
	}
	if s.ckpt != nil {
		_ = s.ckpt.close()
	}
	if s.ownsCache {
		s.cache.Close()
	}
	if s.lock != nil {
		_ = s.lock.Close()
	}
}

// Config returns the configuration the store runs with (defaults filled in).
func (s *Store) Config() Config { return s.cfg }

// Recovery describes what Open found and repaired.
func (s *Store) Recovery() RecoveryReport { return s.recovery }

// CommitLog exposes the commit log (probes, the broker's admin commands).
// Appending to it directly bypasses queue offsets and must not be done.
func (s *Store) CommitLog() *commitlog.Log { return s.log }

// SetMessageArrivingListener installs (nil: removes) the callback the
// dispatcher calls for every new consume-queue unit (long polling).
func (s *Store) SetMessageArrivingListener(fn func(topic string, queueID int32, maxOffset int64)) {
	if fn == nil {
		s.arriving.Store(nil)
		return
	}
	s.arriving.Store(&fn)
}

// IsOSPageCacheBusy reports whether the current append has held the commit
// log's append lock longer than osPageCacheBusyTimeOutMills (1 s): the
// broker then rejects sends with SYSTEM_BUSY.
func (s *Store) IsOSPageCacheBusy() bool {
	d := s.log.LockHeldFor()
	return d > commitlog.OSPageCacheBusyTimeout && d < 10_000_000*time.Millisecond
}

// IsDiskFull reports whether puts are refused for lack of disk space.
func (s *Store) IsDiskFull() bool { return s.diskFull.Load() }

// ReadCache returns the direct path's block cache (nil on other paths or
// when disabled).
func (s *Store) ReadCache() *iopath.BlockCache { return s.cache }

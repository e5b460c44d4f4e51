package index

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// FileInfo describes one index file's header.
type FileInfo struct {
	Name           string
	BeginTimestamp int64
	EndTimestamp   int64
	BeginPhyOffset int64
	EndPhyOffset   int64
	HashSlotCount  int32
	IndexCount     int32
	// Full: the file holds MaxIndexNum-1 entries and takes no more.
	Full bool
}

// Service is the index of <root>/index (RocketMQ IndexService). See the
// package doc for the concurrency contract.
type Service struct {
	fsys vfs.FS
	dir  string
	cfg  Config
	now  func() time.Time

	wmu      sync.Mutex // serializes writers; guards lastName, closed
	lastName string
	closed   bool
	isClosed atomic.Bool // closed, for readers

	mu    sync.RWMutex // guards files; queries hold it shared for their walk
	files []*file

	bg    sync.WaitGroup // background flushes of full files
	bgMu  sync.Mutex
	bgErr error // first background flush error, reported by Flush/Close

	// Full files are msynced in the order they filled (turns fullSeq,
	// fullNext under fullMu), so OnFileFull never reports a file while an
	// earlier one may still be volatile; after a failed msync nothing more
	// is reported.
	fullMu     sync.Mutex
	fullCond   *sync.Cond
	fullSeq    uint64 // next turn to hand out; guarded by wmu
	fullNext   uint64 // turn allowed to flush; guarded by fullMu
	fullFailed bool   // guarded by fullMu
}

// Open loads the index files under root/index, oldest first. Entries of the
// directory whose names are not 17 digits are ignored, empty files are
// removed, and a file of any other wrong size is an error.
func Open(fsys vfs.FS, root string, cfg Config) (*Service, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Service{fsys: fsys, dir: filepath.Join(root, "index"), cfg: cfg, now: time.Now}
	s.fullCond = sync.NewCond(&s.fullMu)
	entries, err := fsys.ReadDir(s.dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("index: read dir %s: %w", s.dir, err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && validName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	fail := func(err error) (*Service, error) {
		for _, f := range s.files {
			_ = f.release()
		}
		return nil, err
	}
	for _, name := range names {
		// A crash between creating a file and preallocating it leaves it
		// empty: remove it, as MappedFileQueue does with an empty last file.
		path := filepath.Join(s.dir, name)
		if fi, err := fsys.Stat(path); err == nil && fi.Size() == 0 {
			if err := fsys.Remove(path); err != nil {
				return fail(fmt.Errorf("index: remove empty file %s: %w", path, err))
			}
			continue
		}
		x, err := openFile(fsys, s.dir, name, cfg)
		if err != nil {
			return fail(err)
		}
		s.files = append(s.files, x)
		s.lastName = name
	}
	return s, nil
}

func validName(name string) bool {
	if len(name) != 17 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return false
		}
	}
	return true
}

// timeName is UtilAll.timeMillisToHumanString: yyyyMMddHHmmssSSS, local time.
func timeName(t time.Time) string {
	return t.Format("20060102150405") + fmt.Sprintf("%03d", t.Nanosecond()/int(time.Millisecond))
}

func parseTimeName(name string) (time.Time, error) {
	t, err := time.ParseInLocation("20060102150405", name[:14], time.Local)
	if err != nil {
		return time.Time{}, err
	}
	ms, err := strconv.Atoi(name[14:])
	if err != nil {
		return time.Time{}, err
	}
	return t.Add(time.Duration(ms) * time.Millisecond), nil
}

// nextNameLocked names a new file by the current time, bumped past the last
// file's name. REQUIRES: s.wmu held.
func (s *Service) nextNameLocked() string {
	name := timeName(s.now())
	if name > s.lastName {
		return name
	}
	if t, err := parseTimeName(s.lastName); err == nil {
		if bumped := timeName(t.Add(time.Millisecond)); bumped > s.lastName {
			return bumped
		}
	}
	// Unparseable or unrepresentable previous name: count up numerically.
	v, _ := strconv.ParseInt(s.lastName, 10, 64)
	return fmt.Sprintf("%017d", v+1)
}

// Files describes the index files, oldest first.
func (s *Service) Files() []FileInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]FileInfo, len(s.files))
	for i, x := range s.files {
		out[i] = FileInfo{
			Name:           x.name,
			BeginTimestamp: x.beginTS.Load(),
			EndTimestamp:   x.endTS.Load(),
			BeginPhyOffset: x.beginPhy.Load(),
			EndPhyOffset:   x.endPhy.Load(),
			HashSlotCount:  x.slotCount.Load(),
			IndexCount:     x.count.Load(),
			Full:           x.full(),
		}
	}
	return out
}

// Put indexes the message at phyOffset stored at storeTimestamp under each
// non-empty key (the caller passes the UNIQ_KEY and each space-separated
// KEYS entry; ROLLBACK transactions are the caller's to skip). A record
// below the current file's endPhyOffset is a re-dispatch and is skipped
// (RocketMQ buildIndex); the record at it gets only the keys the newest two
// files lack. When the current file fills, Put rolls to a new one
// (see the package doc).
func (s *Service) Put(topic string, keys []string, phyOffset, storeTimestamp int64) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return ErrClosed
	}
	cur, err := s.currentLocked()
	if err != nil {
		return err
	}
	end := cur.endPhy.Load()
	if phyOffset < end {
		return nil
	}
	// The record the index ends at may be indexed in part (its keys
	// can straddle a roll, and the newer file be lost to a crash):
	// recovery dispatches it again and only its missing keys are added.
	boundary := phyOffset == end
	for _, key := range keys {
		if key == "" {
			continue
		}
		h := keyHash(topic, key)
		if boundary && s.indexedLocked(h, phyOffset) {
			continue
		}
		if cur.put(h, phyOffset, storeTimestamp) {
			continue
		}
		if cur, err = s.rollLocked(cur); err != nil {
			return err
		}
		if !cur.put(h, phyOffset, storeTimestamp) {
			return fmt.Errorf("index: new file %s refused an entry", cur.path)
		}
	}
	return nil
}

// indexedLocked reports whether the newest two files hold an entry of hash
// for phy (a record's keys span at most one roll). REQUIRES: s.wmu held.
func (s *Service) indexedLocked(hash int32, phy int64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i := len(s.files) - 1; i >= 0 && i >= len(s.files)-2; i-- {
		if s.files[i].has(hash, phy) {
			return true
		}
	}
	return false
}

// currentLocked returns the file to write, creating or rolling as needed.
// REQUIRES: s.wmu held.
func (s *Service) currentLocked() (*file, error) {
	s.mu.RLock()
	var last *file
	if len(s.files) > 0 {
		last = s.files[len(s.files)-1]
	}
	s.mu.RUnlock()
	if last != nil && !last.full() {
		return last, nil
	}
	return s.rollLocked(last)
}

// rollLocked creates a new file seeded from prev (nil: unseeded) and, if
// prev is full, msyncs it in the background and reports it through
// OnFileFull. REQUIRES: s.wmu held.
func (s *Service) rollLocked(prev *file) (*file, error) {
	var seedPhy, seedTS int64
	if prev != nil {
		seedPhy, seedTS = prev.endPhy.Load(), prev.endTS.Load()
	}
	name := s.nextNameLocked()
	x, err := createFile(s.fsys, s.dir, name, s.cfg, seedPhy, seedTS)
	if err != nil {
		return nil, err
	}
	s.lastName = name
	s.mu.Lock()
	s.files = append(s.files, x)
	s.mu.Unlock()
	if prev != nil && prev.full() && prev.acquire() {
		s.bg.Add(1)
		turn := s.fullSeq
		s.fullSeq++
		go s.flushFull(prev, turn)
	}
	return x, nil
}

// flushFull msyncs a full file and reports its endTimestamp, in turn: a
// report means this file and every earlier full file are durable (the
// checkpoint's indexMsgTimestamp relies on it).
func (s *Service) flushFull(x *file, turn uint64) {
	defer s.bg.Done()
	s.fullMu.Lock()
	for s.fullNext != turn {
		s.fullCond.Wait()
	}
	s.fullMu.Unlock()
	err := x.flush()
	endTS := x.endTS.Load()
	err = errors.Join(err, x.release())
	s.fullMu.Lock()
	if err != nil {
		s.fullFailed = true
	}
	report := !s.fullFailed
	s.fullMu.Unlock()
	if err != nil {
		s.bgMu.Lock()
		s.bgErr = errors.Join(s.bgErr, err)
		s.bgMu.Unlock()
	}
	if report && s.cfg.OnFileFull != nil {
		s.cfg.OnFileFull(endTS)
	}
	s.fullMu.Lock()
	s.fullNext++
	s.fullCond.Broadcast()
	s.fullMu.Unlock()
}

func (s *Service) takeBgErr() error {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	err := s.bgErr
	s.bgErr = nil
	return err
}

// Query returns the commit-log offsets of messages whose "topic#key" hash
// matches and whose store time (second precision within a file) lies in
// [begin, end], newest file first, at most min(maxNum, MaxQueryNum); plus
// the newest file's endTimestamp and endPhyOffset (RocketMQ queryOffset).
// Files are skipped unless their time range overlaps [begin, end]; the walk
// stops after a file that begins before begin. Hash collisions are not
// resolved: callers re-check the keys of the records.
func (s *Service) Query(topic, key string, maxNum int, begin, end int64) (offsets []int64, lastUpdateTimestamp, lastUpdatePhyOffset int64, err error) {
	maxNum = min(maxNum, s.cfg.MaxQueryNum)
	h := keyHash(topic, key)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.isClosed.Load() {
		return nil, 0, 0, ErrClosed
	}
	offsets = make([]int64, 0, max(maxNum, 0))
	for i := len(s.files) - 1; i >= 0 && len(offsets) < maxNum; i-- {
		x := s.files[i]
		if i == len(s.files)-1 {
			lastUpdateTimestamp, lastUpdatePhyOffset = x.endTS.Load(), x.endPhy.Load()
		}
		if x.timeMatched(begin, end) {
			offsets = x.selectPhy(offsets, h, maxNum, begin, end)
		}
		if x.beginTS.Load() < begin {
			break
		}
	}
	return offsets, lastUpdateTimestamp, lastUpdatePhyOffset, nil
}

// Flush msyncs every file written since its last flush and reports any
// background flush error.
func (s *Service) Flush() error {
	s.mu.RLock()
	var held []*file
	for _, x := range s.files {
		if x.acquire() {
			held = append(held, x)
		}
	}
	s.mu.RUnlock()
	var errs []error
	for _, x := range held {
		errs = append(errs, x.flush(), x.release())
	}
	errs = append(errs, s.takeBgErr())
	return errors.Join(errs...)
}

// Close waits for background flushes, flushes every file and unmaps them.
func (s *Service) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.isClosed.Store(true)
	s.bg.Wait()
	err := s.Flush()
	s.mu.Lock()
	files := s.files
	s.files = nil
	s.mu.Unlock()
	errs := []error{err}
	for _, x := range files {
		errs = append(errs, x.release())
	}
	return errors.Join(errs...)
}

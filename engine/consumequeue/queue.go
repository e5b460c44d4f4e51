package consumequeue

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// Boundary chooses which end of a run of equal timestamps SearchByTime returns
// (RocketMQ BoundaryType).
type Boundary int

// The boundaries.
const (
	Lower Boundary = iota // first unit stored at or after the time
	Upper                 // last unit stored at or before the time
)

// QueueStats counts puts that did not simply append.
type QueueStats struct {
	DuplicatePuts int64 // ignored: record end <= MaxPhyOffset, or offset already written
	GapPuts       int64 // accepted ahead of the write position; the gap was blank-filled
}

// Queue is the consume queue of one (topic, queueId). See the package doc for
// the concurrency contract.
type Queue struct {
	fsys     vfs.FS
	dir      string
	topic    string
	queueID  int32
	fileSize int64
	units    int64 // units per file

	segs       atomic.Pointer[[]*segment] // immutable snapshot, sorted by start
	writePos   atomic.Int64               // logical byte offset just past the last published unit
	flushedPos atomic.Int64               // logical byte offset known durable
	minLogic   atomic.Int64               // logical byte offset of the first valid unit
	maxPhy     atomic.Int64               // end of the last non-blank unit's record, -1 if none
	minPhy     atomic.Int64               // commit-log min offset last given to SetMinPhy

	dupPuts atomic.Int64
	gapPuts atomic.Int64

	flushMu sync.Mutex // serializes Flush; taken before mu where both are needed

	mu        sync.Mutex // serializes mutators (Put, Truncate, Delete, SetMinPhy, Recover, Close)
	recovered bool       // guarded by mu
	closed    bool       // guarded by mu
	scratch   [UnitSize]byte
	blanks    []byte // lazily built run of blank units, guarded by mu
	runBuf    []byte // PutRun's encode buffer, guarded by mu
}

// QueueDir is the directory of one queue under the store root.
func QueueDir(root, topic string, queueID int32) string {
	return filepath.Join(root, "consumequeue", topic, strconv.Itoa(int(queueID)))
}

func validTopic(topic string) bool {
	if topic == "" || topic == "." || topic == ".." {
		return false
	}
	return !strings.ContainsAny(topic, "/\\\x00")
}

// OpenQueue loads the queue (topic, queueID) under root/consumequeue. A queue
// with files on disk must be recovered (Recover) before it is written or
// cleaned; a queue without files is ready at once.
func OpenQueue(fsys vfs.FS, root, topic string, queueID int32, cfg Config) (*Queue, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if !validTopic(topic) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidTopic, topic)
	}
	q := &Queue{
		fsys:     fsys,
		dir:      QueueDir(root, topic, queueID),
		topic:    topic,
		queueID:  queueID,
		fileSize: cfg.fileSize(),
		units:    int64(cfg.UnitsPerFile),
	}
	segs, err := loadSegments(fsys, q.dir, q.fileSize)
	if err != nil {
		return nil, err
	}
	q.segs.Store(&segs)
	q.maxPhy.Store(-1)
	if len(segs) == 0 {
		q.recovered = true
		return q, nil
	}
	// As RocketMQ's load: every file counts as full until Recover.
	end := segs[len(segs)-1].start + q.fileSize
	q.writePos.Store(end)
	q.flushedPos.Store(end)
	q.minLogic.Store(segs[0].start)
	return q, nil
}

// Topic is the queue's topic.
func (q *Queue) Topic() string { return q.topic }

// QueueID is the queue's id.
func (q *Queue) QueueID() int32 { return q.queueID }

// Dir is the queue's directory.
func (q *Queue) Dir() string { return q.dir }

// MinOffset is the first queue offset whose unit references a live record
// (RocketMQ minOffsetInQueue = minLogicOffset / 20).
func (q *Queue) MinOffset() int64 { return q.minLogic.Load() / UnitSize }

// MaxOffset is the next queue offset to be written (maxOffsetInQueue).
func (q *Queue) MaxOffset() int64 { return q.writePos.Load() / UnitSize }

// MaxPhyOffset is the commit-log offset just past the record of the last
// non-blank unit, or -1 when the queue has none (or before Recover).
func (q *Queue) MaxPhyOffset() int64 { return q.maxPhy.Load() }

// FlushedOffset is the queue offset below which units are known durable.
func (q *Queue) FlushedOffset() int64 { return q.flushedPos.Load() / UnitSize }

// Stats returns counters of non-append puts.
func (q *Queue) Stats() QueueStats {
	return QueueStats{DuplicatePuts: q.dupPuts.Load(), GapPuts: q.gapPuts.Load()}
}

// RollNextFile returns the first queue offset of the file after the one that
// holds offset (RocketMQ rollNextFile), where a reader continues after
// ErrRemoved.
func (q *Queue) RollNextFile(offset int64) int64 {
	return offset + q.units - offset%q.units
}

// Files returns the number of segment files.
func (q *Queue) Files() int { return len(*q.segs.Load()) }

func (q *Queue) snapshot() []*segment { return *q.segs.Load() }

// setSegments publishes a new segment list. REQUIRES: q.mu held.
func (q *Queue) setSegments(segs []*segment) { q.segs.Store(&segs) }

// checkWritable reports ErrClosed or ErrNotRecovered. REQUIRES: q.mu held.
func (q *Queue) checkWritable() error {
	if q.closed {
		return ErrClosed
	}
	if !q.recovered {
		return ErrNotRecovered
	}
	return nil
}

// Close flushes every unit written and closes the files. Readers still
// holding a file keep it open until they finish.
func (q *Queue) Close() error {
	q.flushMu.Lock()
	defer q.flushMu.Unlock()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	var errs []error
	if q.recovered {
		errs = append(errs, q.flushAllLocked())
	}
	q.closed = true
	for _, s := range q.snapshot() {
		errs = append(errs, s.release())
	}
	q.setSegments(nil)
	return errors.Join(errs...)
}

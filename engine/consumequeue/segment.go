package consumequeue

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// segment is one consume-queue file. Its file stays open while anyone holds
// a reference: the queue holds one (the owner reference) until the file is
// removed or the queue closed; readers and the flusher take one around each
// use.
type segment struct {
	start int64 // logical byte offset of the file's first unit
	path  string
	f     vfs.File

	refs atomic.Int64 // owner reference + in-flight users; file closed at 0

	// Store timestamps of the first unit at/after the queue's min offset and
	// of the last unit of a full file, cached by SearchByTime (-1 unknown).
	startTS atomic.Int64
	stopTS  atomic.Int64
}

func newSegment(start int64, path string, f vfs.File) *segment {
	s := &segment{start: start, path: path, f: f}
	s.refs.Store(1)
	s.startTS.Store(-1)
	s.stopTS.Store(-1)
	return s
}

// acquire takes a reference; false if the file is already closed.
func (s *segment) acquire() bool {
	for {
		r := s.refs.Load()
		if r <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// release drops a reference and closes the file when it was the last one.
func (s *segment) release() error {
	if s.refs.Add(-1) == 0 {
		return s.f.Close()
	}
	return nil
}

// fileName is RocketMQ's UtilAll.offset2FileName.
func fileName(offset int64) string { return fmt.Sprintf("%020d", offset) }

func parseFileName(name string) (int64, bool) {
	if len(name) != 20 {
		return 0, false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(name, 10, 64)
	return v, err == nil
}

// loadSegments opens every segment file in dir following MappedFileQueue.doLoad.
func loadSegments(fsys vfs.FS, dir string, fileSize int64) ([]*segment, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("consumequeue: read dir %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var segs []*segment
	fail := func(err error) ([]*segment, error) {
		for _, s := range segs {
			_ = s.release()
		}
		return nil, err
	}
	for i, name := range names {
		path := filepath.Join(dir, name)
		start, ok := parseFileName(name)
		if !ok || start%fileSize != 0 {
			return fail(fmt.Errorf("%w: %s", ErrFileName, path))
		}
		fi, err := fsys.Stat(path)
		if err != nil {
			return fail(fmt.Errorf("consumequeue: stat %s: %w", path, err))
		}
		if fi.Size() == 0 && i == len(names)-1 {
			if err := fsys.Remove(path); err != nil {
				return fail(fmt.Errorf("consumequeue: remove empty last file %s: %w", path, err))
			}
			continue
		}
		if fi.Size() != fileSize {
			return fail(fmt.Errorf("%w: %s has %d bytes, want %d", ErrFileSize, path, fi.Size(), fileSize))
		}
		f, err := fsys.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return fail(fmt.Errorf("consumequeue: open %s: %w", path, err))
		}
		segs = append(segs, newSegment(start, path, f))
	}
	return segs, nil
}

// createSegment creates (or replaces) the file starting at start,
// preallocated to fileSize, and makes its name durable.
func createSegment(fsys vfs.FS, dir string, start, fileSize int64) (*segment, error) {
	// The topic and queue directories are made durable too (their
	// parents fsynced), or a power cut loses the whole queue.
	if err := vfs.MkdirAllDurable(fsys, dir, 0o755); err != nil {
		return nil, fmt.Errorf("consumequeue: mkdir %s: %w", dir, err)
	}
	path := filepath.Join(dir, fileName(start))
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("consumequeue: create %s: %w", path, err)
	}
	if err := f.Allocate(fileSize); err != nil {
		_ = f.Close()
		_ = fsys.Remove(path)
		return nil, fmt.Errorf("consumequeue: allocate %s: %w", path, err)
	}
	// The size is metadata fdatasync makes durable: without it a power
	// cut can leave a zero-length file that is not the last one, which
	// fails the next open.
	if err := f.Datasync(); err != nil {
		_ = f.Close()
		_ = fsys.Remove(path)
		return nil, fmt.Errorf("consumequeue: sync %s: %w", path, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		_ = f.Close()
		_ = fsys.Remove(path)
		return nil, fmt.Errorf("consumequeue: sync dir %s: %w", dir, err)
	}
	return newSegment(start, path, f), nil
}

// findSegment returns the segment whose byte range holds pos, or nil.
// segs is sorted by start; files need not be contiguous.
func findSegment(segs []*segment, pos, fileSize int64) *segment {
	i := sort.Search(len(segs), func(i int) bool { return segs[i].start+fileSize > pos })
	if i < len(segs) && segs[i].start <= pos {
		return segs[i]
	}
	return nil
}

package commitlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/segment"
	"github.com/brokerlab/brokerlab/engine/vfs"
)

// OpenOptions control how Open finds the end of the log.
type OpenOptions struct {
	// ScanFrom is the global offset whose segment the scan starts at (the
	// checkpoint's segment after a crash). Negative: scan only the last two
	// segments (a clean reopen: the earlier ones are full by construction).
	ScanFrom int64
	// OnRecord, if set, is called for every valid record the scan passes, in
	// log order (recovery re-dispatches them to consume queues and index).
	// rec's slices alias a scan buffer and are valid only during the call.
	OnRecord func(off int64, rec record.Record) error
}

// OpenReport describes what Open found.
type OpenReport struct {
	Segments        int   // segments after open
	ScannedBytes    int64 // bytes of records verified
	Records         int64 // records verified
	End             int64 // the recovered write position
	ZeroedBytes     int64 // garbage after End that was zeroed
	RemovedSegments int   // segments past End that were deleted
	// Corruption is the invalid record the scan stopped at (a torn or
	// corrupt tail), nil if the log ended cleanly.
	Corruption *CorruptionError
}

// Open opens (creating if needed) the log in cfg.Dir with a clean-reopen
// scan of the last two segments.
func Open(cfg Config) (*Log, error) { return OpenWith(cfg, OpenOptions{ScanFrom: -1}) }

// OpenWith opens the log and finds its end by scanning from opts.ScanFrom:
// every record is verified (magic, sizes, body CRC when cfg.CheckCRC); the
// scan stops at the first invalid record, zeroes the garbage after it in
// that segment and deletes later segments. Bytes past the end are never
// served to a reader.
func OpenWith(cfg Config, opts OpenOptions) (*Log, error) {
	if err := fillDefaults(&cfg); err != nil {
		return nil, err
	}
	dir := SegmentDir(cfg.Dir)
	if err := cfg.FS.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("commitlog: create %s: %w", dir, err)
	}
	starts, err := listSegments(cfg.FS, dir)
	if err != nil {
		return nil, err
	}
	rep, ends, err := scan(cfg, dir, starts, opts)
	if err != nil {
		return nil, err
	}
	q, err := segment.Open(segment.Config{
		FS: cfg.FS, Dir: dir, Size: cfg.SegmentSize, Path: cfg.Path, IO: cfg.IO, PreallocateNext: cfg.PreallocateNext,
	}, func(start int64) int64 {
		if e, ok := ends[start]; ok {
			return e
		}
		return cfg.SegmentSize
	})
	if err != nil {
		return nil, fmt.Errorf("commitlog: %w", err)
	}
	l := &Log{cfg: cfg, q: q}
	l.wrote.Store(rep.End)
	l.flushed.Store(rep.End)
	l.policy, err = flush.New(l, rep.End, cfg.Flush)
	if err != nil {
		q.Close()
		return nil, err
	}
	rep.Segments = len(q.Segments())
	l.recovered = rep
	return l, nil
}

// Report returns what Open found.
func (l *Log) Report() OpenReport { return l.recovered }

func fillDefaults(cfg *Config) error {
	d := DefaultConfig(cfg.Dir)
	if cfg.Dir == "" {
		return errors.New("commitlog: Config.Dir is empty")
	}
	if cfg.FS == nil {
		cfg.FS = d.FS
	}
	if cfg.Path == "" {
		cfg.Path = d.Path
	}
	if cfg.Flush.Kind == "" {
		cfg.Flush = d.Flush
	}
	if cfg.SegmentSize <= 0 {
		cfg.SegmentSize = d.SegmentSize
	}
	if cfg.SegmentSize < 4096 || cfg.SegmentSize%4096 != 0 {
		return fmt.Errorf("commitlog: segment size %d must be a positive multiple of 4096", cfg.SegmentSize)
	}
	if cfg.MaxBodySize <= 0 {
		cfg.MaxBodySize = d.MaxBodySize
	}
	if cfg.BusyTimeout == 0 {
		cfg.BusyTimeout = OSPageCacheBusyTimeout
	}
	if !cfg.StoreHost.IsValid() {
		cfg.StoreHost = d.StoreHost
	}
	if cfg.IO.CommitInterval <= 0 {
		cfg.IO.CommitInterval = d.IO.CommitInterval
	}
	if cfg.IO.CommitLeastPages <= 0 {
		cfg.IO.CommitLeastPages = d.IO.CommitLeastPages
	}
	if cfg.Flush.Kind.DurableWrites() {
		// dsync: the write path makes every append durable by itself.
		if !iopath.SupportsDSync(cfg.Path) {
			return fmt.Errorf("commitlog: flush policy %s with write path %s: %w", cfg.Flush.Kind, cfg.Path, iopath.ErrNoDSync)
		}
		cfg.IO.DSync = true
	}
	return nil
}

func listSegments(fs vfs.FS, dir string) ([]int64, error) {
	ents, err := fs.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("commitlog: read %s: %w", dir, err)
	}
	var starts []int64
	for _, e := range ents {
		if st, ok := segment.ParseName(e.Name()); ok && !e.IsDir() {
			starts = append(starts, st)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	return starts, nil
}

// scan walks the segments from the start segment, verifying records, and
// returns the write position of each scanned segment. It repairs the tail:
// garbage after the end is zeroed and segments past the end are removed.
func scan(cfg Config, dir string, starts []int64, opts OpenOptions) (OpenReport, map[int64]int64, error) {
	var rep OpenReport
	ends := map[int64]int64{}
	if len(starts) == 0 {
		return rep, ends, nil
	}
	from := max(0, len(starts)-2)
	if opts.ScanFrom >= 0 {
		from = 0
		for i, st := range starts {
			if st <= opts.ScanFrom {
				from = i
			}
		}
	}
	rep.End = starts[from]
	maxRec := cfg.MaxBodySize + 64<<10
	buf := make([]byte, 0, 4<<20+maxRec)
	active := from
	for i := from; i < len(starts); i++ {
		path := filepath.Join(dir, segment.Name(starts[i]))
		res, err := scanSegment(cfg, path, starts[i], buf, maxRec, opts.OnRecord)
		if err != nil {
			return rep, nil, err
		}
		active = i
		rep.ScannedBytes += res.end
		rep.Records += res.records
		ends[starts[i]] = res.end
		rep.End = starts[i] + res.end
		if res.blank && i+1 < len(starts) && starts[i+1] == starts[i]+cfg.SegmentSize {
			continue // full segment: the log goes on in the next one
		}
		// Zero what follows the last valid record, whether the scan stopped
		// at a corrupt record or at zeros: behind a hole (a page that never
		// reached the disk) older or later records may survive, and they
		// must not reappear once new appends fill the hole.
		rep.Corruption = res.corrupt
		if !res.blank {
			z, err := zeroTail(cfg, path, res.end, maxRec)
			if err != nil {
				return rep, nil, err
			}
			rep.ZeroedBytes = z
		}
		break
	}
	// Everything past the active segment is past the end (an unused spare,
	// or data written after a torn record): RocketMQ truncateDirtyFiles.
	for _, st := range starts[active+1:] {
		p := filepath.Join(dir, segment.Name(st))
		if err := cfg.FS.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return rep, nil, fmt.Errorf("commitlog: remove %s past the end: %w", p, err)
		}
		rep.RemovedSegments++
	}
	if rep.RemovedSegments > 0 {
		if err := cfg.FS.SyncDir(dir); err != nil {
			return rep, nil, err
		}
	}
	return rep, ends, nil
}

type segScan struct {
	end     int64 // position after the last valid record (segment size if blank)
	records int64
	blank   bool
	corrupt *CorruptionError
}

// scanSegment verifies records from the start of one segment file.
func scanSegment(cfg Config, path string, start int64, buf []byte, maxRec int, onRecord func(int64, record.Record) error) (segScan, error) {
	var res segScan
	f, err := cfg.FS.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return res, fmt.Errorf("commitlog: open %s for scan: %w", path, err)
	}
	defer f.Close()
	size := cfg.SegmentSize
	var winOff int64 // file offset of buf[0]
	buf = buf[:0]
	pos := int64(0)
	fill := func(need int) error { // ensure buf covers [pos, pos+need)
		if pos >= winOff && pos+int64(need) <= winOff+int64(len(buf)) {
			return nil
		}
		n := min(int64(cap(buf)), size-pos)
		buf = buf[:n]
		got, err := f.ReadAt(buf, pos)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("commitlog: read %s at %d: %w", path, pos, err)
		}
		buf = buf[:got]
		winOff = pos
		return nil
	}
	for pos < size {
		if size-pos < 8 {
			break
		}
		if err := fill(8); err != nil {
			return res, err
		}
		if int64(len(buf))-(pos-winOff) < 8 {
			break
		}
		w := buf[pos-winOff:]
		total := int32(binary.BigEndian.Uint32(w[:4]))
		magic := int32(binary.BigEndian.Uint32(w[4:8]))
		if total == 0 && magic == 0 {
			break // clean end: zeros
		}
		if magic == record.MagicBlank {
			if int64(total) != size-pos {
				res.corrupt = &CorruptionError{Path: path, Offset: start + pos, Err: fmt.Errorf("blank record of %d bytes at position %d, want %d", total, pos, size-pos)}
				break
			}
			res.blank = true
			res.end = size
			return res, nil
		}
		if total < 8 || int(total) > maxRec || int64(total) > size-pos {
			res.corrupt = &CorruptionError{Path: path, Offset: start + pos, Err: fmt.Errorf("record size %d out of range", total)}
			break
		}
		if err := fill(int(total)); err != nil {
			return res, err
		}
		w = buf[pos-winOff:]
		if int64(len(w)) < int64(total) {
			res.corrupt = &CorruptionError{Path: path, Offset: start + pos, Err: fmt.Errorf("record of %d bytes truncated by end of file", total)}
			break
		}
		rec, err := record.Decode(w[:total], cfg.CheckCRC)
		if err != nil {
			res.corrupt = &CorruptionError{Path: path, Offset: start + pos, Err: err}
			break
		}
		if rec.PhysicalOffset != start+pos {
			res.corrupt = &CorruptionError{Path: path, Offset: start + pos, Err: fmt.Errorf("record says physical offset %d", rec.PhysicalOffset)}
			break
		}
		if onRecord != nil {
			if err := onRecord(start+pos, rec); err != nil {
				return res, fmt.Errorf("commitlog: dispatch record at %d: %w", start+pos, err)
			}
		}
		pos += int64(total)
		res.records++
	}
	res.end = pos
	return res, nil
}

// zeroTailQuiet is how long a run of zeros must be for zeroTail to take it
// as the end of everything ever written to the segment.
const zeroTailQuiet = 8 << 20

// zeroTail overwrites garbage after end with zeros, up to the first run of
// zeros longer than both any record and zeroTailQuiet: bounded work at every
// open (a clean tail costs one read of that run), yet a hole left by a lost
// page, or a torn record, does not hide the records written beyond it.
func zeroTail(cfg Config, path string, end int64, maxRec int) (int64, error) {
	f, err := cfg.FS.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("commitlog: open %s to zero its tail: %w", path, err)
	}
	defer f.Close()
	const chunk = 1 << 20
	buf := make([]byte, chunk)
	zero := make([]byte, chunk)
	var zeroed, zeroRun int64
	quiet := max(int64(maxRec), zeroTailQuiet)
	for pos := end; pos < cfg.SegmentSize && zeroRun <= quiet; {
		n := min(int64(chunk), cfg.SegmentSize-pos)
		got, err := f.ReadAt(buf[:n], pos)
		if err != nil && !errors.Is(err, io.EOF) {
			return zeroed, fmt.Errorf("commitlog: read %s at %d: %w", path, pos, err)
		}
		clean := true
		for _, b := range buf[:got] {
			if b != 0 {
				clean = false
				break
			}
		}
		if clean {
			zeroRun += int64(got)
		} else {
			zeroRun = 0
			if _, err := f.WriteAt(zero[:got], pos); err != nil {
				return zeroed, fmt.Errorf("commitlog: zero %s at %d: %w", path, pos, err)
			}
			zeroed += int64(got)
		}
		if got == 0 {
			break
		}
		pos += int64(got)
	}
	if zeroed > 0 {
		if err := f.Datasync(); err != nil {
			return zeroed, fmt.Errorf("commitlog: sync %s after zeroing: %w", path, err)
		}
	}
	return zeroed, nil
}

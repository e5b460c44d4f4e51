// Package consumequeue implements RocketMQ's consume queue (ConsumeQueue): a
// per-(topic, queueId) array of fixed-size units that maps a queue offset to
// the commit-log record holding that message.
//
// # On-disk format
//
// Directory <root>/consumequeue/<topic>/<queueId>/ holds segment files, each
// UnitsPerFile×20 bytes (default 300,000 units = 6,000,000 bytes), preallocated
// at full size, named by their start byte offset in the queue's logical byte
// space (queueOffset×20) as 20 zero-padded decimal digits:
//
//	00000000000000000000  00000000000006000000  00000000000012000000 ...
//
// Unit N lives in the file starting at N×20 − (N×20 mod fileSize), at byte
// N×20 mod fileSize. A unit is 20 bytes, big-endian:
//
//	0               8        12               20
//	+---------------+--------+----------------+
//	| phyOffset i64 | size   | tagsCode i64   |
//	|               | i32    |                |
//	+---------------+--------+----------------+
//
// phyOffset/size locate the commit-log record (TOTALSIZE); tagsCode is the
// sign-extended Java String.hashCode of the TAGS property (0 without tags).
// A blank unit (0, MaxInt32, 0) pads the front of a queue's first file when
// that file is created for a non-zero first offset (RocketMQ fillPreBlank),
// and — a brokerlab extension — pads a gap when a unit arrives ahead of the
// write position (RocketMQ logs "[BUG]logic queue order maybe wrong" and
// appends at the wrong place instead). Readers must skip blank units
// (Unit.IsBlank). An all-zero unit (phyOffset < 0 or size <= 0) marks the end
// of data: scans stop there.
//
// # Recovery
//
// Open loads the files (sorted by name; a zero-length last file is removed; a
// file of any other wrong size is an error) as if every file were full.
// Recover then scans units from the third-from-last file while
// phyOffset >= 0 && size > 0, moving to the next file only when the current
// one was entirely valid; the write position becomes the end of the last
// valid unit, later files are deleted and the bytes after the write position
// in its file are zeroed (RocketMQ leaves them, brokerlab zeroes them so a
// later crash cannot resurrect stale units). TruncateFromPhy is RocketMQ's
// truncateDirtyLogicFiles: after commit-log recovery, units referencing
// bytes at or beyond the commit log's end are cut (and zeroed), whole
// trailing files deleted.
//
// Writes use pwrite (File.WriteAt, RocketMQ's default
// putConsumeQueueDataByFileChannel=true); reads use pread; Flush uses
// fdatasync, one file per call, with RocketMQ's least-pages rule.
//
// # Concurrency
//
// Queue: Put is meant for one dispatcher goroutine (it is serialized
// internally, so extra callers are safe but see each other's ordering).
// TruncateFromPhy, DeleteBelowPhy, SetMinPhy, Recover and Close are
// serialized with Put by the same mutex. Flush runs under its own mutex and
// does not block Put while it fdatasyncs. Get, Read, MinOffset, MaxOffset,
// MaxPhyOffset and SearchByTime may be called from any number of goroutines
// concurrently with all of the above and take no lock: a unit is written
// before the write position that covers it is published (atomic store), and
// readers only read below the published position, so they never see a
// partially written unit. A file removed while a reader uses it stays open
// until the reader releases it (reference count); a reader that looks for a
// removed file gets ErrRemoved.
//
// Store: Queue, Queues and every per-queue method may be called
// concurrently; the map of queues is guarded by a RWMutex.
package consumequeue

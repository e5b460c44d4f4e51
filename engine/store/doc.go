// Package store is RocketMQ's DefaultMessageStore: it puts messages into the
// commit log with queue offsets assigned at put time, dispatches the log into
// consume queues and the key index (ReputMessageService), serves pulls,
// lookups and queries, checkpoints, recovers after a crash, cleans expired
// files, and keeps the broker's metadata files (ReadConfigFile and
// WriteConfigFile). It is not the owner of topic configs or consumer
// offsets: those tables are the broker's (engine/broker/meta).
//
// # On-disk layout (rocketmq-store.md §3.2)
//
//	<root>/
//	  commitlog/<20-digit start offset>      records (package commitlog)
//	  consumequeue/<topic>/<queueId>/<20-digit>  20-byte units (package consumequeue)
//	  index/<yyyyMMddHHmmssSSS>               key index (package index)
//	  checkpoint                              4096 bytes, big-endian int64s:
//	      0 physicMsgTimestamp   8 logicsMsgTimestamp   16 indexMsgTimestamp
//	     24 masterFlushedOffset 32 confirmPhyOffset     (rest zero)
//	  abort                                   the PID while open; removed by a clean Close
//	  lock                                    locked while open (fcntl, byte 0)
//	  config/<name>                           the broker's files (topics.json, consumerOffset.json, ...)
//	  config/deletedTopics.json               DeletedTopicsFile
//	  config/*.bak                            the previous version of each JSON file
//
// JSON files are replaced atomically: write name.tmp and fdatasync it, rename
// name → name.bak, rename name.tmp → name, fsync the directory; a reader
// falls back to name.bak.
// The checkpoint page is rewritten and fdatasynced every CheckpointInterval
// (1 s), after an index file fills, and at Close.
//
// # Put
//
// Put and PutBatch take the message's "topic-queueId" stripe lock (32
// stripes), read the next queue offset from the in-memory queue table,
// append the record(s) to the commit log and advance the table, then release
// the lock and wait as the flush policy requires (commitlog
// AppendBatchNoWait, then Commit), so the queue lock covers only the append,
// as RocketMQ's topicQueueLock does, and producers of one queue still share
// group commits. Under sync the commit log flushes under its append lock:
// one flush per append. Messages without UNIQ_KEY get one. PREPARED
// and ROLLBACK transaction messages get queue offset 0 and no consume-queue
// unit. Puts are refused with SERVICE_NOT_AVAILABLE after Close and while the
// disk is full; the commit log refuses an append that waited over 1 s for
// its lock with OS_PAGE_CACHE_BUSY.
//
// # Dispatch
//
// One goroutine (woken by puts, else every ReputInterval) reads the commit
// log from reputFromOffset up to the confirm offset — the flushed offset under
// sync and group flush (consumers see only durable records), the written end
// under async — and for each record appends the consume-queue unit (normal
// and COMMIT messages), indexes UNIQ_KEY and each KEYS entry (all but
// ROLLBACK), and calls the arriving listener with the queue's new max offset.
// The index is best effort, as in RocketMQ: a failed index write (an index
// file whose preallocation does not fit the disk) is logged and counted
// (Stats.IndexErrors, IndexSkippedRecords), records go on to their consume
// queues without index entries, and the index is tried again a second
// later. A consume-queue write that fails stalls dispatch (retried every
// ReputInterval, Stats.DispatchErrors).
//
// # Recovery (rocketmq-store.md §7)
//
// Open loads and recovers the consume queues, opens the index, and:
//   - after a clean Close (no abort file) opens the commit log scanning only
//     its last two segments;
//   - after a crash (abort file present) deletes index files newer than the
//     checkpoint's indexMsgTimestamp, picks the newest segment whose first
//     record is valid and was stored at or before checkpoint.MinTimestamp()
//     (min(physic, logics) − 3 s; with MessageIndexSafe also ≤ the index
//     time), else the oldest, scans from it verifying every record (magic,
//     sizes, body CRC with CommitLog.CheckCRC) and re-dispatches each one.
//
// The scan stops at the first invalid record, zeroes the garbage after it and
// deletes later segments; the report names the segment file and offset
// (Recovery().Corruption) and it is logged. Consume-queue units and index
// entries at or past the recovered end are cut, records the consume queues
// lack are dispatched, and the queue table is rebuilt from the consume
// queues. Under async flush, records acknowledged but not yet flushed can be
// lost by a crash of the machine (and, on the pool and direct paths, by a
// crash of the process); under sync and group flush no acknowledged record is
// lost. The physicMsgTimestamp advances only past flushed records and the
// logicsMsgTimestamp only at a complete consume-queue flush, so the chosen
// segment is never after data the consume queues may lack.
//
// # Reads
//
// Consume-queue units are read with pread; records through the commit
// log's write path (mmap: copied from the mapping; pwrite and pool: pread or
// the pool buffer; direct: aligned O_DIRECT reads through a ristretto block
// cache the store creates, ReadCacheBytes). GetMessage verifies each
// record's body CRC and identity before serving it (VerifyCRCOnGet), so a
// corrupt record is reported, never served.
//
// # Cleaning (rocketmq-store.md §9)
//
// Every CleanInterval, CleanOnce deletes commit-log segments whose file
// mtime is older than FileReservedTime at the DeleteWhen hour or when disk
// use is above 75 %, any segment but the active one above 85 %, and marks the
// store not writable above 90 % until use is back at or below 85 %; then
// consume-queue and index files wholly below the log's new min offset go.
//
// # Concurrency
//
// Every exported method of Store may be called from any goroutine. Put,
// PutBatch, GetMessage, the lookups and CleanOnce run concurrently; Close
// waits for the ones in progress and makes later calls fail with ErrClosed
// (puts with SERVICE_NOT_AVAILABLE). Puts to one queue are serialized by its
// stripe lock only while appending. The dispatcher is the only writer of
// consume queues and index after Open.
package store

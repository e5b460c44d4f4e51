// Package index implements RocketMQ's message-key index (IndexFile and
// IndexService): hash files that map "topic#key" to the commit-log offsets of
// the messages carrying that key, for QUERY_MESSAGE.
//
// # On-disk format
//
// Files live in <root>/index/, named by their creation time as
// yyyyMMddHHmmssSSS (17 digits, local time; a name is bumped by a millisecond
// when it would not sort after the previous file's). Each file is
// preallocated to 40 + MaxHashSlots×4 + MaxIndexNum×20 bytes
// (420,000,040 with the defaults) and memory-mapped. All integers are
// big-endian.
//
//	header (40 bytes)
//	  0  int64 beginTimestamp   store time of the first entry
//	  8  int64 endTimestamp     store time of the last entry
//	 16  int64 beginPhyOffset   commit-log offset of the first entry
//	 24  int64 endPhyOffset     commit-log offset of the last entry
//	 32  int32 hashSlotCount    slots ever used
//	 36  int32 indexCount       next entry number; starts at 1 (entry 0 unused)
//	slots at 40: MaxHashSlots × int32, the newest entry number in the bucket
//	  (0 = empty)
//	entries at 40 + MaxHashSlots×4 + n×20:
//	  0  int32 keyHash    abs(Java "topic#key".hashCode()), 0 if abs overflows
//	  4  int64 phyOffset
//	 12  int32 timeDiff   (storeTimestamp − beginTimestamp) / 1000, clamped to
//	                      [0, MaxInt32]; 0 while beginTimestamp <= 0
//	 16  int32 prevIndex  previous entry in the bucket (0 ends the chain)
//
// A key goes to slot keyHash mod MaxHashSlots; an insert writes the entry at
// indexCount, links it to the slot's previous value, points the slot at it and
// updates the header. A new file is seeded with the previous file's
// endPhyOffset and endTimestamp as its begin and end values. brokerlab sets
// the begin fields before computing the first entry's timeDiff (RocketMQ
// computes it against the seed, so its first entry of a rolled file reads back
// shifted by the previous file's age); every entry then satisfies
// time ≈ beginTimestamp + timeDiff×1000.
//
// A file is full when indexCount reaches MaxIndexNum; Put then rolls to a new
// file and msyncs the full one in the background, calling OnFileFull with its
// endTimestamp (the store records it as the checkpoint's indexMsgTimestamp).
// Otherwise files are msynced only by Flush and Close.
//
// # Concurrency
//
// Service: Put is meant for one dispatcher goroutine; Put, TruncateFromPhy,
// DeleteBelowPhy, DeleteNewerThan and Close are serialized by a writer mutex.
// Query may run from any number of goroutines concurrently with Put: a new
// entry is written, then indexCount is published, then the slot is pointed at
// it, with atomic loads and stores of the count and of slot words, so a query
// that finds an entry through a slot or a chain always sees it complete.
// Queries hold a read lock on the file list; removing files
// (DeleteBelowPhy, DeleteNewerThan) and truncating entries (TruncateFromPhy)
// take it exclusively. Flush may run concurrently with everything.
package index

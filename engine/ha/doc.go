// Package ha is RocketMQ's classic (4.x) master–slave replication over plain
// TCP: a master's Service streams its commit log to every connected slave;
// a slave's Client appends the stream to its own store byte-identically
// (engine/store ReplicaAppend), whose dispatcher then builds the slave's
// consume queues and index, so the slave serves reads.
//
// Wire format (big-endian, no remoting frame):
//
//	slave → master, a report:  [int64 offset]
//	    the slave's commit-log end (the next byte it needs), sent when the
//	    link comes up, after every batch of frames it stored, and every
//	    HeartbeatInterval (haSendHeartbeatInterval, 5 s).
//	master → slave, a frame:   [int64 physical offset][int32 size][size bytes]
//	    raw commit-log bytes starting at that offset, cut anywhere, never
//	    spanning two segments, at most TransferBatchSize (32 KiB) each;
//	    size 0 is a heartbeat, sent after HeartbeatInterval without data.
//
// The master starts a slave's stream at the slave's first report: its own
// offset, or for an empty slave (0) the start of the master's last segment
// (RocketMQ) or, with Config.FullCopy, its first. A report that is not a
// place in the master's log — beyond its end (the master came back with a
// shorter log than its slave: an unflushed tail lost in a power cut, or an
// older copy), below its first segment, or inside a record — is refused:
// the master logs the error, counts the connection as refused (it never
// acknowledges a SYNC_MASTER put) and sends only heartbeats carrying its
// own end, from which the slave learns why (Client.Status reports
// ErrMasterBehind or ErrDiverged) and drops the link, retrying every
// ReconnectInterval. Classic HA truncates nothing and brokerlab does not
// either: a slave whose log is ahead of its master's holds messages the
// master does not, and cutting them would silently lose acknowledged
// sends; rebuilding the slave from an empty store is an operator's decision.
//
// A slave checks every frame against its own end (a frame for another
// offset drops the link, as RocketMQ's slave does) and the store verifies
// every record before serving it (engine/commitlog AppendRaw).
//
// SYNC_MASTER: Service.WaitForSlave(end) returns once some slave reported
// an offset ≥ end (RocketMQ 4.x GroupTransferService with
// push2SlaveMaxOffset), ErrSlaveTimeout after the timeout (FLUSH_SLAVE_TIMEOUT)
// and, before waiting, ErrSlaveNotAvailable when no slave is streaming or
// the best one is MaxGapNotInSync (256 MiB) or more behind end
// (SLAVE_NOT_AVAILABLE).
//
// Differences from RocketMQ, on purpose: a slave reports as soon as the link
// is up (RocketMQ waits for its 5 s timer), and every put wakes the
// master's writers (RocketMQ wakes them only for SYNC waits, so asynchronous
// replication of a trickle lags by up to 100 ms) — replication lag is a
// research variable here and should not be an artefact of polling.
//
// Concurrency: every exported method is safe for concurrent use. A Service
// runs one reader and one writer goroutine per slave connection; a Client
// runs one connection at a time, with a reader and a heartbeat goroutine.
package ha

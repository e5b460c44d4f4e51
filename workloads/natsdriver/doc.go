// Package natsdriver runs NATS JetStream in-process as a peer system for the
// load generators: it implements workloads.Driver and workloads.Source over
// an embedded nats-server (github.com/nats-io/nats-server/v2) with
// JetStream's file store, reached through nats.go's in-process connection
// (server option DontListen: no TCP listener; the client talks to the server
// over a net.Pipe from Server.InProcessConn).
//
// Dial is the same client connected over TCP to a server that runs
// elsewhere, such as a StartServer in a child process (so the server's CPU
// time can be measured apart from its clients'); StartServer takes the same
// Config and server options as Open.
//
// # Layout
//
// Each (topic, queue) is one JetStream stream, so the stream sequence is the
// queue offset plus one and Pull by offset is a direct lookup:
//
//	stream  <esc(topic)>~<queueID>    file storage, 1 replica, limits retention,
//	                                   discard old, MaxBytes = Config.MaxBytes,
//	                                   AllowDirect (batch direct get)
//	subject <esc(topic)>.<queueID>    the only subject of the stream
//
// esc keeps [A-Za-z0-9_-] and writes every other byte as %XX (upper-case
// hex), so any topic maps to a valid stream name and a literal subject, and
// distinct (topic, queue) pairs never share a stream. On disk the streams
// live in the server's layout under <Dir>/jetstream/$G/streams/<stream>/
// (8 MiB message blocks by default, see measurement.md N2).
//
// Streams of Config.Topics x [0, Config.Queues) are created (or updated) by
// Open; any other queue's stream is created on its first Send. Pull and
// MaxOffset on a queue without a stream see an empty queue.
//
// # Durability
//
// SyncAlways sets the server's sync_interval: always (fsync after every flush
// of pending bytes: the "sync" comparison). Otherwise the store fsyncs every
// SyncInterval (server default 2 min, first tick randomised: the "async
// periodic" comparison). See measurement.md N1, N4.
//
// # Send modes
//
// With AsyncWindow == 0, Send is a synchronous JetStream publish: it returns
// after the stream's PubAck (the workloads.Driver contract). With
// AsyncWindow = N > 0, Send publishes asynchronously and returns at once,
// except the Send that completes a window of N publishes (counted across all
// callers), which waits for all N acks and returns the first error among
// them. This is `nats bench --batch N`: a throughput mode. Latencies measured
// around Send are then not service times, and an error may be reported by a
// different Send than the failed message's. Flush waits for every
// outstanding async publish; Close flushes first.
//
// # Pull
//
// Pull(offset, max) is one batch direct get ($JS.API.DIRECT.GET.<stream>,
// {"seq": offset+1, "batch": max, "max_bytes": PullMaxBytes}); the answers
// come back on one shared wildcard inbox and are routed by the request's
// token. Messages removed by MaxBytes are skipped: the bodies start at the
// oldest kept message at or after offset, and next is the last returned
// sequence. The driver is not a workloads.ByteLocator: JetStream keeps no
// per-queue size index that would answer it cheaply.
//
// Concurrency: Send, Flush, Pull, MaxOffset and Stats are safe for
// concurrent use; Close is called once, after every other call returned
// (calls after Close fail with workloads.ErrClosed).
package natsdriver

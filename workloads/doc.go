// Package workloads is the load side of brokerlab: the seam between load
// generators and the system under test, and the layout of generated message
// bodies. Generators live in workloads/gen, distributions in
// workloads/randvar, latency histograms in workloads/hist, page-cache and
// memory probes in workloads/probe, and an in-memory fake system in
// workloads/fakedriver.
//
// # The seam
//
// A Driver is the system under test as producers see it (the in-process
// engine, the network broker through the remoting client, an embedded NATS
// JetStream peer, ...). Send returns when the system acknowledges the message
// under its own durability policy, so send-to-return is the service time.
// A Source is the read side: Pull reads a queue from a logical offset
// (message index in the queue, RocketMQ's consume-queue offset). A
// ByteLocator (optional) lets a lagging consumer start a number of bytes,
// rather than messages, behind the end.
//
// Concurrency contract: Send, Pull, MaxOffset and OffsetBytesBehind are
// called concurrently from many goroutines; Close once, after every call has
// returned. A Driver must not retain Message.Body after Send returns unless
// it owns a copy (generators allocate a fresh body per message, so the fake
// keeps it).
//
// # Payload layout
//
// Every generated body starts with a 24-byte header, little-endian:
//
//	offset size field
//	0      8    born     int64, wall-clock unix nanoseconds taken just before Send
//	8      8    seq      uint64, message index within its stream (0, 1, 2, ...);
//	                     the message's size, topic, queue, key, tag and filler are
//	                     a pure function of (seed, seq)
//	16     4    stream   uint32, generator id (several generators may share a queue)
//	20     4    delay_us uint32, send delay in µs (actual - intended send time;
//	                     0 in closed loop), saturating at 2^32-1
//	24     ...  filler   seeded pseudo-random bytes up to the chosen size
//
// Bodies are never shorter than HeaderSize: a size below 24 is rounded up.
// A consumer computes end-to-end latency as now - born (clocks of producer
// and consumer must agree: same host, or synchronised) and the
// coordinated-omission-free version as now - (born - delay_us).
package workloads

// Package robust holds brokerlab's reliability tests (issue 7). It has no
// API of its own: its tests drive the broker and the message store only
// through their public APIs (engine/broker, engine/store, engine/remoting
// over loopback TCP) and check what an operator relies on:
//
//   - fault injection at the broker: a put that meets a failed write, flush
//     or segment creation, a full disk or a slow flush gets the documented
//     response code, the broker stays up, earlier messages stay readable and
//     a restart recovers everything acknowledged (TestBrokerFault*);
//   - wire robustness: go test -fuzz targets for every processor's header
//     parsing (send, send v2 short names, batch, pull, heartbeat JSON body,
//     offset queries, consumer send-back), which must never panic and must
//     answer malformed input with a clean error code; seed corpora live in
//     testdata/fuzz/<FuzzName>/;
//   - load robustness: 1,000 concurrent loopback connections mixing valid
//     traffic and garbage (TestStress*), and stalled consumers;
//   - limits: every configured limit (frame size, body size, topic length,
//     properties length, connections, in-flight requests per connection)
//     accepted exactly at the limit and refused one past it (TestLimit*);
//   - the crash loop: scripts/crashloop.sh run for two cycles
//     (TestCrashLoopScript).
//
// GUARANTEES.md in this directory states, for every flush policy and write
// path, what an acknowledgement means, what a process crash and a power
// loss can lose, the limits, and which test demonstrates each line.
//
// Everything binds 127.0.0.1; every loop is bounded. Heavier variants run
// with -long or BROKERLAB_LONG=1.
package robust

package remoting

import "time"

// epoch anchors Nanotime: the monotonic clock reading at package start.
var epoch = time.Now()

// Nanotime is a monotonic clock in nanoseconds since the package started,
// never 0 (0 in a Timings field means "not taken"). Processors stamp the
// request's Timings with it so every instant of one request is on one clock.
func Nanotime() int64 { return int64(time.Since(epoch)) + 1 }

// NanotimeOf is t on the Nanotime clock (t must carry a monotonic reading,
// as time.Now's do, to be exact).
func NanotimeOf(t time.Time) int64 { return int64(t.Sub(epoch)) + 1 }

// Timings are the instants and durations of one request's way through the
// server, for the per-stage latency breakdown. They are taken only while the
// server has an Observer (Server.AddObserver); otherwise every field stays 0
// and no clock is read. Instants are Nanotime values:
//
//	FrameStart  the frame's length word was read (its first bytes arrived)
//	FrameRead   the whole frame was read
//	Decoded     the header was decoded (the request is dispatched)
//	Dequeued    a worker took the request (the remoting executor's, or a
//	            processor's own pool that re-stamps it, like the broker's
//	            send workers)
//	Replied     the response was handed to the connection's writer
//	Written     the response's frame was written to the socket
//
// The durations (ns) are filled by the processor from its store: how long
// the put waited for the append lock (including the queue's stripe lock),
// held it, and then waited for the flush policy. They lie between Dequeued
// and Replied; the rest of that interval is the processor's own work.
//
// Timings travel in the Command by value: taking them allocates nothing.
type Timings struct {
	FrameStart, FrameRead, Decoded, Dequeued, Replied, Written int64

	LockWait, LockHold, FlushWait int64
}

// Enabled reports whether the server is taking timings for this request
// (processors stamp only then).
func (t *Timings) Enabled() bool { return t.FrameStart != 0 }

// Complete reports whether every instant was taken (the request was
// dispatched, run by a worker, answered and its answer written).
func (t *Timings) Complete() bool {
	return t.FrameStart != 0 && t.FrameRead != 0 && t.Decoded != 0 && t.Dequeued != 0 && t.Replied != 0 && t.Written != 0
}

// Total is FrameStart → Written, 0 unless Complete.
func (t *Timings) Total() time.Duration {
	if !t.Complete() {
		return 0
	}
	return time.Duration(t.Written - t.FrameStart)
}

// Observation is one answered request as an Observer sees it.
type Observation struct {
	Code     int32 // the request's code
	Opaque   int32 // the request's opaque (the client's request id)
	RespCode int32 // the response's code
	Timings  Timings
}

// An Observer is told about every answered request of a server that has
// it, after the response was written to the socket (oneway requests, which
// are not answered, and responses whose write failed are not observed).
// Observe runs on the connection's writer goroutine: it must be quick and
// must not block, and must not keep o past the call.
type Observer interface {
	Observe(c *Conn, o *Observation)
}

// AddObserver adds o to the server's observers; with at least one the
// server takes Timings of every request. REQUIRES: called before Start.
func (s *Server) AddObserver(o Observer) {
	s.opts.observers = append(s.opts.observers, o)
}

// timed reports whether this connection takes timings.
func (c *Conn) timed() bool { return len(c.opts.observers) > 0 }

// observeWritten stamps Written on the batch's observed frames and tells
// the observers. Called by the writer after a successful write.
func (c *Conn) observeWritten(batch []outFrame) {
	now := int64(0)
	for i := range batch {
		o := &batch[i].obs
		if o.Timings.FrameStart == 0 {
			continue
		}
		if now == 0 {
			now = Nanotime()
		}
		o.Timings.Written = now
		for _, ob := range c.opts.observers {
			ob.Observe(c, o)
		}
	}
}

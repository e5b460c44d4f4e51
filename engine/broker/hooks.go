package broker

import (
	"encoding/binary"
	"net"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Hooks: RocketMQ's SendMessageHook (executeSendMessageHookBefore/After
// around every send) and ConsumeMessageHook-like after-pull hooks, and the
// per-stage latency breakdown built on remoting's request Timings.
//
// Hooks are installed before Start (AddSendHook, AddConsumeHook,
// RecordStages) and called on the goroutine serving the request: they must
// be quick and must not block, and must not keep the context past the call
// (contexts are pooled). With no hook installed a send or pull pays one
// length check.

// SendContext describes one send (SEND_MESSAGE, SEND_MESSAGE_V2,
// SEND_BATCH_MESSAGE) to the send hooks. Fields the broker has not learnt
// yet are zero: before the send, QueueID is the producer's choice (-1 = any)
// and Status, QueueOffset and Stages are unset.
type SendContext struct {
	Code          int32  // request code
	ProducerGroup string // the producer's group
	Topic         string
	QueueID       int32
	Bytes         int      // body bytes (a batch's encoded body)
	Msgs          int      // messages (1, or the batch's count once decoded)
	Remote        net.Addr // the producer's address (nil outside a connection)
	// After the send:
	Status      int32  // response code (protocol.RespSuccess, …)
	Remark      string // response remark
	QueueOffset int64  // the (first) message's queue offset when stored
	Stages      SendStages
}

// SendStages are the store's stages of a send, known after the put: lock
// wait (the queue's stripe lock and the commit log's append lock), lock
// hold and flush wait (see engine/store.PutResult). Zero for a store that
// does not report them (memstore) or a send refused before the put.
type SendStages struct {
	LockWait, LockHold, FlushWait time.Duration
}

// A SendHook sees every send request before and after it is processed.
type SendHook interface {
	SendBefore(sc *SendContext)
	SendAfter(sc *SendContext)
}

// ConsumeContext describes one answered pull to the consume hooks.
type ConsumeContext struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	Offset        int64    // the pull's requested offset
	Next          int64    // nextBeginOffset
	Msgs          int      // records returned
	Bytes         int      // response body bytes
	Status        int32    // response code
	Remote        net.Addr // the consumer's address (nil outside a connection)
}

// A ConsumeHook sees every answered pull.
type ConsumeHook interface {
	ConsumeAfter(cc *ConsumeContext)
}

// hookSet is the broker's installed hooks; written before Start only.
type hookSet struct {
	send    []SendHook
	consume []ConsumeHook
	stages  *StageRecorder
}

var (
	sendContextPool    = sync.Pool{New: func() any { return new(SendContext) }}
	consumeContextPool = sync.Pool{New: func() any { return new(ConsumeContext) }}
)

// AddSendHook installs h. REQUIRES: called before Start.
func (b *Broker) AddSendHook(h SendHook) { b.hooks.send = append(b.hooks.send, h) }

// AddConsumeHook installs h. REQUIRES: called before Start.
func (b *Broker) AddConsumeHook(h ConsumeHook) { b.hooks.consume = append(b.hooks.consume, h) }

// AddObserver adds a remoting observer to the broker's server (told about
// every answered request with its Timings). REQUIRES: called before Start.
func (b *Broker) AddObserver(o remoting.Observer) { b.server.AddObserver(o) }

// RecordStages makes the broker record the per-stage latency breakdown of
// every send (see StageRecorder) and returns the recorder; a second call
// returns the same one. REQUIRES: called before Start.
func (b *Broker) RecordStages() *StageRecorder {
	if b.hooks.stages == nil {
		b.hooks.stages = NewStageRecorder()
		b.server.AddObserver(b.hooks.stages)
	}
	return b.hooks.stages
}

// Stages returns the recorder RecordStages installed, or nil.
func (b *Broker) Stages() *StageRecorder { return b.hooks.stages }

// sendContext returns a pooled context for req when send hooks are
// installed, else nil (every method below accepts nil).
func (b *Broker) sendContext(conn *remoting.Conn, req *remoting.Command) *SendContext {
	if len(b.hooks.send) == 0 {
		return nil
	}
	sc := sendContextPool.Get().(*SendContext)
	*sc = SendContext{Code: req.Code, Bytes: len(req.Body), Msgs: 1, QueueID: -1}
	if conn != nil {
		sc.Remote = conn.RemoteAddr()
	}
	return sc
}

// sendBegin fills what the header tells and runs the before hooks.
func (b *Broker) sendBegin(sc *SendContext, h *protocol.SendMessageHeader) {
	if sc == nil {
		return
	}
	sc.ProducerGroup, sc.Topic, sc.QueueID = h.ProducerGroup, h.Topic, h.QueueID
	for _, hk := range b.hooks.send {
		hk.SendBefore(sc)
	}
}

// sendStored records a put's outcome: on sc for the hooks, and the store
// stages on req's Timings for the stage breakdown.
func (b *Broker) sendStored(sc *SendContext, req *remoting.Command, queueID int32, msgs int, res PutResult) {
	if req.Timings.Enabled() {
		req.Timings.LockWait = int64(res.LockWait)
		req.Timings.LockHold = int64(res.LockHeld)
		req.Timings.FlushWait = int64(res.FlushWait)
	}
	if sc == nil {
		return
	}
	sc.QueueID, sc.Msgs, sc.QueueOffset = queueID, msgs, res.QueueOffset
	sc.Stages = SendStages{LockWait: res.LockWait, LockHold: res.LockHeld, FlushWait: res.FlushWait}
}

// sendEnd runs the after hooks with the response and returns sc to the pool.
// A send refused before its header was read runs no hooks.
func (b *Broker) sendEnd(sc *SendContext, resp *remoting.Command) {
	if sc == nil {
		return
	}
	if sc.Topic != "" {
		if resp != nil {
			sc.Status, sc.Remark = resp.Code, resp.Remark
		}
		for _, hk := range b.hooks.send {
			hk.SendAfter(sc)
		}
	}
	*sc = SendContext{}
	sendContextPool.Put(sc)
}

// consumeDone runs the consume hooks for an answered pull.
func (b *Broker) consumeDone(conn *remoting.Conn, p *protocol.PullMessageHeader, resp *remoting.Command, next int64) {
	if len(b.hooks.consume) == 0 || resp == nil {
		return
	}
	cc := consumeContextPool.Get().(*ConsumeContext)
	*cc = ConsumeContext{ConsumerGroup: p.ConsumerGroup, Topic: p.Topic, QueueID: p.QueueID, Offset: p.QueueOffset, Next: next,
		Msgs: recordsIn(resp.Body), Bytes: len(resp.Body), Status: resp.Code}
	if conn != nil {
		cc.Remote = conn.RemoteAddr()
	}
	for _, hk := range b.hooks.consume {
		hk.ConsumeAfter(cc)
	}
	*cc = ConsumeContext{}
	consumeContextPool.Put(cc)
}

// unstampDequeued clears the remoting executor's Dequeued before a send is
// queued for a send worker: until a worker takes it, it is still waiting
// (a send answered SYSTEM_BUSY from the queue is then incomplete, not a
// send whose queue wait counts as processing).
func unstampDequeued(req *remoting.Command) { req.Timings.Dequeued = 0 }

// stampDequeued marks req as taken by a send worker: the executor stage of
// a send ends when the broker's send pool (not the remoting executor that
// queued it there) picks it up.
func stampDequeued(req *remoting.Command) {
	if req.Timings.Enabled() {
		req.Timings.Dequeued = remoting.Nanotime()
	}
}

// recordsIn counts the commit-log records concatenated in buf (each
// starts with its 4-byte big-endian TOTALSIZE); a malformed tail ends the
// count.
func recordsIn(buf []byte) int {
	n := 0
	for len(buf) >= 4 {
		size := int(binary.BigEndian.Uint32(buf))
		if size < 4 || size > len(buf) {
			break
		}
		buf = buf[size:]
		n++
	}
	return n
}

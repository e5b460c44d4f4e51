package broker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Remarks of the send path's SYSTEM_BUSY answers (Java's, for log greps).
const (
	remarkRejectRequest = "[REJECTREQUEST]system busy, start flow control for a while"
	remarkPCBusyClean   = "[PCBUSY_CLEAN_QUEUE]broker busy, start flow control for a while"
	remarkTimeoutClean  = "[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: %dms, size of queue: %d"
	remarkSendQueueFull = "[OVERLOAD]send queue full, start flow control for a while"
	remarkShuttingDown  = "broker is shutting down"
)

// sendTask is a send request waiting for a send worker.
type sendTask struct {
	conn     *remoting.Conn
	req      *remoting.Command
	enqueued time.Time
}

// sendQueue is the broker's send thread-pool queue: a bounded FIFO whose head
// the fast-failure sweep can inspect, which a channel cannot offer. Safe for
// concurrent use.
type sendQueue struct {
	capacity int
	mu       sync.Mutex
	nonEmpty *sync.Cond
	items    []sendTask // items[head:] are queued
	head     int
	closed   bool
}

func newSendQueue(capacity int) *sendQueue {
	q := &sendQueue{capacity: capacity}
	q.nonEmpty = sync.NewCond(&q.mu)
	return q
}

// push queues t; false when the queue is full or closed.
func (q *sendQueue) push(t sendTask) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.items)-q.head >= q.capacity {
		return false
	}
	q.items = append(q.items, t)
	q.nonEmpty.Signal()
	return true
}

// pop waits for a task; false once the queue is closed and empty.
func (q *sendQueue) pop() (sendTask, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.items) {
		if q.closed {
			return sendTask{}, false
		}
		q.nonEmpty.Wait()
	}
	t := q.popLocked()
	return t, true
}

// REQUIRES: q.mu held and the queue non-empty.
func (q *sendQueue) popLocked() sendTask {
	t := q.items[q.head]
	q.items[q.head] = sendTask{}
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return t
}

// expired removes the tasks at the head that were queued before deadline.
func (q *sendQueue) expired(deadline time.Time) (tasks []sendTask, left int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head < len(q.items) && q.items[q.head].enqueued.Before(deadline) {
		tasks = append(tasks, q.popLocked())
	}
	return tasks, len(q.items) - q.head
}

// drain removes every queued task.
func (q *sendQueue) drain() []sendTask {
	q.mu.Lock()
	defer q.mu.Unlock()
	var tasks []sendTask
	for q.head < len(q.items) {
		tasks = append(tasks, q.popLocked())
	}
	return tasks
}

// close wakes the workers; they finish the queue and exit.
func (q *sendQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.nonEmpty.Broadcast()
}

// enqueueSend is the processor of the send codes: it refuses at once while
// the page cache is busy, and otherwise queues the request for a worker.
func (b *Broker) enqueueSend(_ context.Context, conn *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	if b.store.OSPageCacheBusy() {
		b.flow.pcBusyRejected.Add(1)
		resp := remoting.NewResponse(protocol.RespSystemBusy, remarkRejectRequest)
		b.countOnewayRefused(req, resp)
		return resp, nil
	}
	unstampDequeued(req)
	if !b.sendQ.push(sendTask{conn: conn, req: req, enqueued: time.Now()}) {
		b.flow.queueFull.Add(1)
		resp := remoting.NewResponse(protocol.RespSystemBusy, remarkSendQueueFull)
		b.countOnewayRefused(req, resp)
		return resp, nil
	}
	return nil, remoting.ErrReplyLater
}

// sendWorker runs queued sends until the queue closes.
func (b *Broker) sendWorker() {
	for {
		t, ok := b.sendQ.pop()
		if !ok {
			return
		}
		stampDequeued(t.req)
		var resp *remoting.Command
		if waited := time.Since(t.enqueued); waited >= b.cfg.SendQueueMaxWait {
			b.flow.queueTimeouts.Add(1)
			resp = responsef(protocol.RespSystemBusy, remarkTimeoutClean, waited.Milliseconds(), 0)
		} else {
			resp = b.processSend(b.ctx, t.conn, t.req)
		}
		if resp != nil { // nil: answered by its sendOp (here, or by a waiter it was handed to)
			b.replySend(t.conn, t.req, resp)
			releaseSend(t.req, resp)
		}
	}
}

// fastFailureLoop is BrokerFastFailure: every FastFailureInterval it answers
// SYSTEM_BUSY to every queued send while the page cache is busy, and to the
// sends that waited SendQueueMaxWait.
func (b *Broker) fastFailureLoop() {
	t := time.NewTicker(b.cfg.FastFailureInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			for _, task := range b.sendQ.drain() {
				b.replySend(task.conn, task.req, remoting.NewResponse(protocol.RespSystemBusy, remarkShuttingDown))
			}
			return
		case now := <-t.C:
			if b.store.OSPageCacheBusy() {
				for _, task := range b.sendQ.drain() {
					b.flow.pcBusyCleaned.Add(1)
					b.replySend(task.conn, task.req, remoting.NewResponse(protocol.RespSystemBusy, remarkPCBusyClean))
				}
				continue
			}
			tasks, left := b.sendQ.expired(now.Add(-b.cfg.SendQueueMaxWait))
			b.flow.queueTimeouts.Add(uint64(len(tasks)))
			for _, task := range tasks {
				b.replySend(task.conn, task.req, responsef(protocol.RespSystemBusy, remarkTimeoutClean,
					now.Sub(task.enqueued).Milliseconds(), left))
			}
		}
	}
}

// processSend runs one send-class request and returns its response, or
// nil when it is answered elsewhere (single sends: sendOp.answer).
func (b *Broker) processSend(ctx context.Context, conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	switch req.Code {
	case protocol.ReqSendBatchMessage:
		sc := b.sendContext(conn, req)
		resp := b.sendBatch(ctx, conn, req, sc)
		b.sendEnd(sc, resp)
		return resp
	case protocol.ReqConsumerSendMsgBack:
		return b.consumerSendMsgBack(ctx, conn, req)
	default:
		op := b.newSendOp(ctx, conn, req)
		if resp := b.sendMessage(op); resp != nil { // nil: handed on with op
			op.answer(resp)
		}
		return nil // answered by op
	}
}

// releaseSend returns a send request's and its response's header maps to
// the remoting pools once the response is written: nothing in the send
// path keeps either (the request's header was parsed into strings that
// live in its header copy; Reply encoded the response). A single send's
// response map stays with its sendOp instead (sendOp.answer).
func releaseSend(req, resp *remoting.Command) {
	req.ReleaseExtFields()
	resp.ReleaseExtFields()
}

// replySend answers a send; a oneway send's refusal, which its producer
// never hears, is counted (OnewayRefused).
func (b *Broker) replySend(conn *remoting.Conn, req, resp *remoting.Command) {
	b.countOnewayRefused(req, resp)
	b.reply(conn, req, resp)
}

// countOnewayRefused counts resp when req is oneway and resp not SUCCESS:
// the producer never learns that its message was not stored.
func (b *Broker) countOnewayRefused(req, resp *remoting.Command) {
	if !req.IsOneway() || resp == nil || resp.Code == protocol.RespSuccess {
		return
	}
	if resp.Code == protocol.RespSystemBusy {
		b.flow.onewayBusy.Add(1)
	} else {
		b.flow.onewayOther.Add(1)
	}
}

// reply answers a request that returned ErrReplyLater.
func (b *Broker) reply(conn *remoting.Conn, req, resp *remoting.Command) {
	if err := conn.Reply(req, resp); err != nil {
		b.log.Debug("reply failed", "code", req.Code, "err", fmt.Errorf("broker: %w", err))
	}
}

// len is the number of queued sends.
func (q *sendQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// QueuedSends is the number of sends waiting for a send worker.
func (b *Broker) QueuedSends() int { return b.sendQ.len() }
